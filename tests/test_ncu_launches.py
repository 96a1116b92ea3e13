"""Launches of one name that differ are said so, --per-launch shows each, --kernel and
--exclude narrow (review 14d I). two.csv is built from output5.csv as the review did:
launch 1 = launch 0 with grid (10, 1, 1) and 10x the DRAM bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.ingest.ncu_files import load_ncu

GPP = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"


@pytest.fixture
def two(tmp_path) -> Path:
    src = GPP / "output5.csv"
    if not src.is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP} (CI lays ../shared beside the clone)")
    lines = src.read_text().splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = [line for line in lines[head + 1:] if line.startswith('"0"')]
    second = ['"1"' + r[3:].replace('"(65535, 1, 1)"', '"(10, 1, 1)"')
              .replace('"164,753,066,112"', '"1,647,530,661,120"') for r in rows]
    path = tmp_path / "two.csv"
    path.write_text("\n".join(lines[: head + 1] + rows + second) + "\n")
    return path


def test_summed_launches_that_differ_get_a_note(two):
    (k,) = load_ncu([str(two)]).kernels
    # launch 0: fp64 FLOP / 164,753,066,112 B = 6.64; launch 1 10x the bytes: 0.664
    flop = k.flop["fp64"] / 2
    assert flop / 164_753_066_112 == pytest.approx(6.64, rel=1e-3)
    assert k.calls == 2
    assert ("2 launches with grids (65535, 1, 1), (10, 1, 1) and AI 0.664-6.64 FLOP/B "
            "(DRAM) are summed into one point none of them ran at; --per-launch shows each"
            in k.meta["notes"])


def test_alike_launches_get_no_note():
    path = GPP / "output5.ncu-rep"
    if not path.is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP}")
    pytest.importorskip("ncu_report")
    # two launches of each kernel, same grids, AI within 1 %: summed without a word
    for k in load_ncu([str(path)]).kernels:
        assert k.calls == 2
        assert not any("summed into one point" in n for n in k.meta.get("notes", ()))


def test_per_launch_one_point_each(two, capsys):
    assert main(["ncu", str(two), "--on", "L4", "--per-launch", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    dram = {p["kernel"]: p for p in data["analysis"] if p["level"] == "DRAM"}
    assert set(dram) == {"sigma_gpp_gpu_34 #0", "sigma_gpp_gpu_34 #1"}
    assert dram["sigma_gpp_gpu_34 #0"]["ai"] == pytest.approx(6.64, rel=1e-3)
    assert dram["sigma_gpp_gpu_34 #1"]["ai"] == pytest.approx(0.664, rel=1e-3)
    assert dram["sigma_gpp_gpu_34 #0"]["bound"] == "compute"
    # launch 1's synthetic grid of 10 blocks leaves 48 of the L4's 58 SMs idle and it runs
    # under 80 % of its roof: latency since s21 (m1, r3 F6; x3 F2's 80 % line)
    assert dram["sigma_gpp_gpu_34 #1"]["bound"] == "latency"
    assert dram["sigma_gpp_gpu_34 #1"]["percent_of_roof"] < 80
    assert all(p["calls"] == 1 for p in dram.values())


def test_kernel_and_exclude_filters(capsys):
    rep = GPP / "output5.ncu-rep"
    if not rep.is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP} (CI lays ../shared beside the clone)")
    pytest.importorskip("ncu_report")
    assert main(["ncu", str(rep), "--exclude", "red$", "--json"]) == 0
    names = {p["kernel"] for p in json.loads(capsys.readouterr().out)["analysis"]}
    assert names == {"sigma_gpp_gpu_34"}
    assert main(["ncu", str(rep), "--kernel", "__red", "--json"]) == 0
    names = {p["kernel"] for p in json.loads(capsys.readouterr().out)["analysis"]}
    assert names == {"sigma_gpp_gpu_34_gpu__red"}


def test_filter_mistakes_are_clear(two, capsys):
    assert main(["ncu", str(two), "--kernel", "["]) != 0
    err = capsys.readouterr().err
    assert "--kernel '[' is not a regular expression" in err and "Traceback" not in err
    assert main(["ncu", str(two), "--kernel", "gemm"]) != 0
    assert "left no kernel of 1; the files hold: sigma_gpp_gpu_34" in capsys.readouterr().err


def test_per_launch_is_ncus_only(two, capsys):
    assert main(["rocprof", str(two), "--per-launch"]) != 0
    assert "no per-launch view" in capsys.readouterr().err

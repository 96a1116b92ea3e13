"""`rooflab report` and `rooflab plot` take `rooflab ncu`'s --kernel/--exclude (comma lists
too) and --per-launch; a summed kernel whose launches' occupancy differs says so; the note
that shares are of each kernel's own file is said once (round 27, F1).

launches.csv is written here by hand: the NERSC GPP recordings hold one or two launches of
each kernel, alike, and no --metrics CSV of them records occupancy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.ingest.ncu_files import load_ncu

GPP = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"
HEAD = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
        "Block Size", "Grid Size", "Device", "CC", "Section Name", "Metric Name",
        "Metric Unit", "Metric Value")
DFMA = "sm__sass_thread_inst_executed_op_dfma_pred_on.sum"
ACHIEVED = "sm__warps_active.avg.pct_of_peak_sustained_active"
THEORETICAL = "sm__maximum_warps_per_active_cycle_pct"
# (id, name, grid, dfma instructions, DRAM bytes, microseconds, achieved %, theoretical %)
LAUNCHES = (
    ("0", "axpy_kernel", "(1024, 1, 1)", "1,000,000,000", "1,000,000,000", "1,000", "40", "50"),
    ("1", "axpy_kernel", "(8, 1, 1)", "1,000,000,000", "1,000,000,000", "1,000", "20", "100"),
    ("2", "scale_kernel", "(1024, 1, 1)", "500,000,000", "4,000,000,000", "500", "45", "50"),
    ("3", "scale_kernel", "(1024, 1, 1)", "500,000,000", "4,000,000,000", "500", "45.5", "50"),
)


def _row(*cells: str) -> str:
    return ",".join(f'"{c}"' for c in cells)


@pytest.fixture
def launches(tmp_path) -> Path:
    lines = [_row(*HEAD)]
    for ident, name, grid, dfma, dram, us, got, most in LAUNCHES:
        head = (ident, "1", "app", "host", name, "1", "7", "(256, 1, 1)", grid, "0", "8.9",
                "Command line profiler metrics")
        for metric, unit, value in (("dram__bytes.sum", "byte", dram),
                                    ("gpu__time_duration.sum", "usecond", us),
                                    (DFMA, "inst", dfma), (ACHIEVED, "%", got),
                                    (THEORETICAL, "%", most)):
            lines.append(_row(*head, metric, unit, value))
    path = tmp_path / "launches.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _json(capsys, argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _gpp(name: str) -> Path:
    path = GPP / name
    if not path.is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP} (CI lays ../shared beside the clone)")
    return path


# --- 1. --kernel/--exclude/--per-launch on report and plot ---------------------------------

def test_report_kernel_and_exclude_keep_what_ncu_keeps(launches, capsys):
    argv = [str(launches), "--on", "L4", "--json", "--kernel", "kernel", "--exclude", "scale"]
    ncu = _json(capsys, ["ncu", *argv])
    report = _json(capsys, ["report", *argv])
    assert [k["name"] for k in report["kernels"]] == [k["name"] for k in ncu["kernels"]] \
        == ["axpy_kernel"]
    (k,) = report["kernels"]
    # both launches summed: 2 x 2 FLOP x 1e9 dfma = 4e9 FLOP over 2 x 1e9 B, in 2 ms
    assert k["calls"] == 2
    assert k["flop"]["fp64"] == pytest.approx(4e9)
    assert k["seconds"] == pytest.approx(2e-3)


def test_plot_kernel_comma_list_and_exclude(launches, capsys):
    data = _json(capsys, ["plot", str(launches), "--on", "L4", "--json",
                          "--kernel", "axpy,scale", "--exclude", "axpy"])
    assert [k["name"] for k in data["kernels"]] == ["scale_kernel"]
    # scale_kernel: 2 launches x 1e9 FLOP over 2 x 4e9 B: AI 0.25 at DRAM
    (dram,) = [p for p in data["analysis"] if p["level"] == "DRAM"]
    assert dram["ai"] == pytest.approx(0.25)


def test_comma_lists_split_outside_brackets_only():
    from rooflab.cli.options import patterns

    assert patterns(["gemm,conv", "red"]) == ("gemm", "conv", "red")
    assert patterns(["a{1,3}", "k<float, 2>", "[,;]x,y"]) == ("a{1,3}", "k<float, 2>",
                                                              "[,;]x", "y")
    assert patterns([r"a\,b"]) == (r"a\,b",)
    assert patterns(None) == ()


def test_ncu_takes_comma_lists_too(launches, capsys):
    data = _json(capsys, ["ncu", str(launches), "--on", "L4", "--json",
                          "--kernel", "axpy,scale"])
    assert sorted(k["name"] for k in data["kernels"]) == ["axpy_kernel", "scale_kernel"]


def test_nothing_left_is_the_ncu_verbs_error(launches, capsys):
    said = []
    for verb in ("ncu", "report", "plot"):
        assert main([verb, str(launches), "--on", "L4", "--kernel", "gemm", "--json"]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err
        said.append(err.strip())
    assert said[0] == said[1] == said[2] == (
        "error: --kernel/--exclude left no kernel of 2; the files hold: axpy_kernel, "
        "scale_kernel")


def test_kernel_filters_a_rooflab_kernel_file(tmp_path, capsys):
    path = tmp_path / "k.csv"
    path.write_text("name,flop,bytes,seconds,precision\n"
                    "gemm,2e12,1e9,0.01,fp32\ncopy,0,2e9,0.001,fp32\n")
    data = _json(capsys, ["report", str(path), "--on", "L4", "--json", "--exclude", "copy"])
    assert [k["name"] for k in data["kernels"]] == ["gemm"]


def test_report_per_launch_each_launch_its_own_occupancy(launches, capsys):
    data = _json(capsys, ["report", str(launches), "--on", "L4", "--json", "--per-launch",
                          "--kernel", "axpy"])
    got = {k["name"]: (k["meta"]["occupancy_achieved"], k["meta"]["occupancy_theoretical"],
                       k["calls"]) for k in data["kernels"]}
    assert got == {"axpy_kernel #0": (40.0, 50.0, 1), "axpy_kernel #1": (20.0, 100.0, 1)}


def test_plot_per_launch(launches, capsys):
    data = _json(capsys, ["plot", str(launches), "--on", "L4", "--json", "--per-launch"])
    assert sorted(k["name"] for k in data["kernels"]) == [
        "axpy_kernel #0", "axpy_kernel #1", "scale_kernel #2", "scale_kernel #3"]


def test_per_launch_needs_an_ncu_file(tmp_path, capsys):
    path = tmp_path / "k.csv"
    path.write_text("name,flop,bytes,seconds,precision\ngemm,2e12,1e9,0.01,fp32\n")
    for verb in ("report", "plot"):
        assert main([verb, str(path), "--on", "L4", "--per-launch", "--json"]) == 2
        err = capsys.readouterr().err
        assert "error: --per-launch splits the kernels of Nsight Compute files" in err
        assert "Traceback" not in err


def test_report_filters_a_recorded_report(capsys):
    pytest.importorskip("ncu_report")
    path = _gpp("output5.ncu-rep")
    data = _json(capsys, ["report", str(path), "--json", "--per-launch",
                          "--kernel", "sigma", "--exclude", "red"])
    # the report's two sigma_gpp_gpu_34 launches (IDs 0 and 2), each with its own
    # recorded achieved occupancy (sm__warps_active...pct_of_peak_sustained_active)
    got = {k["name"]: k["meta"]["occupancy_achieved"] for k in data["kernels"]}
    assert set(got) == {"sigma_gpp_gpu_34 #0", "sigma_gpp_gpu_34 #2"}
    assert got["sigma_gpp_gpu_34 #0"] == pytest.approx(41.6576, abs=1e-4)
    assert got["sigma_gpp_gpu_34 #2"] == pytest.approx(41.6575, abs=1e-4)


# --- 2. occupancy of summed launches -------------------------------------------------------

def test_summed_launches_with_other_occupancy_get_a_note(launches, capsys):
    kernels = {k.name: k for k in load_ncu([str(launches)]).kernels}
    axpy = kernels["axpy_kernel"]
    assert ("occupancy differs between its 2 launches (achieved 20.0-40.0 %, theoretical "
            "50.0-100.0 %): its occupancy and limiter are launch 0's; --per-launch shows each"
            in axpy.meta["notes"])
    assert axpy.meta["occupancy_achieved"] == 40.0   # the first launch's, as the note says
    # its two launches ran at one AI (2 x 1e9 FLOP / 1e9 B each): one figure, not '2-2'
    assert ("2 launches with grids (1024, 1, 1), (8, 1, 1) and AI 2 FLOP/B (DRAM) are summed"
            in " ".join(axpy.meta["notes"]))
    # 45 and 45.5 %: within OCC_SPREAD points, theoretical alike: summed without a word
    assert not any("occupancy" in n for n in kernels["scale_kernel"].meta.get("notes", ()))
    # and the terminal says it, naming the kernel
    assert main(["ncu", str(launches), "--on", "L4"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "axpy_kernel: occupancy differs between its 2 launches" in out


def test_alike_recorded_launches_get_no_occupancy_note():
    pytest.importorskip("ncu_report")
    # two launches of each kernel, achieved 41.6576 / 41.6575 % and 16.5438 / 16.5428 %
    for k in load_ncu([str(_gpp("output5.ncu-rep"))]).kernels:
        assert k.calls == 2
        assert not any("occupancy" in n for n in k.meta.get("notes", ()))


# --- 3. the own-file share note once ------------------------------------------------------

def test_own_file_share_note_said_once(capsys):
    files = [str(_gpp("output4.csv")), str(_gpp("output5.csv"))]
    assert main(["ncu", *files, "--json"]) == 0
    text = capsys.readouterr().out
    assert text.count("share is of each kernel's own file") == 1
    data = json.loads(text)
    # in the import notes, where `rooflab ncu --json` has listed it; no longer in "notes" too
    assert any(n.startswith("share is of each kernel's own file: the 2 files")
               for n in data["import_notes"])
    assert main(["ncu", *files]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.count("share is of each kernel's own file") == 1
    assert "note: share is of each kernel's own file: the 2 files are separate" in out


def test_filtered_to_kernel_file_kernels_without_a_roof_says_why(launches, tmp_path, capsys):
    path = tmp_path / "k.csv"
    path.write_text("name,flop,bytes,seconds,precision\ngemm,2e12,1e9,0.01,fp32\n")
    # launches.csv names no device (Device '0') and records no peaks: only its kernels' best
    # rates could make a roof, and --kernel gemm kept none of them
    assert main(["report", str(path), str(launches), "--kernel", "gemm"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert err.startswith("error: no roof to draw against or judge by")
    assert "--kernel/--exclude kept none of the profiler files' kernels" in err
    # with a roof, the kernel file's gemm alone is reported
    data = _json(capsys, ["report", str(path), str(launches), "--on", "L4", "--json",
                          "--kernel", "gemm"])
    assert [k["name"] for k in data["kernels"]] == ["gemm"]

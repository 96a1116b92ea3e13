"""Session 21 h2: two ncu round-trip gaps.

(1) `rooflab ncu FILE -o k.csv` wrote no kernel meta, so `rooflab report k.csv` lost the
no-FMA ceiling (meta fma_share) and the occupancy and grid figures (meta occupancy_*,
grid, block, sms): NERSC GPP's main kernel was told to reach 80 % of the roof, not the
73 % its FMA share allows, and the 4-block reduction read memory-bound ("coalesce
accesses") where `report output1.ncu-rep` says latency-bound ("launch at least one block
per SM"). The CSV now carries them as flat columns, read back into the same meta.
(2) review x2/m6 F9: a kernel file judged `--on A100` had no meta sms, so the tensor-core
check's wave bound (64 tiles of 128 x 128 on 108 SMs: 59 %) never applied; `report`
now gives kernels with a grid or a GEMM shape the catalog GPU's SM count, as `rooflab ncu
--on` does.
"""

from __future__ import annotations

import json

import pytest
from conftest import gpp_recording

from rooflab.cli.main import main
from rooflab.cli.profiled import BANDWIDTH_COLUMNS, COLUMNS, csv_table
from rooflab.files import csv_text
from rooflab.ingest.kernelfile_csv import kernels_from_csv
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel

GPU = "NVIDIA GeForce RTX 4060 Laptop GPU"   # the GPP recordings' device (24 SMs)


def _json(capsys, args: list[str]) -> dict:
    assert main(args) == 0, args
    return json.loads(capsys.readouterr().out)


def _round_trip(capsys, tmp_path, recording) -> tuple[dict, dict, list[str]]:
    """(report X --json, report k.csv --json, k.csv's header) with k.csv from ncu X -o."""
    out = tmp_path / "k.csv"
    assert main(["ncu", str(recording), "-o", str(out)]) == 0
    capsys.readouterr()
    direct = _json(capsys, ["report", str(recording), "--on", GPU, "--json"])
    back = _json(capsys, ["report", str(out), "--on", GPU, "--json"])
    return direct, back, out.read_text().splitlines()[0].split(",")


def _advice(doc: dict, kernel: str) -> dict:
    return next(d for d in doc["diagnosis"] if d["kernel"] == kernel)


def test_ncu_rep_csv_reads_back_with_the_same_advice(capsys, tmp_path):
    direct, back, header = _round_trip(capsys, tmp_path, gpp_recording("output1.ncu-rep"))
    assert back["diagnosis"] == direct["diagnosis"]
    shared = COLUMNS + BANDWIDTH_COLUMNS
    assert header[len(shared):] == [
        "source", "grid", "block", "sms", "occupancy_theoretical", "occupancy_achieved",
        "occupancy_limiter", "occupancy_limit_blocks", "sm_clock_hz", "cc", "device",
        "fma_share_fp64",
        "flop_fp64"]
    main_k = _advice(back, "sigma_gpp_gpu_34")
    # this recording's FMA share of fp64 add/mul/fma: s = 0.4597, (1 + 0.46) / 2 = 73 %
    raise_occ = next(a for a in main_k["advice"] if a["action"].startswith("raise occupancy"))
    assert "reach 73 % of the roof (the no-FMA ceiling" in raise_occ["assumption"]
    red = _advice(back, "sigma_gpp_gpu_34_gpu__red")
    # old: memory-bound, "coalesce accesses" first: 4 blocks on 24 SMs is 4 / 24 = 17 %
    assert red["bound"] == "latency"
    assert red["advice"][0]["action"].startswith("launch at least one block per SM")
    text = json.dumps(red)
    assert "grid of 4 blocks x 256 threads on 24 SMs: 16.7 % of SMs get a block" in text
    assert "achieved occupancy 16.5 % of a theoretical 100.0 % (limit: warps per SM" in text
    meta = next(k for k in back["kernels"] if k["name"] == "sigma_gpp_gpu_34")["meta"]
    assert meta["grid"] == "(65535, 1, 1)" and meta["block"] == "(128, 1, 1)"
    assert meta["sms"] == 24 and meta["occupancy_limiter"] == "registers"
    assert meta["fma_share_fp64"] == pytest.approx(0.4597, abs=1e-4)


def test_ncu_csv_export_reads_back_with_its_fma_ceiling(capsys, tmp_path):
    direct, back, header = _round_trip(capsys, tmp_path, gpp_recording("output5.csv"))
    assert back["diagnosis"] == direct["diagnosis"]
    # a CSV export has no occupancy section: only what it recorded gets a column
    assert header[len(COLUMNS + BANDWIDTH_COLUMNS):] == [
        "source", "grid", "block", "sm_clock_hz", "cc", "fma_share_fp64",
        "flop_fp64"]
    words = json.dumps(_advice(back, "sigma_gpp_gpu_34"))
    # s = 0.508 (this export's counts): (1 + 0.51) / 2 = 75 % (old: no FMA words at all)
    assert "this mix tops out at (1 + 0.51) / 2 = 75 % of the peak" in words


ROOF = Roof(name="gpu", compute=[Ceiling(1e13, precision="fp32")],
            memory=[Ceiling(1e12, level="DRAM")])


def test_csv_meta_columns_read_back_as_the_profilers_meta():
    k = Kernel(name="red", flop={"fp32": 1e6}, bytes={"DRAM": 4e6}, seconds=1e-4,
               meta={"source": "ncu", "grid": "(4, 1, 1)", "block": "(256, 1, 1)",
                     "sms": 24, "occupancy_achieved": 16.5, "occupancy_limit_blocks": 6.0,
                     "occupancy_limiter": "warps per SM (block size)",
                     "fma_share": {"fp32": 0.25}, "pipe_busy": {"lsu": 12.0, "fma": 30.0},
                     "notes": ["L2 bytes from x"], "launches": 1})
    plain = Kernel(name="copy", flop={}, bytes={"DRAM": 1e6}, seconds=1e-5)
    rows, columns = csv_table(analyze(ROOF, [k, plain]))
    assert columns[len(COLUMNS + BANDWIDTH_COLUMNS):] == (
        "source", "grid", "block", "sms", "occupancy_achieved", "occupancy_limiter",
        "occupancy_limit_blocks", "fma_share_fp32", "pipe_busy_lsu", "pipe_busy_fma",
        "flop_fp32")
    text = csv_text(rows, columns)
    assert ",ncu,4x1x1,256x1x1,24,16.5,warps per SM (block size),6.0,0.25,12.0,30.0," in text
    back = {x.name: x for x in kernels_from_csv(text)}
    meta = back["red"].meta
    assert meta["grid"] == "(4, 1, 1)" and meta["block"] == "(256, 1, 1)"
    assert meta["sms"] == 24 and isinstance(meta["sms"], int)   # grid advice takes an int
    assert meta["pipe_busy"] == {"fma": 30.0, "lsu": 12.0}
    assert list(meta["pipe_busy"]) == ["fma", "lsu"]           # busiest first, as ncu's
    assert meta["fma_share_fp32"] == 0.25 and meta["source"] == "ncu"
    assert "copy" in back and "sms" not in back["copy"].meta


def test_kernels_without_meta_keep_the_old_header():
    plain = Kernel(name="copy", flop={"fp32": 1e6}, bytes={"DRAM": 1e6}, seconds=1e-5,
                   meta={"notes": ["x"], "file": "a.json"})
    _, columns = csv_table(analyze(ROOF, [plain]))
    assert columns == COLUMNS + BANDWIDTH_COLUMNS + ("flop_fp32",)


GEMM = {"name": "gemm_1024", "flop": {"fp16": 2.147483648e9}, "bytes": {"DRAM": 6.291456e6},
        "seconds": 0.000511, "meta": {"op": "matmul",
                                      "shape": {"m": 1024, "n": 1024, "k": 1024}}}


def test_kernel_file_on_a100_gets_the_wave_bound(capsys, tmp_path):
    path = tmp_path / "g.json"
    path.write_text(json.dumps({"schema_version": 1, "kernels": [GEMM]}))
    doc = _json(capsys, ["report", str(path), "--on", "A100", "--json"])
    (k,) = doc["kernels"]
    assert k["meta"]["sms"] == 108 and k["meta"]["sms_source"] == "catalog: --on A100"
    check = _advice(doc, "gemm_1024")["advice"][0]
    assert check["action"].startswith("check that it runs on tensor cores")
    # 1024 x 1024 in 128 x 128 tiles: 64 tiles, one wave on 108 SMs fills 64 / 108 = 59 %
    assert "64 output tiles of 128x128 on 108 SMs (catalog: --on A100) keep 59 %" in \
        check["detail"]
    assert "reach 47 % of the roof (80 % x the tile bound)" in check["assumption"]
    # 2.147 GFLOP at 0.8 x 64/108 of 312 TFLOP/s, plus the 5 us launch floor (old: 37.56x
    # at 80 % of the peak, no wave bound)
    new = 2.147483648e9 / (312e12 * 0.8 * 64 / 108) + 5e-6
    assert check["new_seconds"] == pytest.approx(new, rel=1e-9)
    assert check["speedup"] == pytest.approx(0.000511 / new, rel=1e-9)   # 26.18x


def test_sm_count_left_out_where_it_bounds_nothing():
    from rooflab.ingest.profile_import import kernels_with_sm_count

    g = Kernel(name="gemm", flop={"fp16": 2.1e9}, bytes={"DRAM": 6.3e6},
                    seconds=5e-4, meta={"op": "matmul", "shape": {"m": 1024, "n": 1024}})
    # 64 tiles on the H100's 132 SMs bound it too (48 %); a CPU has no SM count, and a
    # profile path is no catalog name: the kernel stays as it was
    (h100,) = kernels_with_sm_count([g], "H100")
    assert h100.meta["sms"] == 132
    for on in ("EPYC 9654", "/no/such/profile.json", None):
        (same,) = kernels_with_sm_count([g], on)
        assert same is g
    # a shape without m and n gets no count
    odd = g.with_(meta={"shape": {"k": 1024}})
    assert kernels_with_sm_count([odd], "H100")[0] is odd


def test_a_profile_file_named_like_a_gpu_gives_no_catalog_count(tmp_path, monkeypatch):
    from rooflab.ingest.profile_import import kernels_with_sm_count

    g = Kernel(name="gemm", flop={"fp16": 2.1e9}, bytes={"DRAM": 6.3e6}, seconds=5e-4,
               meta={"op": "matmul", "shape": {"m": 1024, "n": 1024}})
    # the catalog's fuzzy matcher reads 'h100.json' as the H100 SXM (132 SMs); a file
    # measured on an H100 PCIe (114) would get the wrong count: a file gives none
    profile = tmp_path / "h100.json"
    profile.write_text("{}")
    assert kernels_with_sm_count([g], str(profile))[0] is g
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert kernels_with_sm_count([g], "h100.json")[0].meta["sms"] == 132   # no such file

"""benchmarks/gpu_check.py as the device machine runs it, dry-run on PyTorch's CPU device,
with plotly and ncu_report made unimportable (the device machine has neither)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "gpu_check.py"
# Block the packages the device machine lacks, then run the script as __main__.
RUNNER = ("import runpy, sys; sys.modules['plotly'] = None; sys.modules['ncu_report'] = None; "
          "sys.argv = [sys.argv[1]] + sys.argv[2:]; "
          "runpy.run_path(sys.argv[0], run_name='__main__')")


def test_gpu_check_dry_run_on_the_cpu_device(tmp_path):
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OMP_NUM_THREADS": "1",
           "MPLBACKEND": "Agg"}
    run = subprocess.run([sys.executable, "-c", RUNNER, str(SCRIPT), str(out), "--device", "cpu",
                          "--quick", "--cli"], env=env, capture_output=True, text=True, timeout=120,
                         cwd=REPO)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    # The table comes last; its checks say n/a where the H200 targets do not apply.
    tail = run.stdout.strip().splitlines()
    assert tail[0].startswith("== rooflab GPU check: PyTorch CPU device")
    assert tail[-1].startswith("total ")
    assert any("copy >= 4.2 TB/s" in line and "[n/a ]" in line for line in tail)
    assert any(line.startswith("matmul_bf16_128") for line in tail)
    report = json.loads((out / "gpu_check.json").read_text())
    assert report["errors"] == {}
    assert {r["kernel"] for r in report["reference"]} == {
        "matmul_bf16_128", "copy_fp32_4MiB", "softmax_bf16_256x1024"}
    matmul = next(r for r in report["reference"] if r["kernel"] == "matmul_bf16_128")
    assert matmul["flop"] == 2 * 128 ** 3 and matmul["ai"] == pytest.approx(128 / 3)
    assert {c["status"] for c in report["checks"]} == {"n/a", "info"}
    assert report["profile"]["measured"]["compute"]
    assert (out / "profile.json").stat().st_size > 1000
    assert (out / "roofline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert report["probe_wall_s"] > 0
    # The user's command ran in a fresh process and wrote its profile.
    assert any(line.startswith("[n/a ] `rooflab probe --quick` <= 20 s: exit 0") for line in tail)
    assert report["cli_probe"]["rc"] == 0 and report["cli_probe"]["ceilings"] >= 2
    # ... twice: first with an empty Triton cache (a first run, reported), then warm.
    assert report["cli_probe"]["cold"]["rc"] == 0
    assert any(line.startswith("[info] `rooflab probe --quick`, empty Triton cache: exit 0")
               for line in tail)
    assert (out / "probe_quick_cold.json").exists()
    assert json.loads((out / "probe_quick.json").read_text())["measured"]["memory"]


def _load_script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _h200_profile(copy, bf16, l2=True, above=False):
    from rooflab.hardware.profile import MachineProfile
    from rooflab.model.ceiling import Ceiling, Roof
    from rooflab.probe.gpu import compare_to_nominal

    def m(value, **kw):
        return Ceiling(value=value, provenance="measured", samples=(value,), method="test",
                       **kw)

    nominal = Roof("NVIDIA H200 SXM", compute=(Ceiling(989.5e12, precision="bf16",
                                                        unit="tensor"),),
                   memory=(Ceiling(4.8e12, level="DRAM"),))
    memory = (m(copy, level="DRAM"),) + ((m(9e12, level="L2"),) if l2 else ())
    measured = Roof("NVIDIA H200", kind="measured", overhead_s=4e-6, memory=memory,
                    compute=(m(1.2e15 if above else bf16, precision="bf16", unit="tensor"),))
    measured, rows = compare_to_nominal(measured, nominal)
    plateaus = {"L2": {"first_bytes": 4 * 2**20, "last_bytes": 36 * 2**20,
                       "bytes_per_s": 9e12, "points": 9}} if l2 else {}
    extras = {"gpu": {"nominal_checks": rows, "sweep": {"main": {"plateaus": plateaus}},
                      "overheads": {"torch_tiny_kernel_back_to_back_s": 4e-6}}}
    return MachineProfile(host={"name": "NVIDIA H200", "backend": "cuda"}, nominal=nominal,
                          measured=measured, extras=extras)


def test_h200_targets_pass_and_fail_on_synthetic_profiles():
    gc = _load_script()
    ok = gc.checks(_h200_profile(4.31e12, 7.8e14), [], 35.0, "default", [])
    assert [(name.split(" ")[0], status) for name, status, _ in ok] == [
        ("Triton", "PASS"), ("copy", "PASS"), ("bf16", "PASS"), ("measured", "PASS"),
        ("L2", "PASS"), ("probe", "PASS"), ("reference", "PASS")]
    bad = dict((name.split(" ")[0], (status, detail)) for name, status, detail in gc.checks(
        _h200_profile(4.1e12, 7.5e14, l2=False), [], 75.0, "default", ["copy_kernel: x"]))
    assert bad["copy"] == ("FAIL", "4.1 TB/s") and bad["bf16"][0] == "FAIL"
    assert bad["L2"][0] == "FAIL" and bad["probe"] == ("FAIL", "75.0 s")
    assert bad["Triton"] == ("FAIL", "copy_kernel: x")
    placed = [{"kernel": "matmul_bf16_8192", "percent_of_roof": 104.0},
              {"kernel": "copy_fp32_1024MiB", "percent_of_roof": 112.0}]
    cli = {"rc": 0, "wall_s": 24.5, "probe_s": 17.0, "ceilings": 12, "stderr_tail": ""}
    more = dict((name.split(" ")[0], (status, detail)) for name, status, detail in gc.checks(
        _h200_profile(4.31e12, 7.8e14), placed, 35.0, "default", [], cli))
    assert more["reference"] == ("FAIL", "copy_fp32_1024MiB 112 %")
    assert more["`rooflab"] == ("FAIL", "exit 0, 24.5 s wall (probe 17.0 s), 12 ceilings")
    cold = {"rc": 0, "wall_s": 31.0, "probe_s": 26.5}
    first = gc.checks(_h200_profile(4.31e12, 7.8e14), [], 35.0, "default", [],
                      {**cli, "wall_s": 12.0, "cold": cold})
    assert first[-2][1] == "PASS"
    assert first[-1] == ("`rooflab probe --quick`, empty Triton cache", "info",
                         "exit 0, 31.0 s wall (probe 26.5 s)")
    flagged = dict((name.split(" ")[0], (status, detail)) for name, status, detail in gc.checks(
        _h200_profile(4.3e12, 0, above=True), [], 30.0, "quick", None))
    assert flagged["measured"] == ("FAIL", "above: bf16 tensor (flagged)")
    assert "Triton" not in flagged


def test_table_shows_ratio_to_nominal_and_flags():
    gc = _load_script()
    p = _h200_profile(4.3e12, 0, above=True)
    text = gc.table(p, [], gc.checks(p, [], 30.0, "default", []), 61.0)
    lines = text.splitlines()
    bf16 = next(line for line in lines if line.startswith("bf16 tensor"))
    assert "1.2 PFLOP/s" in bf16 and "990 TFLOP/s" in bf16 and "1.21" in bf16
    assert bf16.endswith("!")                       # the above-nominal warning
    dram = next(line for line in lines if line.startswith("DRAM"))
    assert "4.3 TB/s" in dram and "0.90" in dram
    assert lines[-1] == "total 61.0 s"

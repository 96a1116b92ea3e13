"""benchmarks/gpu_check.py's CPU dry run rehearses the Triton path under TRITON_INTERPRET=1
(review r4 F2), says in one line when this Triton's interpreter cannot run here, and keeps
a gap before a four-digit spread in its table (review r4 F3)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gpu_check_script import load_gpu_check, tiny_cpu_sizes

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "gpu_check.py"


def _load_script():
    return load_gpu_check("gpu_check_rehearsal")


# The script as `python SCRIPT ARGS...` runs it, with two timing knobs at their least: one
# call (not 5) to estimate a call's time before the timed ones, and the smallest cache flush
# (8 MiB, not 2x the host's L3, overwritten before every timed call). Neither changes which
# stages run, their sizes or what they check; under the interpreter each FMA launch is ~1 s.
_FEWER_TIMED_CALLS = """
import runpy, sys, time
import rooflab.probe.gpu as gpu
from rooflab.probe.gpu import timing
timing.ESTIMATE_CALLS = 1
gpu._make_timer = lambda torch, dev, host: timing.clock_timer(
    time.perf_counter, flush=timing.torch_flush(torch, dev, 0))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.fixture(scope="module", autouse=True)
def _interpreted_dry_run(request, tmp_path_factory):
    """The interpreted dry run (a minute of one core), started when this module starts so the
    in-process tests below run beside it on the second core; its test, last in the file,
    waits for it. Not started when that test is not selected (-k) or Triton is absent."""
    wanted = any(getattr(item, "module", None) is request.module and
                 getattr(item, "originalname", None) ==
                 "test_the_interpreted_dry_run_runs_the_triton_stages"
                 for item in request.session.items)
    if not wanted or importlib.util.find_spec("triton") is None:
        yield None
        return
    where = tmp_path_factory.mktemp("rehearsal")
    out = where / "out"
    # The caller's PYTHONPATH is kept after src (e.g. a numpy<2.3 put first for Triton 3.6).
    path = os.pathsep.join(p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg",
           "TRITON_INTERPRET": "1"}
    # files, not pipes: nobody reads until its test runs, and a full pipe would stall it
    with open(where / "stdout", "w") as stdout, open(where / "stderr", "w") as stderr:
        proc = subprocess.Popen([sys.executable, "-c", _FEWER_TIMED_CALLS, str(SCRIPT), str(out),
                                 "--device", "cpu", "--quick", "--no-cli"], env=env,
                                stdout=stdout, stderr=stderr, text=True, cwd=REPO)

    class Started:
        @staticmethod
        def result():
            proc.wait(timeout=240)
            return subprocess.CompletedProcess(proc.args, proc.returncode,
                                               (where / "stdout").read_text(),
                                               (where / "stderr").read_text()), out

    yield Started
    if proc.poll() is None:      # its test was deselected or failed before waiting
        proc.kill()
        proc.wait()


def test_without_the_variable_nothing_is_rehearsed():
    import torch

    gc = _load_script()
    assert gc._rehearsal().start(torch, torch.device("cpu"), environ={}) is None
    assert gc._rehearsal().start(torch, torch.device("cpu"),
                                 environ={"TRITON_INTERPRET": "0"}) is None


class _Kernels:
    """launch_read_sweep raising what Triton 3.6's interpreter raises under numpy >= 2.3."""

    def __init__(self, exc):
        self.exc = exc

    def launch_read_sweep(self, *args):
        raise self.exc


def test_triton_36_with_numpy_23_is_said_in_one_line():
    triton = pytest.importorskip("triton")
    import numpy
    import torch

    gr = _load_script()._rehearsal()
    dev = torch.device("cpu")
    exc = RuntimeError("InterpreterError: TypeError('only 0-dimensional arrays can be "
                       "converted to Python scalars')")
    line = gr.interpreter_problem(torch, dev, _Kernels(exc))
    assert line == (f"REHEARSAL SKIPPED: Triton {triton.__version__}'s interpreter fails "
                    f"under numpy {numpy.__version__} (>= 2.3 refuses int() of a 1-element "
                    f"array); install numpy<2.3 here to rehearse the Triton stages. The "
                    f"device's compiled kernels do not use the interpreter")
    assert "\n" not in line
    # Any other failure is left to the stages, which report it in their own rows.
    assert gr.interpreter_problem(torch, dev, _Kernels(RuntimeError("other"))) is None


def test_a_skipped_rehearsal_prints_its_line_first_and_the_dry_run_goes_on(
        tmp_path, monkeypatch, capsys):
    gc = _load_script()
    gr = gc._rehearsal()
    why = "REHEARSAL SKIPPED: Triton 3.6.0's interpreter fails under numpy 2.4.6 (...)"
    monkeypatch.setattr(gr, "start", lambda torch, dev, environ=None: {"triton": False,
                                                                        "why": why})
    # What is checked is the order of the lines and that the dry run finishes, not what it
    # measures: the probe runs at the tiny sizes of test_probe_gpu's interpreted probe.
    tiny_cpu_sizes(monkeypatch)
    assert gc.main([str(tmp_path), "--device", "cpu", "--quick", "--no-cli"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == why
    assert f"[info] Triton path rehearsed under TRITON_INTERPRET (CPU dry run): {why}" in out
    assert not any("Triton kernels agree" in x for x in out)     # no Triton stage ran
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    assert report["rehearsal"] == {"triton": False, "why": why}
    assert "preflight" not in report and "kernel_problems" not in report


def test_a_four_digit_spread_keeps_its_gap_from_the_ratio():
    # r4 F3: a ratio "-" and a spread of "12700.0%" read as "-12700.0%"; SI style since
    # s32 (rooflab.units.fmt_fraction): "12700.0 %", 9 characters, the column's width
    from rooflab.hardware.profile import MachineProfile
    from rooflab.model.ceiling import Ceiling, Roof

    gc = _load_script()
    # samples 1, 1, 128: (128 - 1) / median 1 = 12,700 %
    fp32 = Ceiling(value=128.0, precision="fp32", unit="vector", provenance="measured",
                   samples=(1.0, 1.0, 128.0), method="test")
    measured = Roof("host", kind="measured", compute=(fp32,), overhead_s=4e-6)
    p = MachineProfile(host={"name": "host"}, nominal=None, measured=measured,
                       extras={"gpu": {"overheads": {}}})
    lines = gc.table(p, [], [], 1.0).splitlines()
    header = lines[1]
    row = next(x for x in lines if x.startswith("fp32 vector"))
    assert row.split()[4:9] == ["-", "-", "12700.0", "%", "test"]
    # the spread ends where its header does
    assert row.index("12700.0 %") + len("12700.0 %") == header.index("spread") + len("spread")


def test_the_interpreted_dry_run_runs_the_triton_stages(_interpreted_dry_run):
    pytest.importorskip("triton", reason="triton is not installed here: the dry run has no "
                                         "Triton path to rehearse")
    run, out = _interpreted_dry_run.result()
    lines = run.stdout.strip().splitlines()
    if lines and lines[0].startswith("REHEARSAL SKIPPED"):
        # Triton 3.6 with numpy >= 2.3: said in one line, the rest of the dry run still ran.
        assert run.returncode == 0, run.stderr[-3000:]
        pytest.skip(lines[0])
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads((out / "gpu_check.json").read_text())
    assert report["errors"] == {}
    # The stages the CUDA run gives Triton ran, and agreed with torch.
    assert report["rehearsal"] == {"triton": True}
    assert report["preflight"] == [] and report["kernel_problems"] == []
    assert report["int8_gemm_check"] == {"problems": []}
    assert "[PASS] Triton kernels agree with torch: copy, triad, read sweep, fma, empty" in lines
    assert ("[PASS] Triton int8 GEMM agrees with fp64 (second int8 method): 256^3, "
            "B column-major") in lines
    assert any(x.startswith("[info] Triton path rehearsed under TRITON_INTERPRET") for x in lines)
    gpu = report["profile"]["extras"]["gpu"]
    assert gpu["errors"] == {}
    assert "triton" not in gpu["skipped"] and "vector_fma" not in gpu["skipped"]
    work = {k: v["work_per_call"] for k, v in gpu["measurements"].items()}
    # Tiny sizes: 256 KiB per stream array (65,536 fp32), 2 FMA iterations.
    programs = report["profile"]["host"]["multiprocessors"] * 32   # FMA_PROGRAMS_PER_SM
    for p in ("fp64", "fp32", "fp16"):                   # 2 FLOP x 2 iters x 8 chains
        assert work[f"fma_{p}"] == 2 * 2 * 8 * programs * 1024
    assert work["copy_triton"] == 2 * 4 * 65536 and work["triad_triton"] == 3 * 4 * 65536
    assert "triton_empty_kernel_back_to_back_s" in gpu["overheads"]
    # The quick mode's sweep (CUDA's 1.6 step: no L1 sweep), 8 to 48 KiB in 8 KiB blocks.
    assert sorted(gpu["sweep"]) == ["main"]
    sets = [p["working_set_bytes"] for p in gpu["sweep"]["main"]["points"]]
    assert sets[0] == 8 << 10 and max(sets) <= 48 << 10
    assert all(s % (8 << 10) == 0 for s in sets)

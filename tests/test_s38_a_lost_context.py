"""Session 38 A: the one H200 run survives a lost CUDA context.

An illegal memory access is sticky: every later CUDA call of the process raises it too.
Before: the probe ran every later stage (each failing with the same error, a traceback
each), a failing check_kernels or probe stage left gpu_check's later steps to fail the same
way, and nothing re-ran. Now: after a stage raises, one synchronize tells a lost context
from an ordinary failure; the later stages are skipped with the reason, `rooflab probe`
says which stage lost it and how to run without it (ROOFLAB_GPU_SKIP_STAGES), and
gpu_check.py runs itself again once, in a fresh process, without that stage.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from cli_inproc import one_line_error, run_cli
from gpu_check_script import load_gpu_check, tiny_cpu_sizes

from rooflab.errors import InputError

ILLEGAL = "CUDA error: an illegal memory access was encountered"
STAGES = ["compute: matmul", "compute: vector", "memory: stream", "memory: sweep",
          "memory: host", "overhead"]


class AcceleratorError(RuntimeError):
    """torch.AcceleratorError's shape (a RuntimeError, torch >= 2.8)."""


def _fake_cuda(sync_error: Exception | None):
    """A torch whose device guard does nothing and whose synchronize raises `sync_error`."""
    calls = []

    def synchronize(dev):
        calls.append(dev)
        if sync_error is not None:
            raise sync_error
    cuda = SimpleNamespace(device=lambda dev: contextlib.nullcontext(), synchronize=synchronize)
    return SimpleNamespace(cuda=cuda), calls


def _stages(monkeypatch, failing: str, error: Exception, sync_error: Exception | None):
    """_run_stages on a fake CUDA device, `failing` raising `error`: (results, errors,
    skipped, the stages that ran, say.lost, synchronize's calls)."""
    import rooflab.probe.gpu as gpu
    from rooflab.probe.gpu import compute, memory, overhead

    ran = []

    def step(name, value):
        def run(ctx):
            ran.append(name)
            if name == failing:
                raise error
            return value
        return run
    for mod, attr, name, value in (
            (compute, "matmul_peaks", "compute: matmul", ["mm"]),
            (compute, "vector_peaks", "compute: vector", ["fma"]),
            (memory, "stream", "memory: stream", ["copy"]),
            (memory, "cache_sweep", "memory: sweep", (["L2"], {"main": {}})),
            (memory, "host_transfers", "memory: host", ["h2d"]),
            (overhead, "overheads", "overhead", (5e-6, {}))):
        monkeypatch.setattr(mod, attr, step(name, value))
    torch, syncs = _fake_cuda(sync_error)
    ctx = SimpleNamespace(skipped={})
    say = gpu._StageProgress(None)
    results, errors = gpu._run_stages(torch, SimpleNamespace(type="cuda", index=0), ctx, say)
    return results, errors, ctx.skipped, ran, say.lost, syncs


def test_a_sticky_error_skips_the_later_stages_with_the_reason(monkeypatch):
    """compute: vector raises the illegal access and the synchronize after it raises it
    again (AcceleratorError): the 4 later stages are not run, each skipped with "CUDA
    context lost in compute: vector: CUDA error: ...; a fresh process is needed", their
    results empty; `errors` keeps the one real traceback; one synchronize was asked."""
    results, errors, skipped, ran, lost, syncs = _stages(
        monkeypatch, "compute: vector", RuntimeError(f"Triton Error [CUDA]: {ILLEGAL[12:]}"),
        AcceleratorError(f"{ILLEGAL}\nCUDA kernel errors might be asynchronously reported"))
    assert ran == ["compute: matmul", "compute: vector"]
    assert list(errors) == ["compute: vector"] and "Triton Error [CUDA]" in errors[
        "compute: vector"]
    reason = f"CUDA context lost in compute: vector: {ILLEGAL}; a fresh process is needed"
    assert skipped == {s: reason for s in STAGES[2:]}
    assert lost == ("compute: vector", ILLEGAL) and len(syncs) == 1
    assert results["compute: matmul"] == ["mm"] and results["memory: stream"] == []
    assert results["memory: sweep"] == ([], {}) and results["overhead"] == (None, {})


def test_an_ordinary_error_keeps_the_later_stages_running(monkeypatch):
    """memory: stream raises ValueError and the device still answers its synchronize: all 6
    stages ran, as before; nothing skipped, nothing lost. A synchronize that raises a
    non-CUDA error (an OOM's words) is no lost context either."""
    results, errors, skipped, ran, lost, _ = _stages(
        monkeypatch, "memory: stream", ValueError("bad size"), None)
    assert ran == STAGES and list(errors) == ["memory: stream"]
    assert skipped == {} and lost is None and results["overhead"] == (5e-6, {})
    *_, ran, lost, _ = _stages(monkeypatch, "memory: stream", RuntimeError(ILLEGAL),
                               RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert ran == STAGES and lost is None


def test_the_cuda_error_words_and_the_cpu_device():
    from rooflab.probe.gpu.lost_context import context_lost, looks_like_cuda_error

    assert looks_like_cuda_error(AcceleratorError("anything"))
    assert looks_like_cuda_error(RuntimeError("CUDA driver error: CUDA_ERROR_ILLEGAL_ADDRESS"))
    assert not looks_like_cuda_error(RuntimeError("CUDA out of memory. Tried to allocate"))
    assert not looks_like_cuda_error(ValueError("shape mismatch"))
    torch, syncs = _fake_cuda(RuntimeError(ILLEGAL))
    # PyTorch's CPU device has no context to lose: not even asked
    assert context_lost(torch, SimpleNamespace(type="cpu")) is None and syncs == []
    assert context_lost(torch, SimpleNamespace(type="cuda")) == ILLEGAL


def test_skip_stages_reads_the_variable_and_refuses_unknown_names():
    """"compute: vector, triton" -> the two words (spaces around commas dropped);
    "compute:vector" (no space) is refused with the 7 names, "triton" among them."""
    from rooflab.probe.gpu.lost_context import SKIP_ENV, skip_stages

    assert skip_stages(STAGES, {SKIP_ENV: "compute: vector, triton"}) == {
        "compute: vector", "triton"}
    assert skip_stages(STAGES, {}) == frozenset()
    with pytest.raises(InputError) as e:
        skip_stages(STAGES, {SKIP_ENV: "compute:vector"})
    msg = str(e.value)
    assert msg.startswith(f"{SKIP_ENV}: unknown stage 'compute:vector'; the stages are "
                          "'compute: matmul', 'compute: vector', 'memory: stream'")
    assert "'overhead', 'triton'" in msg and "\n" not in msg


def _lose_in(monkeypatch, stage_attr: tuple, line: str = ILLEGAL):
    """The torch-cpu probe with one stage raising and the context reported lost after it."""
    import rooflab.probe.gpu as gpu

    mod, attr = stage_attr

    def boom(ctx):
        raise AcceleratorError(line)
    monkeypatch.setattr(mod, attr, boom)
    monkeypatch.setattr(gpu, "context_lost", lambda torch, dev: line)


def test_rooflab_probe_says_which_stage_lost_the_context_in_one_line(
        monkeypatch, tmp_path):
    """`rooflab probe --device torch-cpu --quick` with the sweep losing the context: exit 0
    with what was measured, one stderr warning naming 'memory: sweep' and the variable to
    run without it; memory: host and overhead skipped in the profile."""
    pytest.importorskip("torch")
    from rooflab.probe.gpu import memory

    tiny_cpu_sizes(monkeypatch)
    _lose_in(monkeypatch, (memory, "cache_sweep"))
    out = tmp_path / "p.json"
    done = run_cli("probe", "--device", "torch-cpu", "--quick", "-o", str(out))
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if "CUDA context lost" in ln]
    assert lines == [f"warning: CUDA context lost in 'memory: sweep' ({ILLEGAL}); the later "
                     f"stages were skipped: rerun without it: ROOFLAB_GPU_SKIP_STAGES="
                     f"'memory: sweep' rooflab probe --device cpu ..."]
    gpu = json.loads(out.read_text())["extras"]["gpu"]
    assert gpu["context_lost"]["stage"] == "memory: sweep"
    assert set(gpu["skipped"]) >= {"memory: host", "overhead"}
    assert list(gpu["errors"]) == ["memory: sweep"]


def test_a_context_lost_in_the_first_stage_is_one_error_line(monkeypatch, capsys):
    """compute: matmul loses it: memory: stream is skipped, nothing is measured, and the
    error (exit 2, one line) names the stage and the way around it. An unknown name in
    ROOFLAB_GPU_SKIP_STAGES is refused before anything runs."""
    pytest.importorskip("torch")
    from rooflab.probe.gpu import compute

    tiny_cpu_sizes(monkeypatch)
    _lose_in(monkeypatch, (compute, "matmul_peaks"))
    err = one_line_error(capsys, ["probe", "--device", "torch-cpu", "--quick"])
    assert "measured nothing; CUDA context lost in 'compute: matmul'" in err
    assert "ROOFLAB_GPU_SKIP_STAGES='compute: matmul' rooflab probe" in err
    monkeypatch.setenv("ROOFLAB_GPU_SKIP_STAGES", "sweep")
    err = one_line_error(capsys, ["probe", "--device", "torch-cpu", "--quick"])
    assert "ROOFLAB_GPU_SKIP_STAGES: unknown stage 'sweep'" in err


def _fake_subprocess(calls: list, rc: int = 1, writes: dict | None = None):
    """subprocess.run's stand-in: records the call; `writes` is the child's gpu_check.json."""
    def run(cmd, env=None, timeout=None):
        calls.append((cmd, env, timeout))
        if writes is not None:
            (Path(cmd[2]) / "gpu_check.json").write_text(json.dumps(writes))
        return SimpleNamespace(returncode=rc)
    return SimpleNamespace(run=run, TimeoutExpired=subprocess.TimeoutExpired)


def test_gpu_check_reruns_itself_once_without_the_lost_stage(monkeypatch, tmp_path, capsys):
    """The dry run with the sweep losing the context: gpu_check starts itself once more (the
    same argv) with ROOFLAB_GPU_SKIP_STAGES='memory: sweep', ROOFLAB_GPU_CHECK_RETRY naming
    the step, its pid among the expected ones, and a timeout of what is left of 250 s less
    10 s (under 240 s, over 200 s on this quick run); the child's exit 1 is its exit and
    its table the last lines. A child that ends without its table (exit 124, its time
    out) gets the parent's: the loss and that exit, then the total."""
    pytest.importorskip("torch")
    from rooflab.probe.gpu import memory

    gc = load_gpu_check("gpu_check_s38a_parent")
    tiny_cpu_sizes(monkeypatch)
    _lose_in(monkeypatch, (memory, "cache_sweep"))
    monkeypatch.delenv("ROOFLAB_GPU_SKIP_STAGES", raising=False)
    calls = []
    child = {"retry": {"lost_in": "probe memory: sweep"}, "total_wall_s": 30.0}
    monkeypatch.setattr(gc.retry, "subprocess", _fake_subprocess(calls, 1, child))
    argv = [str(tmp_path), "--device", "cpu", "--quick", "--no-cli"]
    assert gc.main(argv) == 1
    said = capsys.readouterr().out.splitlines()
    assert said[-1].startswith(f"CUDA context lost in probe memory: sweep ({ILLEGAL}): "
                               f"running once more without it in a fresh process (within ")
    ((cmd, env, timeout),) = calls
    assert cmd[0] == sys.executable and cmd[1].endswith("benchmarks/gpu_check.py")
    assert cmd[2:] == argv
    assert env["ROOFLAB_GPU_SKIP_STAGES"] == "memory: sweep"
    state = json.loads(env["ROOFLAB_GPU_CHECK_RETRY"])
    assert state["lost_in"] == "probe memory: sweep" and state["error"] == ILLEGAL
    assert 200 < timeout == state["budget_s"] < 240
    from rooflab.probe.gpu.load import EXPECTED_PIDS_ENV

    assert str(os.getpid()) in env[EXPECTED_PIDS_ENV].split(",")
    # the child died without its table: the parent's report and rows
    monkeypatch.setattr(gc.retry, "subprocess", _fake_subprocess(calls, 124))
    assert gc.main(argv) == 1 and len(calls) == 2
    out = capsys.readouterr().out.splitlines()
    assert out[-4] == ("== rooflab GPU check: stopped: the CUDA context is lost (tracebacks "
                       "above) ==")
    assert out[-3].startswith(f"[FAIL] CUDA context lost in probe memory: sweep: {ILLEGAL}; "
                              "the re-run in a fresh process ended with exit 124 and no "
                              "table (past its ")
    assert out[-2].startswith("[FAIL] stage failed: probe memory: sweep: ")
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    assert report["context_lost"] == {"step": "probe memory: sweep", "error": ILLEGAL}
    assert "probe memory: sweep" in report["errors"] and report["total_wall_s"] > 0


def test_the_rerun_keeps_the_first_try_and_never_reruns_again(monkeypatch, tmp_path, capsys):
    """The child (ROOFLAB_GPU_CHECK_RETRY set, budget 200 s: its watchdog at 195 s, its
    CLI runs to end by 195 - (250 - 200) = 145 s) leaves the sweep out, keeps the parent's
    report as first_try, and its table's first row is the FAIL of the first try's loss. A
    second loss there (overhead) is not re-run: its table says so, exit 1."""
    pytest.importorskip("torch")
    from rooflab.probe.gpu import overhead

    gc = load_gpu_check("gpu_check_s38a_child")
    assert gc.retry.child_bounds({"budget_s": 200.0}, 200.0, 250.0) == (145.0, 195.0)
    assert gc.retry.child_bounds(None, 200.0, 250.0) == (200.0, 250.0)
    tiny_cpu_sizes(monkeypatch)
    (tmp_path / "gpu_check.json").write_text(json.dumps({"errors": {"probe x": "tb"}}))
    monkeypatch.setenv("ROOFLAB_GPU_SKIP_STAGES", "memory: sweep")
    monkeypatch.setenv("ROOFLAB_GPU_CHECK_RETRY", json.dumps(
        {"lost_in": "probe memory: sweep", "error": ILLEGAL, "budget_s": 200.0}))
    calls = []
    monkeypatch.setattr(gc.retry, "subprocess", _fake_subprocess(calls))
    assert gc.main([str(tmp_path), "--device", "cpu", "--quick", "--no-cli"]) == 1
    out = capsys.readouterr().out.splitlines()
    row = (f"[FAIL] CUDA context lost in probe memory: sweep: {ILLEGAL}; re-ran without it "
           f"in a fresh process (the first try's errors: gpu_check.json first_try)")
    assert row in out and out[-1].startswith("total ")
    (skips,) = [ln for ln in out if ln.startswith("[info] skipped by the probe")]
    assert "memory: sweep: left out by ROOFLAB_GPU_SKIP_STAGES" in skips
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    assert report["first_try"] == {"errors": {"probe x": "tb"}}
    assert report["checks"][0]["name"] == "CUDA context lost in probe memory: sweep"
    # lost again, in the child: the table of what is known, no third process
    _lose_in(monkeypatch, (overhead, "overheads"))
    assert gc.main([str(tmp_path), "--device", "cpu", "--quick", "--no-cli"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert calls == []
    assert out[-4:-2] == [row, f"[FAIL] CUDA context lost in probe overhead: {ILLEGAL}; this "
                               f"is the re-run: no other"]
    assert out[-2].startswith("[FAIL] stage failed: probe overhead: ")


def test_a_kernel_check_that_loses_the_context_reruns_without_triton(monkeypatch):
    """check_kernels raising the illegal access, the device lost after it: triton_checks
    stops there (no int8 check), the problem is the error's one line, and the step's re-run
    leaves the Triton kernels out ("triton"); a probe stage's re-run leaves that stage."""
    gc = load_gpu_check("gpu_check_s38a_triton")
    import gpu_check_triton as gt

    def boom(torch, dev):
        raise AcceleratorError(ILLEGAL)
    int8 = []
    monkeypatch.setitem(sys.modules, "rooflab.probe.gpu.kernels", SimpleNamespace(
        check_kernels=boom, check_int8_matmul=lambda t, d: int8.append(1) or []))
    monkeypatch.setattr(gt, "preflight", lambda torch, dev: [])
    torch, syncs = _fake_cuda(AcceleratorError(ILLEGAL))
    report = {"errors": {}}
    problems, lost = gt.triton_checks(torch, SimpleNamespace(type="cuda"), report)
    assert problems == [f"AcceleratorError: {ILLEGAL}"] and lost == ("check_kernels", ILLEGAL)
    assert int8 == [] and "check_kernels" in report["errors"] and len(syncs) == 1
    assert gc.retry.skip_word("check_kernels") == gc.retry.skip_word("probe") == "triton"
    assert gc.retry.skip_word("probe compute: vector") == "compute: vector"


def test_the_budget_counts_one_rerun_at_its_worst():
    """Lost in the probe's last stage: the first try up to there (start 10 + compiles 22 +
    probe 3 = 35 s) plus the whole check again (10 + 22 + 3 + 1 + 5 = 41 s) = 76 s; on the
    H200 estimate 90.6 + 41.2 = 131.8 s, within the 240 s the parent leaves it."""
    from benchmark_script import load_benchmark

    b = load_benchmark("gpu_check_budget", "gpu_check_budget_s38a")
    assert b.rerun_worst_s({"start (python, torch, CUDA)": 10.0,
                            "Triton compiles (checks + probe)": 22.0, "probe x": 3.0,
                            "references": 1.0, "chart": 5.0}) == 76.0
    stages = b.estimate("default")
    assert round(b.rerun_worst_s(stages), 1) == 131.8 and b.rerun_worst_s(stages) < 240


def test_a_probe_that_measured_nothing_reruns_without_the_stage_that_lost_it(
        monkeypatch, tmp_path, capsys):
    """compute: matmul loses the context, so memory: stream is skipped and probe_gpu raises
    "measured nothing": gpu_check still finds the stage (the error's context_lost) and its
    traceback, and re-runs with ROOFLAB_GPU_SKIP_STAGES='compute: matmul'."""
    pytest.importorskip("torch")
    from rooflab.probe.gpu import compute

    gc = load_gpu_check("gpu_check_s38a_nothing")
    tiny_cpu_sizes(monkeypatch)
    _lose_in(monkeypatch, (compute, "matmul_peaks"))
    monkeypatch.setattr(gc, "context_lost", lambda torch, dev: ILLEGAL)
    monkeypatch.delenv("ROOFLAB_GPU_SKIP_STAGES", raising=False)
    calls = []
    child = {"retry": {"lost_in": "probe compute: matmul"}, "total_wall_s": 30.0}
    monkeypatch.setattr(gc.retry, "subprocess", _fake_subprocess(calls, 1, child))
    assert gc.main([str(tmp_path), "--device", "cpu", "--quick", "--no-cli"]) == 1
    ((_, env, _),) = calls
    assert env["ROOFLAB_GPU_SKIP_STAGES"] == "compute: matmul"
    assert json.loads(env["ROOFLAB_GPU_CHECK_RETRY"])["lost_in"] == "probe compute: matmul"
    err = capsys.readouterr().err
    assert "--- error in probe compute: matmul ---" in err and "--- error in probe ---" in err

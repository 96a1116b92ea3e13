"""Before the one H200 run: what would have gone wrong the first time the GPU probe and
benchmarks/gpu_check.py met a real device, each pinned on the CPU (issue 4).

- gpu_check applied the H200 SXM's copy/bf16 targets to any name containing "H200": an
  H200 NVL or a GH200 would have been judged against another product's numbers;
- nothing bounded the whole check's time: the two CLI runs alone could take 2 x 120 s, past
  the device run's four minutes, and then no table and no final JSON would come back;
- a probe that raised printed one line and nothing else: the reference kernels (which need
  no profile) were not timed, so a one-shot run said nothing about the GPU;
- a timed-out CLI run wrote its stderr as "b'...'" (TimeoutExpired keeps bytes);
- one matmul precision whose setup raised (the TF32 mode switch) lost every matmul ceiling,
  bf16 included.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from gpu_check_script import load_gpu_check, tiny_cpu_sizes


def _load_script():
    return load_gpu_check("gpu_check_preflight")


def _profile(name: str):
    from rooflab.hardware.profile import MachineProfile
    from rooflab.model.ceiling import Ceiling, Roof

    def m(value, **kw):
        return Ceiling(value=value, provenance="measured", samples=(value,), method="t", **kw)

    measured = Roof(name, kind="measured", overhead_s=4e-6, memory=(m(3.9e12, level="DRAM"),),
                    compute=(m(6.5e14, precision="bf16", unit="tensor"),))
    extras = {"gpu": {"nominal_checks": [], "sweep": {}, "overheads": {}}}
    return MachineProfile(host={"name": name, "backend": "cuda"}, nominal=None,
                          measured=measured, extras=extras)


@pytest.mark.parametrize(("name", "targets"), [
    ("NVIDIA H200", True),                 # what torch and NVML call the SXM card
    ("NVIDIA H200 SXM", True),
    ("NVIDIA H200 NVL", False),            # 600 W PCIe card: 835 dense bf16 TFLOP/s
    ("NVIDIA GH200 480GB", False),         # Grace Hopper: 4.0 TB/s HBM3 (96 GB part)
    ("NVIDIA H100 80GB HBM3", False),
])
def test_h200_targets_apply_to_the_h200_sxm_only(name, targets):
    gc = _load_script()
    assert gc.is_h200_sxm(name) is targets
    status = {n.split(" ")[0]: s for n, s, _ in gc.checks(_profile(name), [], 30.0,
                                                             "default", None)}
    # Below both targets: FAIL where they apply, n/a where the device is another product.
    assert status["copy"] == status["bf16"] == ("FAIL" if targets else "n/a")


def test_cli_runs_share_what_is_left_of_the_time_budget():
    gc = _load_script()
    assert gc.TOTAL_BUDGET_S <= 210          # the device run gets 4 min with start-up
    import gpu_check_cli as cli  # beside gpu_check.py (on sys.path once it is loaded)

    assert cli.cli_timeouts(300.0) == (cli.CLI_TIMEOUT_S, cli.CLI_TIMEOUT_S)
    assert cli.cli_timeouts(100.0) == (50.0, 50.0)
    # Too little for both: the judged warm run keeps it all, the cold one is skipped.
    assert cli.cli_timeouts(40.0) == (None, 40.0)
    assert cli.cli_timeouts(cli.MIN_CLI_S - 1) == (None, None)
    for left in (26.0, 49.0, 60.0, 130.0, 250.0):
        cold, warm = cli.cli_timeouts(left)
        assert warm + (cold or 0.0) <= left


def test_an_exhausted_budget_skips_the_cli_runs_and_still_prints_the_table(
        tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    gc = _load_script()
    tiny_cpu_sizes(monkeypatch)     # what is checked is the skip and the table, not the probe
    monkeypatch.setattr(gc, "TOTAL_BUDGET_S", 0.0)
    ran = []
    import gpu_check_cli

    monkeypatch.setattr(gpu_check_cli, "run_cli_probe",
                        lambda *a, **k: ran.append(a) or {"rc": 0})
    rc = gc.main([str(tmp_path), "--device", "cpu", "--quick", "--cli"])
    out = capsys.readouterr().out.strip().splitlines()
    assert ran == []
    assert out[-1].startswith("total ")
    assert any(line.startswith("[info] `rooflab probe --quick`: skipped: under") for line in out)
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    assert "skipped" in report["cli_probe"] and report["errors"] == {}
    assert rc == 0


def test_a_failing_probe_still_times_the_references_and_prints_them(
        tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    import rooflab.probe.gpu as gpu

    gc = _load_script()

    def broken(*a, **k):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
    monkeypatch.setattr(gpu, "probe_gpu", broken)
    rc = gc.main([str(tmp_path), "--device", "cpu", "--quick", "--no-cli"])
    assert rc == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert "FAILED" in out[0] and out[-1].startswith("total ")
    assert any("illegal memory access" in line for line in out)
    assert any(line.startswith("matmul_bf16_128") and "FLOP/s" in line for line in out)
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    assert "probe" in report["errors"]
    rows = {r["kernel"]: r for r in report["reference"]}
    assert rows["matmul_bf16_128"]["achieved"] == pytest.approx(
        2 * 128 ** 3 / rows["matmul_bf16_128"]["seconds"])
    assert rows["copy_fp32_4MiB"]["unit"] == "B/s"


def test_a_timed_out_cli_run_keeps_its_stderr_as_text(tmp_path, monkeypatch):
    _load_script()
    import gpu_check_cli as gc  # beside gpu_check.py (on sys.path once it is loaded)

    def slow(cmd, **kw):
        raise subprocess.TimeoutExpired(cmd, kw["timeout"], output=b"", stderr=b"compiling")
    monkeypatch.setattr(subprocess, "run", slow)
    r = gc.run_cli_probe("cuda:0", tmp_path / "p.json", timeout_s=30.0)
    assert r["rc"] == 124
    assert r["stderr_tail"] == "timed out after 30 s: compiling"


def test_one_failing_matmul_precision_keeps_the_others(monkeypatch):
    from contextlib import contextmanager
    from types import SimpleNamespace

    from rooflab.model.ceiling import Ceiling
    from rooflab.probe.gpu import compute

    @contextmanager
    def refused(torch, mode):
        raise RuntimeError(f"Invalid precision for cuda matmul: {mode}")
        yield   # pragma: no cover

    monkeypatch.setattr(compute, "fp32_matmul_mode", refused)
    monkeypatch.setattr(compute, "_triton_int8", lambda ctx: None)
    monkeypatch.setattr(compute, "_matmul_best", lambda ctx, p: Ceiling(
        value=1e12, precision=p, unit="tensor", provenance="measured", method="t"))
    ctx = SimpleNamespace(is_cuda=True, torch=None, skipped={})
    got = [c.precision for c in compute.matmul_peaks(ctx)]
    assert got == ["fp64", "fp16", "bf16", "fp8", "int8"]
    assert set(ctx.skipped) == {"matmul_fp32", "matmul_tf32"}
    assert "Invalid precision" in ctx.skipped["matmul_tf32"]


def test_loop_counts_do_not_multiply_triton_compiles():
    # Triton keys its compile cache on each int argument's specialisation: 20 (check_kernels'
    # FMA loop) and 4096 (the probe's) are '' and 'D' (divisible by 16), and a repeat count
    # of 1 becomes a constant: each a separate compile on the H200's cold cache. Loop counts
    # are left unspecialised; sizes that address memory keep their alignment key.
    triton = pytest.importorskip("triton")
    import os

    if os.environ.get("TRITON_INTERPRET"):
        pytest.skip("the interpreter compiles nothing")
    from triton.runtime import jit

    from rooflab.probe.gpu import kernels

    def unspecialised(kernel):
        return {p.name for p in kernel.params if p.do_not_specialize}

    assert unspecialised(kernels.read_sweep_kernel) == {"nblocks", "reps"}
    assert unspecialised(kernels.fma_kernel) == {"iters"}
    assert unspecialised(kernels.copy_kernel) == unspecialised(kernels.triad_kernel) == set()
    native = getattr(jit, "native_specialize_impl", None)
    if native is None:
        pytest.skip(f"triton {triton.__version__} specialises in Python")
    from triton.backends.compiler import BaseBackend

    keys = {native(BaseBackend, v, False, False, True) for v in (1, 5, 20, 2048, 4096)}
    assert keys == {("i32", None)}            # one compiled kernel for every loop count


# --- review 14a #9, #13: the CLI runs after this process lets go of the GPU ---------------

def test_a_failing_cold_cli_run_is_reported_but_not_an_error(tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    gc = _load_script()
    tiny_cpu_sizes(monkeypatch)     # what is checked is the cold run's report, not the probe

    def fake_cli(device, out, timeout_s=0.0, triton_cache=None):
        if triton_cache:     # the cold run: a first run's compile failed
            return {"rc": 1, "wall_s": 3.0, "stderr_tail": "RuntimeError: ptxas died"}
        return {"rc": 0, "wall_s": 9.0, "probe_s": 7.0, "ceilings": 9, "stderr_tail": ""}
    import gpu_check_cli

    monkeypatch.setattr(gpu_check_cli, "run_cli_probe", fake_cli)
    rc = gc.main([str(tmp_path), "--device", "cpu", "--quick", "--cli"])
    out = capsys.readouterr().out
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    assert report["errors"] == {} and rc == 0
    assert report["cli_cold_error"] == "RuntimeError: ptxas died"
    assert "[info] `rooflab probe --quick`, empty Triton cache: exit 1" in out


def test_release_device_empties_the_cache_and_names_this_pid(monkeypatch):
    import os
    from types import SimpleNamespace

    from rooflab.probe.gpu.load import EXPECTED_PIDS_ENV

    gc = _load_script()
    calls = []
    fake = SimpleNamespace(cuda=SimpleNamespace(
        empty_cache=lambda: calls.append("empty_cache"),
        memory_reserved=lambda dev: 2 * 2**20))
    monkeypatch.setenv(EXPECTED_PIDS_ENV, "11")
    got = gc.release_device(fake, SimpleNamespace(type="cuda", index=0))
    assert calls == ["empty_cache"]
    assert got == {"pid": os.getpid(), "reserved_bytes": 2 * 2**20, "env": EXPECTED_PIDS_ENV}
    assert os.environ[EXPECTED_PIDS_ENV] == f"11,{os.getpid()}"
    assert gc.shares_text(got, "cuda:0").startswith(
        f"this gpu_check (pid {os.getpid()}, 2 MiB reserved after empty_cache, idle)")
    assert gc.release_device(fake, SimpleNamespace(type="cpu")) is None


def test_gpu_check_records_registers_and_spills_of_the_compiled_kernels(monkeypatch):
    # Review 14a #13: the occupancy claims (48 registers in the read sweep, no spills) are
    # Triton 3.9's; the device runs 3.6, so gpu_check.json keeps what the device compiled.
    triton = pytest.importorskip("triton")
    from types import SimpleNamespace

    from rooflab.probe.gpu import kernels

    # Shaped as Triton 3.x's CompiledKernel: registers and spills on the kernel (set by the
    # first launch), shared memory only in its metadata (review s21 r8 F1). 131,072 B is what
    # Triton 3.9 gives the int8 GEMM's 3-stage 128x256x128 tile compiled offline for sm_90.
    monkeypatch.setattr(kernels, "COMPILED", {
        "read_sweep.cg_2048": SimpleNamespace(n_regs=48, n_spills=0,
                                              metadata=SimpleNamespace(shared=0)),
        "int8_matmul": SimpleNamespace(n_regs=194, n_spills=0,
                                       metadata=SimpleNamespace(shared=131072))})
    gc = _load_script()
    got = gc.kernel_resources(SimpleNamespace(type="cuda"))
    assert got == {"triton": triton.__version__,
                   "int8_matmul": {"n_regs": 194, "n_spills": 0, "shared": 131072},
                   "read_sweep.cg_2048": {"n_regs": 48, "n_spills": 0, "shared": 0}}
    assert gc.kernel_resources(SimpleNamespace(type="cpu")) is None
    # Every launch asks for FP fusion explicitly (no Triton 3.9 "unset default" warning).
    assert kernels.FP_FUSION is True


def test_the_second_int8_method_is_judged_apart_from_the_kernels_every_figure_needs():
    # A Triton that cannot compile the int8 GEMM must not fail "Triton kernels agree with
    # torch" (info, torch._int_mm alone); one that computes it wrongly fails its own row.
    gc = _load_script()
    assert gc.int8_gemm_row(None) is None
    assert gc.int8_gemm_row({"not_run": "CompilationError: out of resource: shared"}) == (
        "Triton int8 GEMM agrees with fp64 (second int8 method)", "info",
        "not run: CompilationError: out of resource: shared; the int8 ceiling is "
        "torch._int_mm's alone")
    assert gc.int8_gemm_row({"problems": ["int8_matmul_kernel: 3 of 65536 results differ"]})[
        1:] == ("FAIL", "int8_matmul_kernel: 3 of 65536 results differ")
    assert gc.int8_gemm_row({"problems": []})[1] == "PASS"
    import gpu_check_triton  # beside gpu_check.py (on sys.path once it is loaded)

    got = gpu_check_triton.int8_gemm_check(None, None)   # no torch: not run, never raised
    assert set(got) == {"not_run"}

"""benchmarks/gpu_check.py's Triton steps before the probe: the preflight (Triton can build
its launcher module, a C compiler and Python.h, and launch one empty kernel on the device;
each problem said in one line, the torch figures still run: review 14a #12), the kernels
against torch, and the int8 GEMM against fp64; each step that fails is asked whether it
lost the CUDA context (then gpu_check re-runs without Triton: gpu_check_retry.py)."""

from __future__ import annotations

import traceback
from pathlib import Path

from rooflab.probe.gpu.lost_context import context_lost


def launcher_problems(environ, which, include_dir: str) -> list[str]:
    """What Triton lacks to build its launcher module on first use (triton/runtime/build.py:
    a C compiler, $CC or cc/gcc/clang, and Python.h): [] when both are there."""
    problems = []
    cc = environ.get("CC")
    if not (which(cc) if cc else any(which(c) for c in ("cc", "gcc", "clang"))):
        problems.append(f"no C compiler ({'$CC=' + cc if cc else 'cc, gcc, clang'} not found)")
    if not (Path(include_dir) / "Python.h").exists():
        problems.append(f"no Python headers ({include_dir}/Python.h missing)")
    return problems


def preflight(torch, dev) -> list[str]:
    """Before anything is timed (review 14a #12): Triton can build its launcher and run one
    empty kernel on the device. [] when it can."""
    import os
    import shutil
    import sysconfig

    problems = launcher_problems(os.environ, shutil.which, sysconfig.get_paths()["include"])
    try:
        from rooflab.probe.gpu.kernels import launch_empty

        launch_empty(torch.empty(1, device=dev))
        if dev.type == "cuda":   # the interpreter (CPU rehearsal) has finished on return
            torch.cuda.synchronize(dev)
    except Exception as exc:  # noqa: BLE001 — said in one line, the rest still runs
        problems.append(f"one empty Triton kernel failed: {type(exc).__name__}: "
                        f"{str(exc).splitlines()[0][:200] if str(exc) else ''}")
    return problems


PREFLIGHT_LINE = ("PREFLIGHT FAILED: Triton cannot build or launch a kernel on this machine "
                  "({}): the Triton figures (vector FMA, Triton copy, the sweep) and the L2 "
                  "check will fail; the torch figures still run")


def triton_checks(torch, dev, report: dict) -> tuple[list[str] | None, tuple | None]:
    """Triton's preflight, its kernels against torch and the int8 GEMM check, into
    `report`: (the kernels' problems, (step, error line) when a step lost the CUDA context
    and the rest of this process could only fail)."""
    report["preflight"] = preflight(torch, dev)
    if report["preflight"]:
        print(PREFLIGHT_LINE.format("; ".join(report["preflight"])), flush=True)
        if (line := context_lost(torch, dev)) is not None:
            return None, ("preflight", line)
    try:
        from rooflab.probe.gpu.kernels import check_kernels

        problems = check_kernels(torch, dev)
    except Exception as exc:  # noqa: BLE001 — Triton missing or failing: say so, go on
        problems = [f"{type(exc).__name__}: {exc}"]
        report["errors"]["check_kernels"] = traceback.format_exc()
        if (line := context_lost(torch, dev)) is not None:
            return problems, ("check_kernels", line)
    report["kernel_problems"] = problems
    report["int8_gemm_check"] = int8_gemm_check(torch, dev)
    if "not_run" in report["int8_gemm_check"] and (line := context_lost(torch, dev)):
        return problems, ("int8 check", line)
    return problems, None


def int8_gemm_check(torch, dev) -> dict:
    """The Triton int8 GEMM (the second int8 method) against fp64: {"problems": [...]} when
    it ran, {"not_run": why} when it could not compile or launch (the probe then skips it)."""
    try:
        from rooflab.probe.gpu.kernels import check_int8_matmul

        return {"problems": check_int8_matmul(torch, dev)}
    except Exception as exc:  # noqa: BLE001 — a second method: reported, never fatal
        return {"not_run": f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"}

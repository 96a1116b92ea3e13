"""benchmarks/gpu_check.py's one re-run after a lost CUDA context.

An illegal memory access (a wrong Triton index, a bad `_scaled_mm` call) is sticky: every
later CUDA call of the process raises it too, so the rest of the one device run would
only fail. gpu_check then runs itself again, once, in a fresh process: the same argv, the
step that lost the context left out (ROOFLAB_GPU_SKIP_STAGES for a probe stage, "triton"
when it was Triton's preflight, kernel check or int8 check, or the probe outside a stage),
ROOFLAB_GPU_CHECK_RETRY marking the child (which never re-runs), and a timeout from what
is left of the parent's HANG_EXIT_S. The child writes gpu_check.json, profile.json and
roofline.png in the same folder, keeps the first try's report under `first_try`, and its
table (printed last) has a FAIL row naming the step and the re-run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from gpu_check_refs import log_errors
from gpu_check_report import plain_table, stage_rows

from rooflab.probe.gpu.load import EXPECTED_PIDS_ENV
from rooflab.probe.gpu.lost_context import SKIP_ENV, TRITON

RETRY_ENV = "ROOFLAB_GPU_CHECK_RETRY"
# The parent's share after the child: its line and exit (s). The child's watchdog fires
# CHILD_MARGIN_S before the parent's timeout, so a stuck child still dumps its stacks.
PARENT_MARGIN_S = 10.0
CHILD_MARGIN_S = 5.0
# Below this no re-run: start-up (~10 s), Triton's cached kernels and a default probe
# (~10 s on an H200, gpu_check_budget.py) would not fit.
MIN_RETRY_S = 60.0
# gpu_check's own Triton steps: losing the context there re-runs without Triton kernels.
TRITON_STEPS = ("preflight", "check_kernels", "int8 check")


def retry_state(environ=None) -> dict | None:
    """The child's ROOFLAB_GPU_CHECK_RETRY ({"lost_in", "error", "budget_s"}), or None in
    a first try (or when the value is not that JSON object)."""
    raw = (os.environ if environ is None else environ).get(RETRY_ENV)
    try:
        state = json.loads(raw) if raw else None
    except ValueError:
        return None
    return state if isinstance(state, dict) and "lost_in" in state else None


def triton_off(environ=None) -> bool:
    """ROOFLAB_GPU_SKIP_STAGES names "triton": gpu_check's own Triton steps are left out
    too (the probe reads the variable itself)."""
    raw = (os.environ if environ is None else environ).get(SKIP_ENV, "")
    return TRITON in (w.strip() for w in raw.split(","))


def child_bounds(state: dict | None, total_s: float, hang_s: float) -> tuple[float, float]:
    """(TOTAL_BUDGET_S, HANG_EXIT_S) of this process: the module's in a first try; in the
    child, its watchdog CHILD_MARGIN_S before the parent's timeout and the CLI runs' end
    the same gap (hang - total) before that."""
    if not state:
        return total_s, hang_s
    hang = max(1.0, float(state["budget_s"]) - CHILD_MARGIN_S)
    return max(0.0, hang - (hang_s - total_s)), hang


def skip_word(step: str) -> str:
    """What the child leaves out: the probe stage ("probe memory: sweep" -> "memory:
    sweep"), else the Triton kernels."""
    return step.removeprefix("probe ") if step.startswith("probe ") else TRITON


def rerun(argv: list[str], step: str, line: str, budget_s: float) -> int:
    """gpu_check.py ARGV again in a fresh process, the step that lost the context left
    out; its exit status (124 when it ran past `budget_s`). Its output goes where this
    process's goes, so its table comes last."""
    skip = [w for w in os.environ.get(SKIP_ENV, "").split(",") if w.strip()]
    pids = [w for w in os.environ.get(EXPECTED_PIDS_ENV, "").split(",") if w]
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, SKIP_ENV: ",".join([*skip, skip_word(step)]),
           RETRY_ENV: json.dumps({"lost_in": step, "error": line, "budget_s": budget_s}),
           # this process still holds its (lost) context's memory: an expected user
           EXPECTED_PIDS_ENV: ",".join([*pids, str(os.getpid())]),
           "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)}
    cmd = [sys.executable, str(Path(__file__).resolve().with_name("gpu_check.py")), *argv]
    sys.stdout.flush()
    try:
        return subprocess.run(cmd, env=env, timeout=budget_s).returncode
    except subprocess.TimeoutExpired:
        return 124


def lost_row(state: dict) -> tuple[str, str, str]:
    """The child's table row of the first try's loss (FAIL: that try failed)."""
    return (f"CUDA context lost in {state['lost_in']}", "FAIL",
            f"{state['error']}; re-ran without it in a fresh process (the first try's "
            f"errors: gpu_check.json first_try)")


def first_try(outdir: Path) -> dict | None:
    """The parent's gpu_check.json, read by the child before it writes its own."""
    try:
        return json.loads((outdir / "gpu_check.json").read_text())
    except (OSError, ValueError):
        return None


def finished(outdir: Path) -> bool:
    """The re-run got to its table: its gpu_check.json (marked "retry") has a total time.
    A child that died before (a traceback, the timeout) leaves the parent's or a partial
    one, and the parent then prints what it knows."""
    doc = first_try(outdir) or {}
    return bool(doc.get("retry")) and doc.get("total_wall_s") is not None


def after_lost(args, report: dict, step: str, line: str, started: float, save) -> int:
    """The CUDA context is gone after `step`: the rest of this process could only fail.
    Once, with time left, gpu_check runs again in a fresh process without that step (its
    table comes last); else (already the re-run, or too little time) what is known.
    `save` writes gpu_check.json (gpu_check._save)."""
    report["context_lost"] = {"step": step, "error": line}
    save(args.outdir, report)
    log_errors(report["errors"])
    left = args.hang_s - (time.perf_counter() - started) - PARENT_MARGIN_S
    if not args.retry and left >= MIN_RETRY_S:
        print(f"CUDA context lost in {step} ({line}): running once more without it in a "
              f"fresh process (within {left:.0f} s)", flush=True)
        rc = rerun(args.argv, step, line, left)
        if finished(args.outdir):    # its table came last; this try failed
            return rc or 1
        why = f"the re-run in a fresh process ended with exit {rc} and no table" + (
            f" (past its {left:.0f} s)" if rc == 124 else "")
    else:
        why = ("this is the re-run: no other" if args.retry
               else f"{left:.0f} s left: too little to re-run")
    rows = [*([lost_row(args.retry)] if args.retry else []),
            (f"CUDA context lost in {step}", "FAIL", f"{line}; {why}"),
            *stage_rows(report["errors"], {})]
    report["total_wall_s"] = time.perf_counter() - started
    save(args.outdir, report)
    print(plain_table(rows, report["total_wall_s"],
                      "stopped: the CUDA context is lost (tracebacks above)"))
    return 1

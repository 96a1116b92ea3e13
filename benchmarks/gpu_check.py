"""The whole GPU side of rooflab in one call, for one lease of a device machine.

    PYTHONPATH=src python3 benchmarks/gpu_check.py OUTDIR            # CUDA, default probe
    PYTHONPATH=src python3 benchmarks/gpu_check.py OUTDIR --device cpu --quick   # dry run
    TRITON_INTERPRET=1 ... --device cpu --quick   # dry run that also rehearses the Triton
                                                  # stages (benchmarks/gpu_rehearsal.py)

0. refuses TRITON_INTERPRET on CUDA (exit 2: the interpreter would eat the run), then
   checks that Triton can build its launcher and launch one kernel (a first line if not);
1. checks the Triton kernels against torch (CUDA only: correct first, METHOD.md; the CPU
   dry run under TRITON_INTERPRET=1 runs 0-2 with the Triton path, at tiny sizes);
2. probes the device (rooflab.probe.gpu.probe_gpu) and saves the profile;
3. times reference kernels (bf16 matmul, copy, softmax) and places them on the roof;
4. runs the user's command, `rooflab probe --device cuda:N --quick -o OUTDIR/probe_quick.json`,
   in a fresh process (CUDA only, or with --cli), after freeing this process's cached
   device memory and naming its pid to the child: the CLI end to end and its 20 s budget,
   once with an empty Triton cache (a user's first run, reported) and once warm (judged),
   each within what is left of the whole check's TOTAL_BUDGET_S (skipped, and said, if
   too little is left);
5. checks the issue-4 targets: copy >= 4.2 TB/s (read + write) and bf16 matmul >= 760
   TFLOP/s on an H200 SXM (by catalog match: not an H200 NVL or a GH200), every measured
   ceiling <= its nominal one or flagged (FAIL only unflagged), the L2 plateau found
   (>= 0.4 x L2, >= 3 sets, >= 1.8 x the DRAM copy), the probe within its time budget,
   the reference kernels' best calls <= 105 % of the roof;
6. if the probe itself fails, still times the reference kernels and prints them last;
   if a step lost the CUDA context (a sticky error: a synchronize after it fails too),
   runs itself once more in a fresh process without that step, within what is left of
   HANG_EXIT_S (gpu_check_retry.py): its table, printed last, says "CUDA context lost in
   X; re-ran without it in a fresh process", its JSON keeps the first try as first_try;
7. writes OUTDIR/gpu_check.json (rewritten after every stage, so a run cut short still
   leaves what it measured), OUTDIR/profile.json and OUTDIR/roofline.png, and prints the
   table last (the device tool returns the output's tail), a FAIL row for each step that
   raised, an info row of the probe's skips; stuck past HANG_EXIT_S, it dumps its stacks.

Exit status 0 when every check passes (checks that do not apply say "n/a"), 1 otherwise.
Imports only what the device machine has (torch, triton, numpy, matplotlib; not plotly).
Beside it: its checks and table (gpu_check_report.py), reference kernels and chart
(gpu_check_refs.py), Triton preflight and kernel checks (gpu_check_triton.py), re-run
(gpu_check_retry.py), and the dry run's Triton rehearsal (gpu_rehearsal.py).
"""

from __future__ import annotations

import argparse
import faulthandler
import math
import sys
import time
import traceback
from pathlib import Path

try:
    import rooflab  # noqa: F401
except ImportError:  # run from the source tree without PYTHONPATH
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

# Its helpers sit beside it (gpu_check_report, gpu_check_refs, gpu_rehearsal): found also
# when the tests load this file by path (run as a script, its folder is on sys.path).
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import gpu_check_retry as retry  # noqa: E402
from gpu_check_refs import draw, log, reference_sizes, time_references  # noqa: E402, F401
from gpu_check_report import (  # noqa: E402, F401 — the names the tests read from here
    L2_CHECK,
    PROBE_BUDGET_S,
    checks,
    failed_table,
    first_line,
    int8_gemm_row,
    is_h200_sxm,
    l2_verdict,
    place,
    plain_table,
    shares_text,
    stage_rows,
    table,
    unplaced,
)
from gpu_check_triton import triton_checks  # noqa: E402

from rooflab.files import write_json  # noqa: E402
from rooflab.hardware.profile import profile_to_dict, save_profile  # noqa: E402
from rooflab.probe.gpu.lost_context import context_lost  # noqa: E402
from rooflab.units import fmt_fraction  # noqa: E402

# One device run gets about four minutes: the whole check stays under TOTAL_BUDGET_S, so a
# slow stage (a cold Triton cache, a CLI run that hangs) still leaves the table and the JSON.
# The CLI runs come last and get what is left; each is skipped below MIN_CLI_S.
TOTAL_BUDGET_S = 200.0
CLI_TIMEOUT_S = 120.0
MIN_CLI_S = 25.0
# Past this the run is stuck in this process (the CLI runs end by TOTAL_BUDGET_S): every
# thread's stack goes to stderr and it exits (1), so the device tool gets where it hung
# (gpu_check.json has the stages done), not a silent kill at its own timeout.
HANG_EXIT_S = 250.0


def cli_timeouts(remaining_s: float) -> tuple[float | None, float | None]:
    """(cold, warm) timeouts of the two CLI runs in the `remaining_s` seconds left of the
    budget; None skips a run. The warm run (judged) keeps at least half; the cold one
    (reported only) goes first when MIN_CLI_S is left for it after the warm one's share."""
    if remaining_s < MIN_CLI_S:
        return None, None
    warm = min(CLI_TIMEOUT_S, remaining_s / 2 if remaining_s >= 2 * MIN_CLI_S else remaining_s)
    cold = min(CLI_TIMEOUT_S, remaining_s - warm)
    return (cold if cold >= MIN_CLI_S else None), warm


def run_cli_probe(device: str, out: Path, timeout_s: float = CLI_TIMEOUT_S,
                  triton_cache: str | None = None) -> dict:
    """`rooflab probe --device DEVICE --quick -o out` in a fresh process, as a user runs it;
    `triton_cache` points Triton at another (empty) cache folder: a first run's compiles."""
    import json
    import os
    import subprocess

    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (src, os.environ.get("PYTHONPATH")) if p)}
    if triton_cache:
        env["TRITON_CACHE_DIR"] = triton_cache
    cmd = [sys.executable, "-c", "import sys; from rooflab.cli.main import main; "
           "raise SystemExit(main(sys.argv[1:]))", "probe", "--device", device, "--quick",
           "--quiet", "-o", str(out)]
    t = time.perf_counter()
    try:
        run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s)
        rc, err = run.returncode, run.stderr
    except subprocess.TimeoutExpired as exc:
        # TimeoutExpired keeps the output as bytes even with text=True
        tail = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) \
            else (exc.stderr or "")
        rc, err = 124, f"timed out after {timeout_s:.0f} s: {tail}"
    result = {"command": " ".join(cmd[3:]), "rc": rc, "wall_s": time.perf_counter() - t,
              "stderr_tail": str(err)[-2000:]}
    if rc == 0 and out.exists():
        doc = json.loads(out.read_text())
        gpu = (doc.get("extras") or {}).get("gpu") or {}
        measured = doc.get("measured") or {}
        dram = next((c.get("bytes_per_s") or c.get("value") for c in measured.get("memory", [])
                     if c.get("level") == "DRAM"), None)
        ok, detail = l2_verdict((gpu.get("sweep") or {}).get("main") or {},
                                (doc.get("host") or {}).get("l2_bytes"), dram)
        result.update(probe_s=gpu.get("wall_s"), errors=gpu.get("errors"),
                      ceilings=len(measured.get("compute", [])) + len(measured.get("memory", [])),
                      l2={"ok": ok, "detail": detail})
    return result


def cli_runs(device: str, outdir: Path, cold_s: float | None, warm_s: float | None
             ) -> dict | None:
    """The CLI's quick probe, first with an empty Triton cache (a user's first run, reported)
    and then warm (judged), each within its timeout; None when there is no time for it."""
    if warm_s is None:
        return None
    import tempfile

    cold = None
    if cold_s is not None:
        with tempfile.TemporaryDirectory(prefix="rooflab-triton-") as empty:
            cold = run_cli_probe(device, outdir / "probe_quick_cold.json", timeout_s=cold_s,
                                 triton_cache=empty)
    return {**run_cli_probe(device, outdir / "probe_quick.json", timeout_s=warm_s),
            "cold": cold}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--device", default="cuda", help="cuda, cuda:N, or cpu (dry run)")
    ap.add_argument("--quick", action="store_true", help="the probe's quick mode")
    ap.add_argument("--mode", default=None, choices=("quick", "default", "full"))
    ap.add_argument("--cli", action=argparse.BooleanOptionalAction, default=None,
                    help="also run `rooflab probe --quick` in a fresh process (default: on CUDA)")
    args = ap.parse_args(argv)
    # A re-run after a lost CUDA context (gpu_check_retry.py) has what its parent left.
    args.argv, args.retry = list(sys.argv[1:] if argv is None else argv), retry.retry_state()
    args.total_s, args.hang_s = retry.child_bounds(args.retry, TOTAL_BUDGET_S, HANG_EXIT_S)
    _arm_watchdog(args.hang_s)
    try:
        return _check(args)
    finally:
        faulthandler.cancel_dump_traceback_later()


def _arm_watchdog(hang_s: float) -> None:
    """faulthandler needs a file descriptor: stderr's, else the process's (pytest's has none)."""
    import io

    for stream in (sys.stderr, sys.__stderr__):
        try:
            faulthandler.dump_traceback_later(hang_s, exit=True, file=stream)
            return
        except (AttributeError, ValueError, io.UnsupportedOperation):
            continue


def _guarded(errors: dict, name: str, fn, default=None):
    """fn(), or `default` with its traceback in errors[name]: one failing step must not
    cost the table and the JSON of the one device run."""
    try:
        return fn()
    except Exception:  # noqa: BLE001 — said in the table's "stage failed" row
        errors[name] = traceback.format_exc()
        return default


def _check(args) -> int:
    mode = args.mode or ("quick" if args.quick else "default")
    started = time.perf_counter()
    from rooflab.probe.gpu import interpreter_refusal
    from rooflab.probe.gpu.identity import parse_torch_device

    if parse_torch_device(args.device)[0] == "cuda" and (why := interpreter_refusal()):
        # Before torch and Triton load: the interpreter would eat the whole device run.
        print(f"error: {why}", file=sys.stderr, flush=True)
        return 2
    import torch

    from rooflab.probe.gpu import probe_gpu
    from rooflab.probe.gpu.identity import open_device

    dev = open_device(torch, args.device)
    if dev.type == "cuda":
        torch.cuda.set_device(dev)   # events, Triton launches and measure() use this device
    args.outdir.mkdir(parents=True, exist_ok=True)
    report: dict = {"device": args.device, "mode": mode, "errors": {}}
    if args.retry:   # the first try's report, before this one replaces it
        report.update(retry=args.retry, first_try=retry.first_try(args.outdir))
    problems = None
    rehearse = False
    if dev.type == "cpu" and (rehearsal := _rehearsal().start(torch, dev)) is not None:
        # TRITON_INTERPRET=1 on the CPU dry run: the Triton stages below run under the
        # interpreter, as on CUDA (review r4 F2); a line says why when they cannot.
        report["rehearsal"], rehearse = rehearsal, rehearsal["triton"]
        if rehearsal.get("why"):
            print(rehearsal["why"], flush=True)
    if (dev.type == "cuda" or rehearse) and not retry.triton_off():
        problems, lost = triton_checks(torch, dev, report)
        _save(args.outdir, report)
        if lost:
            return _after_lost(args, report, *lost, started)
    t0 = time.perf_counter()
    try:
        if rehearse:
            with _rehearsal().tiny_sizes(torch, dev, mode):
                profile = probe_gpu(args.device, mode, progress=lambda s, f: log(
                    f"[{fmt_fraction(f):>5}] {s}"), triton=True)
        else:
            profile = probe_gpu(args.device, mode, progress=lambda s, f: log(
                f"[{fmt_fraction(f):>5}] {s}"))
    except Exception as exc:  # noqa: BLE001 — keep what is known for the next try
        report["errors"]["probe"] = traceback.format_exc()
        if (line := context_lost(torch, dev)) is not None:
            stage = (getattr(exc, "context_lost", None) or {}).get("stage")
            for name, tb in (getattr(exc, "stage_errors", None) or {}).items():
                report["errors"][f"probe {name}"] = tb
            return _after_lost(args, report, f"probe {stage}" if stage else "probe", line,
                               started)
        _save(args.outdir, report)
        # The reference kernels need no profile: on a one-shot device run their times
        # (bf16 matmul, copy) still say what the GPU does.
        kernels = time_references(torch, dev, mode, report["errors"])
        rows = unplaced(kernels)
        report.update(reference=rows, total_wall_s=time.perf_counter() - started)
        _save(args.outdir, report)
        for name, tb in report["errors"].items():
            log(f"--- error in {name} ---\n{tb}")
        print(failed_table(rows, problems, report["errors"], report["total_wall_s"]))
        return 1
    wall_probe = time.perf_counter() - t0
    _guarded(report["errors"], "profile.json",
             lambda: save_profile(args.outdir / "profile.json", profile))
    profile_doc = _guarded(report["errors"], "profile as JSON",
                           lambda: profile_to_dict(profile))
    for stage, tb in profile.extras["gpu"].get("errors", {}).items():
        report["errors"][f"probe {stage}"] = tb
    if lost := profile.extras["gpu"].get("context_lost"):
        return _after_lost(args, report, f"probe {lost['stage']}", lost["error"], started)
    stage_s = {"start": t0 - started, "probe": wall_probe}
    report.update(probe_wall_s=wall_probe, profile=profile_doc)
    _save(args.outdir, report)
    t1 = time.perf_counter()
    # A reference that loses the CUDA context skips the rest; the chart and the CLI runs
    # (fresh processes) need no context of this one: the run goes on, no re-run.
    kernels = time_references(torch, dev, mode, report["errors"],
                              skipped := report.setdefault("references_skipped", {}))
    placed = _guarded(report["errors"], "place", lambda: place(profile, kernels), [])
    stage_s["references"] = time.perf_counter() - t1
    t1 = time.perf_counter()
    report["chart"] = _guarded(report["errors"], "chart",
                               lambda: draw(profile, kernels, args.outdir / "roofline.png"))
    stage_s["chart"] = time.perf_counter() - t1
    report["kernel_resources"] = kernel_resources(dev)
    cli = None
    if args.cli if args.cli is not None else dev.type == "cuda":
        report.update(reference=placed, stage_s=stage_s)
        report["cli_shares_gpu_with"] = _guarded(report["errors"], "release device",
                                                 lambda: release_device(torch, dev))
        _save(args.outdir, report)
        t1 = time.perf_counter()
        cli_device = "torch-cpu" if dev.type == "cpu" else str(dev)
        cold_s, warm_s = cli_timeouts(args.total_s - (t1 - started))
        try:
            cli = cli_runs(cli_device, args.outdir, cold_s, warm_s)
        except Exception:  # noqa: BLE001 — the table still comes
            report["errors"]["cli probe"] = traceback.format_exc()
        if cli is not None:
            report["cli_probe"] = cli
            if cli.get("rc"):
                report["errors"]["cli probe"] = cli["stderr_tail"]
            if (cli.get("cold") or {}).get("rc"):
                # A user's first run is reported, not judged: kept out of `errors` (and so
                # out of the exit status), its stderr in the report.
                report["cli_cold_error"] = cli["cold"]["stderr_tail"]
        elif warm_s is None:
            report["cli_probe"] = {"skipped": f"under {MIN_CLI_S:.0f} s left of the "
                                              f"{args.total_s:.0f} s budget"}
        stage_s["cli probe"] = time.perf_counter() - t1
    results = _guarded(report["errors"], "checks",
                       lambda: checks(profile, placed, wall_probe, mode, problems, cli), [])
    if (row := int8_gemm_row(report.get("int8_gemm_check"))) is not None:
        results.insert(1 if problems is not None else 0, row)
    if report.get("preflight"):
        results.insert(0, ("Triton builds and launches a kernel", "FAIL",
                           "; ".join(report["preflight"])))
    if report.get("rehearsal"):
        results.append(_rehearsal().row(report["rehearsal"]))
    if report.get("cli_shares_gpu_with"):
        results.append(("CLI runs share the GPU with this idle check", "info",
                        shares_text(report["cli_shares_gpu_with"], str(dev))))
    if (report.get("cli_probe") or {}).get("skipped"):
        results.append(("`rooflab probe --quick`", "info",
                        f"skipped: {report['cli_probe']['skipped']}"))
    results += stage_rows(report["errors"], {**(profile.extras["gpu"].get("skipped") or {}),
                                             **skipped})
    if args.retry:
        results.insert(0, retry.lost_row(args.retry))
    wall_total = time.perf_counter() - started
    text = _guarded(report["errors"], "table",
                    lambda: table(profile, placed, results, wall_total, stage_s))
    if text is None:
        results.append(("stage failed: table", "FAIL", first_line(report["errors"]["table"])))
        text = plain_table(results, wall_total)
    report.update(probe_wall_s=wall_probe, total_wall_s=wall_total, stage_s=stage_s,
                  reference=placed,
                  checks=[{"name": n, "status": s, "detail": d} for n, s, d in results],
                  profile=profile_doc)
    _save(args.outdir, report)
    for name, tb in report["errors"].items():
        log(f"--- error in {name} ---\n{tb}")
    print(text)
    return 1 if any(s == "FAIL" for _, s, _ in results) or report["errors"] else 0


def _after_lost(args, report: dict, step: str, line: str, started: float) -> int:
    """The CUDA context is gone after `step`: the rest of this process could only fail.
    Once, with time left, gpu_check runs again in a fresh process without that step (its
    table comes last); else (already the re-run, or too little time) what is known."""
    report["context_lost"] = {"step": step, "error": line}
    _save(args.outdir, report)
    for name, tb in report["errors"].items():
        log(f"--- error in {name} ---\n{tb}")
    left = args.hang_s - (time.perf_counter() - started) - retry.PARENT_MARGIN_S
    if not args.retry and left >= retry.MIN_RETRY_S:
        print(f"CUDA context lost in {step} ({line}): running once more without it in a "
              f"fresh process (within {left:.0f} s)", flush=True)
        rc = retry.rerun(args.argv, step, line, left)
        if retry.finished(args.outdir):    # its table came last; this try failed
            return rc or 1
        why = f"the re-run in a fresh process ended with exit {rc} and no table" + (
            f" (past its {left:.0f} s)" if rc == 124 else "")
    else:
        why = ("this is the re-run: no other" if args.retry
               else f"{left:.0f} s left: too little to re-run")
    rows = [*([retry.lost_row(args.retry)] if args.retry else []),
            (f"CUDA context lost in {step}", "FAIL", f"{line}; {why}"),
            *stage_rows(report["errors"], {})]
    report["total_wall_s"] = time.perf_counter() - started
    _save(args.outdir, report)
    print(plain_table(rows, report["total_wall_s"],
                      "stopped: the CUDA context is lost (tracebacks above)"))
    return 1


def kernel_resources(dev) -> dict | None:
    """Registers and spills of the Triton kernels compiled in this process, with Triton's
    version (CUDA only: the interpreter compiles nothing)."""
    if dev.type != "cuda":
        return None
    try:
        from rooflab.probe.gpu.kernels import resources

        return resources()
    except Exception as exc:  # noqa: BLE001 — a record, never a failure
        return {"error": f"{type(exc).__name__}: {exc}"}


def release_device(torch, dev) -> dict | None:
    """Before the CLI runs (review 14a #9): drop this process's cached device memory, and
    name its pid to the child (EXPECTED_PIDS_ENV), which then lists it as expected rather
    than as another user of the GPU. Returns what this process still holds (CUDA only)."""
    import gc
    import os

    from rooflab.probe.gpu.load import EXPECTED_PIDS_ENV

    if dev.type != "cuda":
        return None
    gc.collect()
    torch.cuda.empty_cache()
    pids = [w for w in os.environ.get(EXPECTED_PIDS_ENV, "").split(",") if w]
    os.environ[EXPECTED_PIDS_ENV] = ",".join([*pids, str(os.getpid())])
    return {"pid": os.getpid(), "reserved_bytes": float(torch.cuda.memory_reserved(dev)),
            "env": EXPECTED_PIDS_ENV}


def _rehearsal():
    """benchmarks/gpu_rehearsal.py, the CPU dry run's Triton rehearsal (imported on the CPU
    device only: the CUDA run never loads it)."""
    import gpu_rehearsal

    return gpu_rehearsal


def _save(outdir: Path, report: dict) -> None:
    """gpu_check.json as far as the run has got (atomic: a cut-short run leaves a whole file)."""
    write_json(outdir / "gpu_check.json", _finite(report))


def _finite(obj):
    """JSON has no inf/nan: null. What JSON cannot hold (a numpy or ctypes number, a torch
    dtype) becomes a number where it is one, else its text: the report must not fail."""
    if isinstance(obj, bool) or obj is None or isinstance(obj, (str, int)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    try:
        return _finite(float(obj))
    except (TypeError, ValueError):
        return str(obj)


if __name__ == "__main__":
    sys.exit(main())

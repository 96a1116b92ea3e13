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
(gpu_check_retry.py), kernel resources and device memory (gpu_check_device.py), the CLI
runs (gpu_check_cli.py), and the dry run's Triton rehearsal (gpu_rehearsal.py).
"""

from __future__ import annotations

import argparse
import faulthandler
import sys
import time
import traceback
from dataclasses import dataclass
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
from gpu_check_cli import MIN_CLI_S, cli_runs, cli_timeouts  # noqa: E402
from gpu_check_device import kernel_resources, release_device  # noqa: E402
from gpu_check_refs import (  # noqa: E402, F401 — reference_sizes: the tests read it here
    draw,
    log,
    log_errors,
    reference_sizes,
    time_references,
)
from gpu_check_report import (  # noqa: E402, F401 — the names the tests read from here
    L2_CHECK,
    PROBE_BUDGET_S,
    checks,
    failed_table,
    first_line,
    int8_gemm_row,
    is_h200_sxm,
    json_safe,
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
# The CLI runs come last and get what is left (gpu_check_cli.py).
TOTAL_BUDGET_S = 200.0
# Past this the run is stuck in this process (the CLI runs end by TOTAL_BUDGET_S): every
# thread's stack goes to stderr and it exits (1), so the device tool gets where it hung
# (gpu_check.json has the stages done), not a silent kill at its own timeout.
HANG_EXIT_S = 250.0


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


@dataclass
class _Run:
    """What the steps of one check share (not frozen: each step adds to the report)."""

    args: argparse.Namespace
    torch: object
    dev: object
    mode: str
    started: float
    report: dict
    problems: list | None = None   # the Triton kernels' disagreements with torch, if checked
    rehearse: bool = False         # the CPU dry run rehearses the Triton stages


def _check(args) -> int:
    """The steps in order; one that loses the CUDA context ends in _lost."""
    run = _open(args, time.perf_counter())
    if isinstance(run, int):
        return run
    if (run.dev.type == "cuda" or run.rehearse) and not retry.triton_off():
        run.problems, lost = triton_checks(run.torch, run.dev, run.report)
        _save(args.outdir, run.report)
        if lost:
            return _lost(run, *lost)
    t0 = time.perf_counter()
    try:
        profile = _probe(run)
    except Exception as exc:  # noqa: BLE001 — keep what is known for the next try
        return _probe_failed(run, exc)
    stage_s = {"start": t0 - run.started, "probe": time.perf_counter() - t0}
    profile_doc = _keep_profile(run, profile)
    if lost := profile.extras["gpu"].get("context_lost"):
        return _lost(run, f"probe {lost['stage']}", lost["error"])
    run.report.update(probe_wall_s=stage_s["probe"], profile=profile_doc)
    _save(args.outdir, run.report)
    placed, skipped = _references_and_chart(run, profile, stage_s)
    cli = _cli_stage(run, placed, stage_s)
    results = _results(run, profile, placed, cli, stage_s["probe"], skipped)
    return _finish(run, profile, placed, results, stage_s)


def _open(args, started: float) -> _Run | int:
    """Refuses TRITON_INTERPRET on CUDA (exit 2), opens the device and starts the report
    (with the first try's, on a re-run, and the CPU dry run's Triton rehearsal)."""
    mode = args.mode or ("quick" if args.quick else "default")
    from rooflab.probe.gpu import interpreter_refusal
    from rooflab.probe.gpu.identity import parse_torch_device

    if parse_torch_device(args.device)[0] == "cuda" and (why := interpreter_refusal()):
        # Before torch and Triton load: the interpreter would eat the whole device run.
        print(f"error: {why}", file=sys.stderr, flush=True)
        return 2
    import torch

    from rooflab.probe.gpu.identity import open_device

    dev = open_device(torch, args.device)
    if dev.type == "cuda":
        torch.cuda.set_device(dev)   # events, Triton launches and measure() use this device
    args.outdir.mkdir(parents=True, exist_ok=True)
    report: dict = {"device": args.device, "mode": mode, "errors": {}}
    if args.retry:   # the first try's report, before this one replaces it
        report.update(retry=args.retry, first_try=retry.first_try(args.outdir))
    run = _Run(args, torch, dev, mode, started, report)
    if dev.type == "cpu" and (rehearsal := _rehearsal().start(torch, dev)) is not None:
        # TRITON_INTERPRET=1 on the CPU dry run: the Triton stages below run under the
        # interpreter, as on CUDA (review r4 F2); a line says why when they cannot.
        report["rehearsal"], run.rehearse = rehearsal, rehearsal["triton"]
        if rehearsal.get("why"):
            print(rehearsal["why"], flush=True)
    return run


def _probe(run: _Run):
    """probe_gpu with its progress lines (the dry run's rehearsal: Triton, tiny sizes)."""
    from rooflab.probe.gpu import probe_gpu

    def progress(stage, fraction):
        log(f"[{fmt_fraction(fraction):>5}] {stage}")
    if run.rehearse:
        with _rehearsal().tiny_sizes(run.torch, run.dev, run.mode):
            return probe_gpu(run.args.device, run.mode, progress=progress, triton=True)
    return probe_gpu(run.args.device, run.mode, progress=progress)


def _probe_failed(run: _Run, exc: Exception) -> int:
    """The probe raised (called inside its except clause, for the traceback): a lost CUDA
    context re-runs without the stage that lost it; else the failed table, with the
    reference kernels timed anyway."""
    errors = run.report["errors"]
    errors["probe"] = traceback.format_exc()
    if (line := context_lost(run.torch, run.dev)) is not None:
        stage = (getattr(exc, "context_lost", None) or {}).get("stage")
        for name, tb in (getattr(exc, "stage_errors", None) or {}).items():
            errors[f"probe {name}"] = tb
        return _lost(run, f"probe {stage}" if stage else "probe", line)
    _save(run.args.outdir, run.report)
    # The reference kernels need no profile: on a one-shot device run their times
    # (bf16 matmul, copy) still say what the GPU does.
    rows = unplaced(time_references(run.torch, run.dev, run.mode, errors))
    run.report.update(reference=rows, total_wall_s=time.perf_counter() - run.started)
    _save(run.args.outdir, run.report)
    log_errors(errors)
    print(failed_table(rows, run.problems, errors, run.report["total_wall_s"]))
    return 1


def _keep_profile(run: _Run, profile) -> dict | None:
    """profile.json saved, the profile as JSON (None if it cannot be), its stages' errors."""
    path, errors = run.args.outdir / "profile.json", run.report["errors"]
    _guarded(errors, "profile.json", lambda: save_profile(path, profile))
    profile_doc = _guarded(errors, "profile as JSON", lambda: profile_to_dict(profile))
    for stage, tb in profile.extras["gpu"].get("errors", {}).items():
        errors[f"probe {stage}"] = tb
    return profile_doc


def _references_and_chart(run: _Run, profile, stage_s: dict) -> tuple[list, dict]:
    """The reference kernels timed and placed on the roof, the chart drawn: (placed rows,
    the references skipped). A reference that loses the CUDA context skips the rest; the
    chart and the CLI runs (fresh processes) need no context of this one: no re-run."""
    errors, t1 = run.report["errors"], time.perf_counter()
    kernels = time_references(run.torch, run.dev, run.mode, errors,
                              skipped := run.report.setdefault("references_skipped", {}))
    placed = _guarded(errors, "place", lambda: place(profile, kernels), [])
    stage_s["references"] = time.perf_counter() - t1
    t1 = time.perf_counter()
    run.report["chart"] = _guarded(errors, "chart", lambda: draw(
        profile, kernels, run.args.outdir / "roofline.png"))
    stage_s["chart"] = time.perf_counter() - t1
    run.report["kernel_resources"] = kernel_resources(run.dev)
    return placed, skipped


def _cli_stage(run: _Run, placed: list, stage_s: dict) -> dict | None:
    """The CLI's quick probe in fresh processes (on CUDA, or with --cli), after this one
    lets go of the device, within what is left of the budget: its result (None when not
    asked for, when it raised or had no time)."""
    args, report, errors = run.args, run.report, run.report["errors"]
    if not (args.cli if args.cli is not None else run.dev.type == "cuda"):
        return None
    report.update(reference=placed, stage_s=stage_s)
    report["cli_shares_gpu_with"] = _guarded(errors, "release device",
                                             lambda: release_device(run.torch, run.dev))
    _save(args.outdir, report)
    t1 = time.perf_counter()
    cli_device = "torch-cpu" if run.dev.type == "cpu" else str(run.dev)
    cold_s, warm_s = cli_timeouts(args.total_s - (t1 - run.started))
    cli = None
    try:
        cli = cli_runs(cli_device, args.outdir, cold_s, warm_s)
    except Exception:  # noqa: BLE001 — the table still comes
        errors["cli probe"] = traceback.format_exc()
    if cli is not None:
        report["cli_probe"] = cli
        if cli.get("rc"):
            errors["cli probe"] = cli["stderr_tail"]
        if (cli.get("cold") or {}).get("rc"):
            # A user's first run is reported, not judged: kept out of `errors` (and so
            # out of the exit status), its stderr in the report.
            report["cli_cold_error"] = cli["cold"]["stderr_tail"]
    elif warm_s is None:
        report["cli_probe"] = {"skipped": f"under {MIN_CLI_S:.0f} s left of the "
                                          f"{args.total_s:.0f} s budget"}
    stage_s["cli probe"] = time.perf_counter() - t1
    return cli


def _results(run: _Run, profile, placed: list, cli: dict | None, wall_probe: float,
             skipped: dict) -> list[tuple[str, str, str]]:
    """The table's rows: the checks, then what the other steps add (preflight, int8 GEMM,
    rehearsal, the CLI's neighbours, failed stages and skips, the re-run's first row)."""
    report, problems = run.report, run.problems
    results = _guarded(report["errors"], "checks",
                       lambda: checks(profile, placed, wall_probe, run.mode, problems, cli), [])
    if (row := int8_gemm_row(report.get("int8_gemm_check"))) is not None:
        results.insert(1 if problems is not None else 0, row)
    if report.get("preflight"):
        results.insert(0, ("Triton builds and launches a kernel", "FAIL",
                           "; ".join(report["preflight"])))
    if report.get("rehearsal"):
        results.append(_rehearsal().row(report["rehearsal"]))
    if report.get("cli_shares_gpu_with"):
        results.append(("CLI runs share the GPU with this idle check", "info",
                        shares_text(report["cli_shares_gpu_with"], str(run.dev))))
    if (report.get("cli_probe") or {}).get("skipped"):
        results.append(("`rooflab probe --quick`", "info",
                        f"skipped: {report['cli_probe']['skipped']}"))
    results += stage_rows(report["errors"], {**(profile.extras["gpu"].get("skipped") or {}),
                                             **skipped})
    if run.args.retry:
        results.insert(0, retry.lost_row(run.args.retry))
    return results


def _finish(run: _Run, profile, placed: list, results: list, stage_s: dict) -> int:
    """The table (a plain one if it raised), the last gpu_check.json, the tracebacks and
    the table printed last: exit 1 on a FAIL row or any error, else 0."""
    report, wall_total = run.report, time.perf_counter() - run.started
    text = _guarded(report["errors"], "table",
                    lambda: table(profile, placed, results, wall_total, stage_s))
    if text is None:
        results.append(("stage failed: table", "FAIL", first_line(report["errors"]["table"])))
        text = plain_table(results, wall_total)
    # probe_wall_s and profile, set after the probe, stay as they are (and where, in the JSON)
    report.update(total_wall_s=wall_total, stage_s=stage_s, reference=placed,
                  checks=[{"name": n, "status": s, "detail": d} for n, s, d in results])
    _save(run.args.outdir, report)
    log_errors(report["errors"])
    print(text)
    return 1 if any(s == "FAIL" for _, s, _ in results) or report["errors"] else 0


def _lost(run: _Run, step: str, line: str) -> int:
    """The CUDA context is gone after `step`: one re-run in a fresh process, or what is known."""
    return retry.after_lost(run.args, run.report, step, line, run.started, _save)


def _rehearsal():
    """benchmarks/gpu_rehearsal.py, the CPU dry run's Triton rehearsal (imported on the CPU
    device only: the CUDA run never loads it)."""
    import gpu_rehearsal

    return gpu_rehearsal


def _save(outdir: Path, report: dict) -> None:
    """gpu_check.json as far as the run has got (atomic: a cut-short run leaves a whole file)."""
    write_json(outdir / "gpu_check.json", json_safe(report))


if __name__ == "__main__":
    sys.exit(main())

"""The whole GPU side of rooflab in one call, for one lease of a device machine.

    PYTHONPATH=src python3 benchmarks/gpu_check.py OUTDIR            # CUDA, default probe
    PYTHONPATH=src python3 benchmarks/gpu_check.py OUTDIR --device cpu --quick   # dry run

1. checks the Triton kernels against torch (CUDA only: correct first, METHOD.md);
2. probes the device (rooflab.probe.gpu.probe_gpu) and saves the profile;
3. times reference kernels (bf16 matmul, copy, softmax) and places them on the roof;
4. runs the user's command, `rooflab probe --device cuda:N --quick -o OUTDIR/probe_quick.json`,
   in a fresh process (CUDA only, or with --cli): the CLI end to end and its 20 s budget,
   once with an empty Triton cache (a user's first run, reported) and once warm (judged),
   each within what is left of the whole check's TOTAL_BUDGET_S (skipped, and said, if
   too little is left);
5. checks the issue-4 targets: copy >= 4.2 TB/s (read + write) and bf16 matmul >= 760
   TFLOP/s on an H200 SXM (by catalog match: not an H200 NVL or a GH200), every measured
   ceiling <= its nominal one (or flagged), the L2 plateau found, the probe within its
   time budget;
6. if the probe itself fails, still times the reference kernels and prints them last;
7. writes OUTDIR/gpu_check.json (rewritten after every stage, so a run cut short still
   leaves what it measured), OUTDIR/profile.json and OUTDIR/roofline.png, and prints the
   table last (the device tool returns the tail of the output).

Exit status 0 when every check passes (checks that do not apply say "n/a"), 1 otherwise.
Imports only what the device machine has (torch, triton, numpy, matplotlib; not plotly).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import traceback
from pathlib import Path

try:
    import rooflab  # noqa: F401
except ImportError:  # run from the source tree without PYTHONPATH
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from rooflab.files import write_json  # noqa: E402
from rooflab.hardware.profile import profile_to_dict, save_profile  # noqa: E402
from rooflab.model.kernel import Kernel  # noqa: E402
from rooflab.units import fmt_seconds, rate_unit, si  # noqa: E402

# Targets for an H200 (issue 4; FACTS.md: copy ~4.3 TB/s, bf16 8192^3 769-798 TFLOP/s).
H200_COPY_MIN = 4.2e12
H200_BF16_MIN = 760e12
# A reference kernel is the probe's own kind of work: above the measured roof by more than
# the run-to-run spread means the probe missed the peak (or the reference is miscounted).
REFERENCE_ABOVE_ROOF = 1.05
PROBE_BUDGET_S = {"quick": 20.0, "default": 60.0, "full": 600.0}
# One device run gets about four minutes: the whole check stays under TOTAL_BUDGET_S, so a
# slow stage (a cold Triton cache, a CLI run that hangs) still leaves the table and the JSON.
# The CLI runs come last and get what is left; each is skipped below MIN_CLI_S.
TOTAL_BUDGET_S = 200.0
CLI_TIMEOUT_S = 120.0
MIN_CLI_S = 25.0
# The copy and bf16 targets were measured on an H200 SXM, which torch and NVML call "NVIDIA
# H200". The H200 NVL (600 W, 835 dense bf16 TFLOP/s) and the GH200 ("NVIDIA GH200 480GB",
# 4.0 TB/s HBM3 on the 96 GB part) also contain "H200" but are other products.
H200_CATALOG_NAME = "NVIDIA H200 SXM"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def reference_kernels(torch, dev, quick: bool) -> list[tuple]:
    """(name, fn, flop by precision, bytes by level, unit) of the reference kernels."""
    cuda = dev.type == "cuda"
    n = 8192 if cuda else (128 if quick else 256)
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    elems = (256 << 20 if cuda else 1 << 20) if quick else (1 << 28 if cuda else 4 << 20)
    src, dst = torch.rand(elems, device=dev), torch.empty(elems, device=dev)
    rows, cols = (8192, 8192) if cuda else (256, 1024)
    x = torch.randn(rows, cols, device=dev, dtype=torch.bfloat16)
    # FLOP and bytes: 2 n^3 and compulsory traffic (FACTS.md); softmax 4 FLOP per element
    # and one read + one write, as rooflab.workloads.ops.softmax counts it.
    return [
        (f"matmul_bf16_{n}", lambda: torch.matmul(a, b), {"bf16": 2.0 * n ** 3},
         {"DRAM": 2.0 * 3 * n * n}, "tensor"),
        (f"copy_fp32_{elems * 4 >> 20}MiB", lambda: dst.copy_(src), {},
         {"DRAM": 2.0 * 4 * elems}, None),
        (f"softmax_bf16_{rows}x{cols}", lambda: torch.softmax(x, dim=-1),
         {"bf16": 4.0 * rows * cols}, {"DRAM": 2.0 * 2 * rows * cols}, "vector"),
    ]


def time_reference(torch, dev, spec, plan) -> tuple[Kernel, str]:
    """Time through rooflab.measure when the bench module has it, else the probe's timer."""
    name, fn, flop, nbytes, unit = spec
    try:
        import rooflab

        k = rooflab.measure(fn, flop=flop or {"fp32": 0.0}, bytes=nbytes, device=str(dev),
                            name=name, plan=plan)
        return k.with_(unit=unit, flop=flop), "rooflab.measure"
    except Exception as exc:  # noqa: BLE001 — a bench-module problem must not cost the run
        log(f"rooflab.measure failed for {name} ({exc}); timing with the probe's timer")
    from rooflab.probe.gpu.timing import clock_timer, cuda_timer, time_calls
    from rooflab.probe.timer import QUICK

    timer = cuda_timer(torch, dev, 256 << 20) if dev.type == "cuda" else clock_timer()
    t = time_calls(fn, timer, QUICK)
    return Kernel(name=name, flop=flop, bytes=nbytes, seconds=t.median, unit=unit,
                  samples=t.samples, provenance={"flop": "derived", "bytes": "derived",
                                                 "seconds": "measured"}), "probe timer"


def place(profile, kernels) -> list[dict]:
    """Each reference kernel against the measured roof: achieved and percent of roof."""
    from rooflab.model.analysis import analyze

    rows = []
    roof = profile.measured
    for k in kernels:
        row = {"kernel": k.name, "seconds": k.seconds, "flop": k.total_flop,
               "bytes": k.bytes.get("DRAM"), "timed_with": k.meta.get("timed_with")}
        if k.total_flop > 0:
            p = analyze(roof, [k], levels=["DRAM"]).points[0]
            row.update(achieved=p.achieved_flop_per_s, unit="FLOP/s", ai=p.ai,
                       percent_of_roof=p.percent_of_roof, bound=p.bound, ceiling=p.binding)
        else:
            bw = k.bytes["DRAM"] / k.seconds
            dram = roof.find_memory("DRAM")
            row.update(achieved=bw, unit="B/s", ai=0.0, bound="memory", ceiling="DRAM",
                       percent_of_roof=100.0 * bw / dram.value if dram else None)
        rows.append(row)
    return rows


def draw(profile, kernels, path: Path) -> str:
    """roofline.png through the chart module; a plain matplotlib chart if that fails."""
    roofs = [r for r in (profile.measured, profile.nominal) if r is not None]
    try:
        from rooflab.report.chart import plot_roofline, save_figure

        save_figure(plot_roofline(roofs, [k for k in kernels if k.total_flop > 0],
                                  title=f"{profile.name} (measured solid, nominal dashed)"),
                    path)
        return "rooflab.report.chart"
    except Exception as exc:  # noqa: BLE001
        log(f"chart module failed ({exc}); drawing a plain chart")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(8, 5))
    ai = np.logspace(-2, 4, 200)
    for roof, style in zip(roofs, ("-", "--"), strict=False):
        bw = roof.find_memory("DRAM")
        for c in roof.compute:
            if bw is not None:
                ax.loglog(ai, np.minimum(c.value, bw.value * ai), style, label=f"{roof.kind} "
                          f"{c.label}")
    for k in kernels:
        if k.total_flop > 0:
            ax.loglog(k.total_flop / k.bytes["DRAM"], k.total_flop / k.seconds, "o",
                      label=k.name)
    ax.set_xlabel("FLOP / byte (DRAM)")
    ax.set_ylabel("FLOP/s")
    ax.legend(fontsize=6)
    fig.savefig(path, dpi=120)
    return "matplotlib"


def is_h200_sxm(name: str) -> bool:
    """Whether the H200 targets apply: the device's name matches the H200 SXM's catalog entry
    (not merely contains "H200")."""
    try:
        from rooflab.hardware.catalog import match_device_name

        dev = match_device_name(name)
    except Exception:  # noqa: BLE001 — no catalog, no targets: the check says n/a
        return False
    return dev is not None and dev.name == H200_CATALOG_NAME


def cli_timeouts(remaining_s: float) -> tuple[float | None, float | None]:
    """(cold, warm) timeouts of the two CLI runs in the `remaining_s` seconds left of the
    budget; None skips a run. The warm run (judged) keeps at least half; the cold one
    (reported only) goes first when MIN_CLI_S is left for it after the warm one's share."""
    if remaining_s < MIN_CLI_S:
        return None, None
    warm = min(CLI_TIMEOUT_S, remaining_s / 2 if remaining_s >= 2 * MIN_CLI_S else remaining_s)
    cold = min(CLI_TIMEOUT_S, remaining_s - warm)
    return (cold if cold >= MIN_CLI_S else None), warm


def checks(profile, placed, wall_probe: float, mode: str, problems: list[str] | None,
           cli: dict | None = None) -> list:
    """(name, status, detail): status is PASS, FAIL, n/a, or info (reported, not judged)."""
    cuda = profile.host.get("backend") == "cuda"
    h200 = is_h200_sxm(str(profile.host.get("name", "")))
    m = profile.measured
    out = []
    if problems is not None:
        out.append(("Triton kernels agree with torch", "FAIL" if problems else "PASS",
                    "; ".join(problems) or "copy, triad, read sweep, fma, empty"))
    dram = m.find_memory("DRAM")
    bf16 = m.find_compute("bf16", "tensor") or m.find_compute("bf16")
    for label, c, target, unit in (("copy >= 4.2 TB/s (read + write)", dram, H200_COPY_MIN,
                                    "B/s"),
                                   ("bf16 matmul >= 760 TFLOP/s", bf16, H200_BF16_MIN,
                                    "FLOP/s")):
        got = si(c.value, unit) if c else "missing"
        if not h200:
            out.append((label, "n/a", f"targets are for an H200 SXM; got {got}"))
        else:
            ok = c is not None and c.value >= target
            out.append((label, "PASS" if ok else "FAIL", got))
    rows = profile.extras["gpu"]["nominal_checks"]
    above = [r["ceiling"] for r in rows if r["above_nominal"]]
    if profile.nominal is None:
        out.append(("measured <= nominal", "n/a", "no catalog entry for this device"))
    else:
        out.append(("measured <= nominal (else flagged)", "FAIL" if above else "PASS",
                    f"above: {', '.join(above)} (flagged)" if above else
                    f"{len(rows)} ceilings compared"))
    l2 = m.find_memory("L2")
    plateaus = profile.extras["gpu"]["sweep"].get("main", {}).get("plateaus", {})
    detail = ", ".join(f"{k} {si(v['bytes_per_s'], 'B/s')} at {v['first_bytes'] / 2**20:.3g}-"
                       f"{v['last_bytes'] / 2**20:.3g} MiB" for k, v in plateaus.items())
    out.append(("L2 plateau found", ("PASS" if l2 else "FAIL") if cuda else "n/a",
                detail or "no plateau"))
    budget = PROBE_BUDGET_S[mode]
    out.append((f"probe <= {budget:.0f} s", ("PASS" if wall_probe <= budget else "FAIL")
                if cuda else "n/a", f"{wall_probe:.1f} s"))
    over = [f"{r['kernel']} {r['percent_of_roof']:.0f} %" for r in placed
            if (r.get("percent_of_roof") or 0) > 100 * REFERENCE_ABOVE_ROOF]
    out.append(("reference kernels on or below the measured roof",
                ("FAIL" if over else "PASS") if cuda else "n/a",
                ", ".join(over) or f"{len(placed)} kernels <= {REFERENCE_ABOVE_ROOF:.0%}"))
    load = profile.extras.get("device_load")
    if load is not None:
        # other GPU users and throttling explain low ceilings: reported, not judged
        out.append(("other GPU users / throttling during the probe", "info",
                    _load_text(load)))
    if cli is not None:
        ok = cli["rc"] == 0 and cli["wall_s"] <= PROBE_BUDGET_S["quick"]
        out.append((f"`rooflab probe --quick` <= {PROBE_BUDGET_S['quick']:.0f} s",
                    ("PASS" if ok else "FAIL") if cuda else "n/a",
                    f"exit {cli['rc']}, {cli['wall_s']:.1f} s wall (probe "
                    f"{cli.get('probe_s') or 0:.1f} s), {cli.get('ceilings', 0)} ceilings"
                    + (f"; {cli['stderr_tail'][-200:]}" if cli["rc"] else "")))
        cold = cli.get("cold")
        if cold is not None:
            # A user's first run also compiles the Triton kernels: reported, not judged.
            out.append(("`rooflab probe --quick`, empty Triton cache", "info",
                        f"exit {cold['rc']}, {cold['wall_s']:.1f} s wall (probe "
                        f"{cold.get('probe_s') or 0:.1f} s)"))
    return out


def _load_text(load: dict) -> str:
    if not load.get("available"):
        return f"not read: {load.get('method', '')[:120]}"
    others = load.get("other_processes") or []
    held = {k: v for k, v in (load.get("throttled_s") or {}).items() if v}
    return (f"{len(others)} other process(es); utilisation before "
            f"{load.get('utilization_before')} %; throttle: "
            f"{', '.join(load.get('throttle_reasons') or []) or 'none'}"
            + (f"; held {', '.join(f'{k} {v:.2f} s' for k, v in held.items())}" if held
               else ""))


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
        result.update(probe_s=gpu.get("wall_s"), errors=gpu.get("errors"),
                      ceilings=len(measured.get("compute", [])) + len(measured.get("memory", [])))
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


def time_references(torch, dev, mode: str, errors: dict) -> list:
    """The reference kernels timed; a failing one goes to `errors` and the rest still run."""
    kernels = []
    try:
        specs = reference_kernels(torch, dev, quick=mode == "quick")
    except Exception:  # noqa: BLE001 — e.g. out of memory: no references, the rest runs
        errors["reference kernels"] = traceback.format_exc()
        return kernels
    for spec in specs:
        try:
            k, how = time_reference(torch, dev, spec, "quick")
            kernels.append(k.with_(meta={**k.meta, "timed_with": how}))
        except Exception:  # noqa: BLE001
            errors[spec[0]] = traceback.format_exc()
    return kernels


def unplaced(kernels) -> list[dict]:
    """Reference rows without a roof to place them on (the probe failed): achieved only."""
    rows = []
    for k in kernels:
        compute = k.total_flop > 0
        rows.append({"kernel": k.name, "seconds": k.seconds, "flop": k.total_flop,
                     "bytes": k.bytes.get("DRAM"), "timed_with": k.meta.get("timed_with"),
                     "achieved": (k.total_flop if compute else k.bytes["DRAM"]) / k.seconds,
                     "unit": "FLOP/s" if compute else "B/s", "percent_of_roof": None,
                     "bound": "-"})
    return rows


def failed_table(rows, problems, errors: dict, wall_total: float) -> str:
    """What a run whose probe failed still prints last: the errors' last lines, the Triton
    check and the reference kernels' rates."""
    lines = ["== rooflab GPU check: the probe FAILED (tracebacks above and in gpu_check.json) =="]
    for name, tb in errors.items():
        last = (str(tb).strip().splitlines() or [""])[-1]
        lines.append(f"[FAIL] {name}: {last[:200]}")
    if problems is not None:
        lines.append(f"[{'FAIL' if problems else 'PASS':^4}] Triton kernels agree with torch: "
                     f"{'; '.join(problems) or 'copy, triad, read sweep, fma, empty'}")
    lines.append(f"{'reference kernel':<30}{'time':>10}{'achieved':>16}")
    for r in rows:
        lines.append(f"{r['kernel']:<30}{fmt_seconds(r['seconds']):>10}"
                     f"{si(r['achieved'], r['unit']):>16}")
    lines.append(f"total {wall_total:.1f} s")
    return "\n".join(lines)


def table(profile, placed, results, wall_total: float, stage_s: dict | None = None) -> str:
    m, nominal = profile.measured, profile.nominal
    lines = [f"== rooflab GPU check: {profile.name} "
             f"(torch {profile.host.get('torch')}, triton {profile.host.get('triton')}) ==",
             f"{'ceiling':<16}{'measured':>14}{'nominal':>14}{'ratio':>8}{'spread':>8}  method"]
    for c in m.compute + m.memory:
        unit = rate_unit(c.precision) if c.is_compute else "B/s"   # int8: OP/s (TOPS)
        ref = None
        if nominal is not None:
            ref = (next((n for n in nominal.compute if n.precision == c.precision
                         and n.unit in (c.unit, None)), None) if c.is_compute
                   else nominal.find_memory(c.level))
        ratio = f"{c.value / ref.value:.2f}" if ref else "-"
        spread = f"{c.spread:.1%}" if c.spread is not None else "-"
        flag = " !" if c.warnings else ""
        nominal_text = si(ref.value, unit) if ref else "-"
        lines.append(f"{c.label:<16}{si(c.value, unit):>14}{nominal_text:>14}"
                     f"{ratio:>8}{spread:>8}  {c.method[:60]}{flag}")
    lines.append(f"{'launch overhead':<16}{fmt_seconds(m.overhead_s):>14}")
    for key, v in profile.extras["gpu"]["overheads"].items():
        lines.append(f"  {key:<38}{fmt_seconds(v):>12}")
    lines.append(f"{'reference kernel':<30}{'time':>10}{'achieved':>16}{'% roof':>8}  bound")
    for r in placed:
        pct = f"{r['percent_of_roof']:.0f}" if r.get("percent_of_roof") is not None else "-"
        lines.append(f"{r['kernel']:<30}{fmt_seconds(r['seconds']):>10}"
                     f"{si(r['achieved'], r['unit']):>16}{pct:>8}  {r['bound']}")
    before, after = profile.host.get("clocks_before", {}), profile.host.get("clocks_after", {})
    lines.append(f"clocks before {before}")
    lines.append(f"clocks after  {after}")
    for name, status, detail in results:
        lines.append(f"[{status:^4}] {name}: {detail}")
    stages = ", ".join(f"{k} {v:.1f} s" for k, v in (stage_s or {}).items())
    lines.append(f"total {wall_total:.1f} s" + (f" ({stages})" if stages else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--device", default="cuda", help="cuda, cuda:N, or cpu (dry run)")
    ap.add_argument("--quick", action="store_true", help="the probe's quick mode")
    ap.add_argument("--mode", default=None, choices=("quick", "default", "full"))
    ap.add_argument("--cli", action=argparse.BooleanOptionalAction, default=None,
                    help="also run `rooflab probe --quick` in a fresh process (default: on CUDA)")
    args = ap.parse_args(argv)
    mode = args.mode or ("quick" if args.quick else "default")
    started = time.perf_counter()
    import torch

    from rooflab.probe.gpu import probe_gpu
    from rooflab.probe.gpu.identity import open_device

    dev = open_device(torch, args.device)
    if dev.type == "cuda":
        torch.cuda.set_device(dev)   # events, Triton launches and measure() use this device
    args.outdir.mkdir(parents=True, exist_ok=True)
    report: dict = {"device": args.device, "mode": mode, "errors": {}}
    problems = None
    if dev.type == "cuda":
        try:
            from rooflab.probe.gpu.kernels import check_kernels

            problems = check_kernels(torch, dev)
        except Exception as exc:  # noqa: BLE001 — Triton missing or failing: say so, go on
            problems = [f"{type(exc).__name__}: {exc}"]
            report["errors"]["check_kernels"] = traceback.format_exc()
        report["kernel_problems"] = problems
        _save(args.outdir, report)
    t0 = time.perf_counter()
    try:
        profile = probe_gpu(args.device, mode, progress=lambda s, f: log(f"[{f:4.0%}] {s}"))
    except Exception:  # noqa: BLE001 — keep what is known for the next try
        report["errors"]["probe"] = traceback.format_exc()
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
    save_profile(args.outdir / "profile.json", profile)
    for stage, tb in profile.extras["gpu"].get("errors", {}).items():
        report["errors"][f"probe {stage}"] = tb
    stage_s = {"start": t0 - started, "probe": wall_probe}
    report.update(probe_wall_s=wall_probe, profile=profile_to_dict(profile))
    _save(args.outdir, report)
    t1 = time.perf_counter()
    placed = []
    kernels = time_references(torch, dev, mode, report["errors"])
    try:
        placed = place(profile, kernels)
    except Exception:  # noqa: BLE001
        report["errors"]["place"] = traceback.format_exc()
    stage_s["references"] = time.perf_counter() - t1
    t1 = time.perf_counter()
    try:
        report["chart"] = draw(profile, kernels, args.outdir / "roofline.png")
    except Exception:  # noqa: BLE001
        report["errors"]["chart"] = traceback.format_exc()
    stage_s["chart"] = time.perf_counter() - t1
    cli = None
    if args.cli if args.cli is not None else dev.type == "cuda":
        report.update(reference=placed, stage_s=stage_s)
        _save(args.outdir, report)
        t1 = time.perf_counter()
        cli_device = "torch-cpu" if dev.type == "cpu" else str(dev)
        cold_s, warm_s = cli_timeouts(TOTAL_BUDGET_S - (t1 - started))
        try:
            cli = cli_runs(cli_device, args.outdir, cold_s, warm_s)
        except Exception:  # noqa: BLE001 — the table still comes
            report["errors"]["cli probe"] = traceback.format_exc()
        if cli is not None:
            report["cli_probe"] = cli
            for key, run in (("cli probe", cli), ("cli probe, empty Triton cache",
                                                  cli.get("cold") or {})):
                if run.get("rc"):
                    report["errors"][key] = run["stderr_tail"]
        elif warm_s is None:
            report["cli_probe"] = {"skipped": f"under {MIN_CLI_S:.0f} s left of the "
                                              f"{TOTAL_BUDGET_S:.0f} s budget"}
        stage_s["cli probe"] = time.perf_counter() - t1
    results = checks(profile, placed, wall_probe, mode, problems, cli)
    if (report.get("cli_probe") or {}).get("skipped"):
        results.append(("`rooflab probe --quick`", "info",
                        f"skipped: {report['cli_probe']['skipped']}"))
    wall_total = time.perf_counter() - started
    report.update(probe_wall_s=wall_probe, total_wall_s=wall_total, stage_s=stage_s,
                  reference=placed,
                  checks=[{"name": n, "status": s, "detail": d} for n, s, d in results],
                  profile=profile_to_dict(profile))
    _save(args.outdir, report)
    for name, tb in report["errors"].items():
        log(f"--- error in {name} ---\n{tb}")
    print(table(profile, placed, results, wall_total, stage_s))
    return 1 if any(s == "FAIL" for _, s, _ in results) or report["errors"] else 0


def _save(outdir: Path, report: dict) -> None:
    """gpu_check.json as far as the run has got (atomic: a cut-short run leaves a whole file)."""
    write_json(outdir / "gpu_check.json", _finite(report))


def _finite(obj):
    """JSON has no inf/nan: write them as null."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


if __name__ == "__main__":
    sys.exit(main())

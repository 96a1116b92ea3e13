"""How `rooflab plot` and `rooflab report` scale to an application's thousands of kernels.

    python benchmarks/scale_speed.py [--plot 500,5000] [--report 5000,20000]
                                     [--html 5000,20000] [--repeat 1]

Review 12c K: `plot` took 79 s on 500 kernels and `report` grew quadratically. Kernels
(seeded) spread over AI 0.01-1000 at 3-95 % of the NVIDIA T4 roof (fp32, DRAM), one time
each, as an ncu export of an application gives. Each case is timed with a reference of the
same points in the same run (the host is shared; the ratio is what to compare):
  plot       plot_roofline(roof, kernels) + its PNG bytes (what `rooflab plot` does)
  scatter    a plain matplotlib scatter of the same points on log-log axes, same figure size,
             saved as PNG: the least any chart of them costs
  report     `rooflab report FILE --on T4` in this process, stdout to memory (read, analyse,
             diagnose every kernel, print the top 5)
  analyze    analyze(roof, kernels) alone: the per-kernel roofline model, linear
  html       `rooflab report FILE --on T4 -o x.html` (the terminal summary, the plotly chart,
             its no-JavaScript static chart and the tables), against the same report
             without -o: what the self-contained page adds
Prints one line per case: seconds, the reference's seconds, the ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import random
import sys
import tempfile
import time


def spread_kernels(n: int, roof):
    """n kernels over AI 0.01-1000 at 3-95 % of the roof, (i + 1) us to ~100 ms, seeded."""
    from rooflab.model.kernel import Kernel

    rng = random.Random(0)
    peak = roof.find_compute("fp32").value
    bw = roof.bandwidth("DRAM").value
    out = []
    for i in range(n):
        ai = 10 ** rng.uniform(-2, 3)
        flop = 1e6 * 10 ** rng.uniform(0, 5)
        seconds = flop / (min(peak, ai * bw) * rng.uniform(0.03, 0.95))
        out.append(Kernel(name=f"kernel_{i:05d}", flop={"fp32": flop},
                          bytes={"DRAM": flop / ai}, seconds=seconds))
    return out


def timed(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def plot_case(n: int, roof, repeat: int) -> None:
    from matplotlib.figure import Figure

    from rooflab.report.chart import figure_bytes, plot_roofline

    kernels = spread_kernels(n, roof)

    def chart():
        figure_bytes(plot_roofline([roof], kernels), "png")

    def scatter():
        fig = Figure(figsize=(9.0, 6.0), layout="constrained")
        ax = fig.add_subplot()
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.scatter([k.flop["fp32"] / k.bytes["DRAM"] for k in kernels],
                   [k.flop["fp32"] / k.seconds for k in kernels], s=64)
        fig.savefig(io.BytesIO(), format="png", dpi=150)

    t_ref, t = timed(scatter, repeat), timed(chart, repeat)
    print(f"plot   {n:>6} kernels: {t:8.2f} s; plain scatter {t_ref:6.2f} s; "
          f"ratio {t / t_ref:6.1f}x", flush=True)


def _kernel_file(tmp: str, n: int, roof) -> str:
    from rooflab.model.schema import kernel_to_dict

    path = os.path.join(tmp, f"k{n}.json")
    with open(path, "w") as f:
        json.dump({"schema_version": 1,
                   "kernels": [kernel_to_dict(k) for k in spread_kernels(n, roof)]}, f)
    return path


def _report(*args: str):
    from rooflab.cli.main import main

    def run():
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            rc = main(["report", *args, "--on", "T4"])
        assert rc == 0, rc
    return run


def report_case(n: int, roof, repeat: int) -> None:
    from rooflab.model.analysis import analyze

    kernels = spread_kernels(n, roof)
    with tempfile.TemporaryDirectory() as tmp:
        path = _kernel_file(tmp, n, roof)
        t_ref, t = timed(lambda: analyze(roof, kernels), repeat), timed(_report(path), repeat)
    print(f"report {n:>6} kernels: {t:8.2f} s; analyze() alone {t_ref:6.2f} s; "
          f"ratio {t / t_ref:6.1f}x", flush=True)


def html_case(n: int, roof, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = _kernel_file(tmp, n, roof)
        page = os.path.join(tmp, "x.html")
        t_ref, t = timed(_report(path), repeat), timed(_report(path, "-o", page), repeat)
        size = os.path.getsize(page)
    print(f"html   {n:>6} kernels: {t:8.2f} s ({size / 1e6:.1f} MB); report without -o "
          f"{t_ref:6.2f} s; ratio {t / t_ref:6.1f}x", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plot", default="500,5000", help="kernel counts for plot ('' for none)")
    ap.add_argument("--report", default="5000,20000", help="kernel counts for report")
    ap.add_argument("--html", default="5000,20000", help="kernel counts for report -o x.html")
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    from rooflab.hardware.catalog import lookup_roof

    roof = lookup_roof("T4")
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node()}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}; best of {a.repeat}", flush=True)
    for n in [int(x) for x in a.plot.split(",") if x]:
        plot_case(n, roof, a.repeat)
    for n in [int(x) for x in a.report.split(",") if x]:
        report_case(n, roof, a.repeat)
    for n in [int(x) for x in a.html.split(",") if x]:
        html_case(n, roof, a.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How long the roofline chart takes, and how much of it is the label layout.

    python benchmarks/chart_speed.py [--repeat 5] [--sets zoo,many] [--many 200] [--layout-only]
    python benchmarks/chart_speed.py --against OLD [--repeat 3] [--sets zoo,many,plot500]

Kernel sets (zoo and many on the EPYC 9654 catalog roof: fp64/fp32/bf16/int8 ceilings, DRAM):
  zoo  the bench zoo's 20 kernels (their exact FLOP and bytes from bench.zoo.specs(), a
       made-up time each: 1-5 ms, so they sit at 1-100 % of the roof, as a real run does)
  many 200 (--many) synthetic kernels over AI 0.01-1000 at 3-95 % of the roof (seeded);
       one line of label each, and a crowded chart: the layout's worst case
  plot500  benchmarks/scale_speed.py's 500 kernels on the T4 roof, the chart's default
       labels (the 20 longest); --against only
Each is timed, best of --repeat, interleaved in the same run (the host is shared):
  chart      plot_roofline(roof, kernels) + the PNG bytes (what `rooflab plot` does): the
             chart's values, the label layout, matplotlib's drawing and savefig
  reference  the same figure drawn and saved from the display already worked out (no
             layout, no values): matplotlib's own work
  layout     roofline_data() alone (values + label layout; no matplotlib)
and prints the times and chart / reference (1.0 would be a free layout). --layout-only
skips matplotlib (layout times only, no ratio against drawing). Every kernel is labelled
(labels=0); thousands of kernels, where the chart labels only the longest 20, are timed by
benchmarks/scale_speed.py.

--against OLD (a checkout of an older commit: `git worktree add /tmp/old f40b0ea`) times
roofline_data() (values + label layout) of each set under OLD/src and under this tree's
src, each in a fresh process, old and new interleaved --repeat times (the host is shared),
and prints old and new (best of the repeats), old / new, and whether the labels' texts
and offsets are byte-identical (a digest of their repr).

--against OLD --cli 10000,100000 times the whole `rooflab plot k.csv --on H100 -o x.png`
instead (a kernel CSV of that many rows, name,flop,bytes,seconds,precision, written to a
temp folder; seeded), old and new interleaved, and says whether the PNG bytes and the
printed lines are the same, with the wall time and the CPU time (user + system) of
each: on a shared host the CPU time is the one to compare (review s21 r5 F6: 100 000
rows took 235 s; each kernel was analysed alone, then all again for the notes).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import subprocess
import sys
import time


def zoo_kernels():
    """The zoo's 20 kernels, counted exactly, with a made-up time (1-5 ms)."""
    from rooflab.bench.zoo import specs
    from rooflab.model.kernel import Kernel

    out = []
    for i, sp in enumerate(specs()):
        c = sp.count
        out.append(Kernel(name=sp.name, flop={c.precision: c.flop}, bytes={"DRAM": c.bytes},
                          seconds=1e-3 * (1 + i % 5), unit=c.unit))
    return out


def many_kernels(n: int, roof):
    """n kernels over AI 0.01-1000 at 3-95 % of the roof (fp64 and fp32), seeded."""
    from rooflab.model.kernel import Kernel

    rng = random.Random(0)
    out = []
    for i in range(n):
        prec = "fp64" if i % 3 else "fp32"
        peak = roof.find_compute(prec).value
        bw = roof.bandwidth("DRAM").value
        ai = 10 ** rng.uniform(-2, 3)
        flop = 1e9 * 10 ** rng.uniform(0, 2)
        attainable = min(peak, ai * bw)
        seconds = flop / (attainable * rng.uniform(0.03, 0.95))
        out.append(Kernel(name=f"kernel_{i:03d}", flop={prec: flop}, bytes={"DRAM": flop / ai},
                          seconds=seconds))
    return out


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def run_set(name: str, kernels, roof, repeat: int, layout_only: bool) -> None:
    from rooflab.report.chart import figure_bytes, plot_roofline, roofline_data

    # labels=0: every kernel labelled, as before the chart labelled only the 20 longest
    # (chart.LABELS_SHOWN), so the layout's worst case and the earlier results still compare;
    # the many-kernel charts are benchmarks/scale_speed.py's
    layout = [best(lambda: roofline_data([roof], kernels, labels=0), 1) for _ in range(repeat)]
    if layout_only:
        print(f"{name:>4} ({len(kernels)} kernels): layout {min(layout) * 1e3:8.1f} ms")
        return
    import matplotlib.pyplot as plt

    done = roofline_data([roof], kernels, labels=0)

    def chart():
        d = plot_roofline([roof], kernels, labels=0)
        figure_bytes(d, "png")
        plt.close(d.figure_)

    def reference():
        d = done.plot()   # the display already laid out: matplotlib's work only
        figure_bytes(d, "png")
        plt.close(d.figure_)
        d.figure_ = d.ax_ = None

    chart()   # warm-up: matplotlib's imports and font cache
    reference()
    t_chart, t_ref = [], []
    for _ in range(repeat):   # interleaved: both see the same load
        t_ref.append(best(reference, 1))
        t_chart.append(best(chart, 1))
    c, r, lay = min(t_chart), min(t_ref), min(layout)
    print(f"{name:>4} ({len(kernels)} kernels): chart {c * 1e3:8.1f} ms; reference "
          f"(draw + savefig only, same run) {r * 1e3:7.1f} ms; ratio {c / r:5.2f}x; "
          f"layout alone {lay * 1e3:8.1f} ms")


def _layout_sets(many: int):
    """{name: (roofs, kernels, labels)} for the layout timings (--against)."""
    from rooflab.hardware.catalog import lookup_roof

    epyc = lookup_roof("EPYC 9654")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from scale_speed import spread_kernels

    t4 = lookup_roof("T4")
    return {"zoo": lambda: ([epyc], zoo_kernels(), 0),
            "many": lambda: ([epyc], many_kernels(many, epyc), 0),
            "plot500": lambda: ([t4], spread_kernels(500, t4), None)}


def _worker(name: str, many: int) -> None:
    """One set's layout, timed once in this process (rooflab from PYTHONPATH): prints
    {"seconds", "digest", "labels"} as JSON."""
    from rooflab.hardware.catalog import lookup_roof
    from rooflab.report.chart import roofline_data

    roof = lookup_roof("EPYC 9654")   # warm-up: imports and caches, off the clock
    roofline_data([roof], zoo_kernels()[:3], labels=0)
    roofs, kernels, labels = _layout_sets(many)[name]()
    t0 = time.perf_counter()
    d = roofline_data(roofs, kernels, labels=labels)
    seconds = time.perf_counter() - t0
    shown = [(p.text, p.label_offset, p.label_ha, p.label_va) for p in d.points]
    print(json.dumps({"seconds": seconds, "labels": sum(1 for t, *_ in shown if t),
                      "digest": hashlib.sha256(repr(shown).encode()).hexdigest()[:16]}))


def _timed_in(src: str, name: str, many: int) -> dict:
    env = dict(os.environ, PYTHONPATH=src)
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", name,
                          "--many", str(many)], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def against(old: str, sets: list[str], many: int, repeat: int) -> None:
    new_src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    old_src = os.path.join(old, "src")
    for name in sets:
        runs: dict[str, list[dict]] = {"old": [], "new": []}
        for _ in range(repeat):   # interleaved: both see the same load
            runs["old"].append(_timed_in(old_src, name, many))
            runs["new"].append(_timed_in(new_src, name, many))
        t_old = min(r["seconds"] for r in runs["old"])
        t_new = min(r["seconds"] for r in runs["new"])
        digests = {r["digest"] for rs in runs.values() for r in rs}
        each = {k: ", ".join(f"{r['seconds']:.3f}" for r in rs) for k, rs in runs.items()}
        same = "identical" if len(digests) == 1 else "DIFFER: " + " ".join(sorted(digests))
        print(f"{name:>7}: layout old {t_old:8.3f} s, new {t_new:8.3f} s, old / new "
              f"{t_old / t_new:6.2f}x ({runs['new'][0]['labels']} labels; each {each['old']} "
              f"s old, {each['new']} s new); labels {same}", flush=True)


def kernel_csv(path: str, n: int) -> None:
    """n rows name,flop,bytes,seconds,precision at 1-105 % of an H100's roof, seeded."""
    rng = random.Random(n)
    peak = {"fp32": 67e12, "fp16": 990e12, "fp64": 67e12, "bf16": 990e12}
    with open(path, "w") as f:
        f.write("name,flop,bytes,seconds,precision\n")
        for i in range(n):
            prec = rng.choice(list(peak))
            ai = 10 ** rng.uniform(-2, 3)
            flop = 1e9 * 10 ** rng.uniform(0, 3)
            seconds = flop / (min(peak[prec], ai * 3.35e12) * rng.uniform(0.01, 1.05))
            f.write(f"k{i},{flop:.6g},{flop / ai:.6g},{seconds:.6g},{prec}\n")


def child_cpu() -> float:
    """User + system CPU seconds of this process's finished children so far."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _plot_in(src: str, csv: str, png: str) -> tuple[float, str, str, float]:
    """`rooflab plot` under src: (wall seconds, PNG digest, stdout + stderr, CPU seconds).

    CPU (user + system of the child, from getrusage(RUSAGE_CHILDREN) deltas) beside the
    wall time: on a shared host the wall time swings with the load (review s22 h2 F2: at
    load 7, best-of-3 wall read 0.58x where the user CPU was the same old and new)."""
    env = dict(os.environ, PYTHONPATH=src)
    c0, t0 = child_cpu(), time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "rooflab", "plot", csv, "--on", "H100",
                          "-o", png], env=env, capture_output=True, text=True, check=True)
    seconds, cpu = time.perf_counter() - t0, child_cpu() - c0
    with open(png, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    return seconds, digest, out.stdout + out.stderr, cpu


def against_cli(old: str, sizes: list[int], repeat: int) -> None:
    import tempfile

    new_src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            csv, png = os.path.join(tmp, f"k{n}.csv"), os.path.join(tmp, "x.png")
            kernel_csv(csv, n)
            runs: dict[str, list] = {"old": [], "new": []}
            for _ in range(repeat):   # interleaved: both see the same load
                runs["old"].append(_plot_in(os.path.join(old, "src"), csv, png))
                runs["new"].append(_plot_in(new_src, csv, png))
            t_old = min(r[0] for r in runs["old"])
            t_new = min(r[0] for r in runs["new"])
            c_old = min(r[3] for r in runs["old"])
            c_new = min(r[3] for r in runs["new"])
            png_same = len({r[1] for rs in runs.values() for r in rs}) == 1
            said_same = len({r[2] for rs in runs.values() for r in rs}) == 1
            print(f"plot {n:>6} kernels: wall old {t_old:7.1f} s, new {t_new:7.1f} s, old / "
                  f"new {t_old / t_new:5.2f}x; CPU old {c_old:7.1f} s, new {c_new:7.1f} s, "
                  f"old / new {c_old / c_new:5.2f}x; PNG {'identical' if png_same else 'DIFFERS'}, "
                  f"output {'identical' if said_same else 'DIFFERS'}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sets", default="zoo,many")
    ap.add_argument("--layout-only", action="store_true")
    ap.add_argument("--many", type=int, default=200, help="kernels in the large set")
    ap.add_argument("--against", metavar="OLD",
                    help="an older checkout: its layout times against this tree's")
    ap.add_argument("--cli", metavar="N,N", help="with --against: time `rooflab plot` of "
                    "kernel CSVs of these many rows")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        _worker(a.worker, a.many)
        return 0
    if a.against:
        print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node()}, "
              f"{os.cpu_count()} CPUs, Python {platform.python_version()}; layout under "
              f"{a.against}/src (old) and this tree (new), best of {a.repeat}")
        if a.cli:
            against_cli(a.against, [int(n) for n in a.cli.split(",")], a.repeat)
            return 0
        sets = a.sets if a.sets != "zoo,many" else "zoo,many,plot500"
        against(a.against, sets.split(","), a.many, a.repeat)
        return 0

    from rooflab.hardware.catalog import lookup_roof

    roof = lookup_roof("EPYC 9654")
    sets = {"zoo": lambda: zoo_kernels(), "many": lambda: many_kernels(a.many, roof)}
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node()}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}; best of {a.repeat}")
    if not a.layout_only:
        import matplotlib
        matplotlib.use("Agg")

    for name in a.sets.split(","):
        run_set(name, sets[name](), roof, a.repeat, a.layout_only)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: parse and analyse a synthetic ncu CSV of 100,000 kernel launches.

    python benchmarks/ncu_parse.py [--launches 100000] [--page raw|details|both] [--repeat 3]

Writes the synthetic file(s) to a temporary folder (real metric names, auto-scaled units,
thousands separators, 20 kernels), then times, best of --repeat, interleaved in the same run:
  reference  plain csv.reader over the same file (no conversion at all)
  rooflab    load_ncu([file]) + analyze(roof, kernels)  (parse, SI units, counts, grouping,
             the roofline analysis of every kernel at every level)
and prints both and their ratio. Target (issue 5): rooflab <= 5 s for 100,000 launches.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import random
import tempfile
import time
from pathlib import Path

IDENT = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
         "Block Size", "Grid Size", "Device", "CC"]
INST = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"
METRICS = [("dram__bytes.sum", "Mbyte", 1e6), ("lts__t_bytes.sum", "Mbyte", 1e6),
           ("l1tex__t_bytes.sum", "Mbyte", 1e6), ("gpu__time_duration.sum", "usecond", 1e-6),
           ("sm__cycles_elapsed.avg", "cycle", 1), ("sm__cycles_elapsed.avg.per_second",
                                                     "Ghz", 1e9),
           (INST.format("dadd"), "inst", 1), (INST.format("dmul"), "inst", 1),
           (INST.format("dfma"), "inst", 1), (INST.format("fadd"), "inst", 1),
           (INST.format("fmul"), "inst", 1), (INST.format("ffma"), "inst", 1)]
KERNELS = [f"void kernel_{i}<float, {i % 4}>(float const*, float*, int)" for i in range(20)]


def _values(rng: random.Random) -> list[str]:
    out = []
    for _name, unit, _ in METRICS:
        if unit == "Mbyte":
            out.append(f"{rng.uniform(1, 500):,.2f}")
        elif unit == "usecond":
            out.append(f"{rng.uniform(5, 900):,.2f}")
        elif unit == "Ghz":
            out.append("1.41")
        else:
            out.append(f"{rng.randrange(10**5, 10**9):,}")
    return out


def write_synthetic(path: Path, launches: int, page: str, seed: int = 0) -> None:
    rng = random.Random(seed)
    with path.open("w", newline="") as fh:
        fh.write("==PROF== Connected to process 4242 (/usr/bin/app)\n")
        w = csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n")
        if page == "raw":
            w.writerow(IDENT + [m for m, _, _ in METRICS])
            w.writerow([""] * len(IDENT) + [u for _, u, _ in METRICS])
        else:
            w.writerow(IDENT + ["Section Name", "Metric Name", "Metric Unit", "Metric Value"])
        for i in range(launches):
            ident = [str(i), "4242", "app", "127.0.0.1", KERNELS[i % len(KERNELS)], "1", "7",
                     "(256, 1, 1)", "(4096, 1, 1)", "0", "8.0"]
            values = _values(rng)
            if page == "raw":
                w.writerow(ident + values)
            else:
                for (m, u, _), v in zip(METRICS, values, strict=True):
                    w.writerow(ident + ["Command line profiler metrics", m, u, v])


def reference(path: Path) -> int:
    with path.open(newline="") as fh:
        return sum(1 for _ in csv.reader(fh))


def rooflab_parse_analyse(path: Path):
    from rooflab.ingest.ncu_files import load_ncu
    from rooflab.model import Ceiling, Roof, analyze

    imp = load_ncu([str(path)])
    roof = Roof("A100 40GB SXM (nominal)", compute=(
        Ceiling(9.7e12, precision="fp64", unit="vector"),
        Ceiling(19.5e12, precision="fp32", unit="vector")),
        memory=(Ceiling(1.555e12, level="DRAM"), Ceiling(5e12, level="L2"),
                Ceiling(19e12, level="L1")))
    analysis = analyze(roof, imp.kernels)
    assert sum(k.calls for k in imp.kernels) > 0
    return imp, analysis


def interleaved(path: Path, repeat: int, ref=None, ours=None):
    """Best of `repeat` for the reference and for rooflab, alternating so both see the same
    load on a shared machine (FACTS.md: compare within one run, never across hours).
    ref / ours: the two readers of `path` (default: this file's csv.reader pass and
    rooflab's ncu import + analysis; benchmarks/rocprof_parse.py passes its own)."""
    ref, ours = ref or reference, ours or rooflab_parse_analyse
    t_ref, t_us, rows, result = float("inf"), float("inf"), 0, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        rows = ref(path)
        t1 = time.perf_counter()
        result = ours(path)
        t2 = time.perf_counter()
        t_ref, t_us = min(t_ref, t1 - t0), min(t_us, t2 - t1)
    return t_ref, t_us, rows, result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=100_000)
    ap.add_argument("--page", choices=("raw", "details", "both"), default="both")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    pages = ("raw", "details") if a.page == "both" else (a.page,)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node()}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        for page in pages:
            path = Path(tmp) / f"ncu_{page}.csv"
            write_synthetic(path, a.launches, page)
            size = path.stat().st_size / 1e6
            t_ref, t_us, rows, (imp, analysis) = interleaved(path, a.repeat)
            launches = sum(k.calls for k in imp.kernels)
            print(f"{page:8s} {a.launches:,} launches, {rows:,} CSV rows, {size:.0f} MB: "
                  f"csv.reader {t_ref:.2f} s, rooflab parse+analyse {t_us:.2f} s "
                  f"(ratio {t_us / t_ref:.1f}x; {launches:,} launches -> {len(imp.kernels)} "
                  f"kernels, {len(analysis.points)} points); target <= 5 s: "
                  f"{'met' if t_us <= 5 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

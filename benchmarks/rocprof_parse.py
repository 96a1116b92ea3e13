"""Benchmark: parse synthetic rocprof counter CSVs of 100,000 dispatches, wide and long.

    python benchmarks/rocprof_parse.py [--dispatches 100000] [--layout wide|long|both]
                                       [--repeat 3]

Writes the synthetic file(s) to a temporary folder: the wide layout (rocprof v1
results.csv / rocprof-compute pmc_perf.csv: one row per dispatch, 11 counter columns with
`_sum`) and rocprofv3's long layout (*_counter_collection.csv: one row per dispatch and
counter, 8 counters with MI300's TCC_EA0_ spelling, so 8 rows a dispatch), 4 kernels. Then
times, best of --repeat, interleaved in the same run:
  reference  plain csv.reader over the same file (no conversion at all)
  rooflab    load_rocprof(file): parse, counters -> FLOP/bytes/seconds, grouping
and prints both and their ratio, then the peak RSS of each in a fresh process (the
interpreter and its imports included, ~20 MB for the reference). Review r5 F1/F2: rooflab was
44x (wide) and 22x (long) the reference, and the long layout peaked at 10x the file size.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NAMES = ['"void triad<float>(float*, float const*, float const*, float) [clone .kd]"',
         "Cijk_Alik_Bljk_HHS_BH_MT128x128",
         '"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>> '
         '[clone .kd]"', "scale_f64"]
WIDE_HEADER = ("Index,KernelName,gpu-id,queue-id,BeginNs,EndNs,SQ_INSTS_VALU_ADD_F32,"
               "SQ_INSTS_VALU_MUL_F32,SQ_INSTS_VALU_FMA_F32,SQ_INSTS_VALU_TRANS_F32,"
               "SQ_INSTS_VALU_MFMA_MOPS_F16,TCP_TOTAL_CACHE_ACCESSES_sum,TCC_EA_RDREQ_sum,"
               "TCC_EA_RDREQ_32B_sum,TCC_EA_WRREQ_sum,TCC_EA_WRREQ_64B_sum,TCC_REQ_sum\n")
LONG_HEADER = ('"Correlation_Id","Dispatch_Id","Agent_Id","Queue_Id","Process_Id","Thread_Id",'
               '"Grid_Size","Kernel_Id","Kernel_Name","Workgroup_Size","LDS_Block_Size",'
               '"Scratch_Size","VGPR_Count","Accum_VGPR_Count","SGPR_Count","Counter_Name",'
               '"Counter_Value","Start_Timestamp","End_Timestamp"\n')
LONG_COUNTERS = ("SQ_INSTS_VALU_ADD_F32", "SQ_INSTS_VALU_MUL_F32", "SQ_INSTS_VALU_FMA_F32",
                 "SQ_INSTS_VALU_MUL_F64", "TCC_EA0_RDREQ", "TCC_EA0_RDREQ_32B", "TCC_EA0_WRREQ",
                 "TCC_EA0_WRREQ_64B")


def write_wide(path: Path, n: int, seed: int = 0) -> None:
    r = random.Random(seed).randrange
    with path.open("w") as fh:
        fh.write(WIDE_HEADER)
        t = 1000
        for i in range(n):
            d = r(5000, 50000)
            fh.write(f"{i},{NAMES[i % 4]},2,0,{t},{t + d},{r(0, 9999)},{r(0, 9999)},"
                     f"{r(10000, 99999)},0,{r(0, 2000000) if i % 4 == 1 else 0},"
                     f"{r(10000, 99999)},{r(10000, 99999)},{r(0, 999)},{r(10000, 99999)},"
                     f"{r(1000, 9999)},{r(10000, 99999)}\n")
            t += d + 100


def write_long(path: Path, n: int, seed: int = 0) -> None:
    r = random.Random(seed).randrange
    with path.open("w") as fh:
        fh.write(LONG_HEADER)
        t = 1000
        for k in range(1, n + 1):
            d = r(5000, 50000)
            vals = {c: r(50000, 99999) for c in LONG_COUNTERS}
            vals["TCC_EA0_RDREQ_32B"], vals["TCC_EA0_WRREQ_64B"] = r(0, 999), r(1000, 9999)
            for c in LONG_COUNTERS:
                fh.write(f'{k},{k},"Agent 4",1,312,312,1048576,{k % 4},{NAMES[k % 4]},64,0,0,'
                         f'8,0,16,"{c}",{vals[c]},{t},{t + d}\n')
            t += d + 100


def reference(path: Path) -> int:
    with path.open(newline="") as fh:
        return sum(1 for _ in csv.reader(fh))


def rooflab_parse(path: Path):
    from rooflab.ingest.rocprof import load_rocprof

    imp = load_rocprof(str(path))
    assert sum(k.calls for k in imp.kernels) > 0
    return imp


def interleaved(path: Path, repeat: int):
    """Best of `repeat` for csv.reader and for rooflab, alternating (ncu_parse's loop)."""
    from ncu_parse import interleaved as best_of  # a sibling script: benchmarks/ is on the path

    rooflab_parse(path.parent / "warm.csv")   # imports out of the first timing
    return best_of(path, repeat, ref=reference, ours=rooflab_parse)


def peak_rss_mb(which: str, path: Path) -> float:
    """The peak RSS of a fresh process that runs `which` on the file (its own ru_maxrss)."""
    out = subprocess.run([sys.executable, __file__, "--child", which, str(path)],
                         capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1]) / 1024


def child(which: str, path: str) -> int:
    if which == "reference":
        reference(Path(path))
    else:
        rooflab_parse(Path(path))
    print(_peak_kib())
    return 0


def _peak_kib() -> int:
    """This process's peak RSS in KiB: VmHWM (ru_maxrss keeps the parent's peak across
    fork + exec on Linux, so a small child reported the benchmark's own 47 MB)."""
    try:
        status = Path("/proc/self/status").read_text()
        return int(next(ln.split()[1] for ln in status.splitlines() if ln.startswith("VmHWM")))
    except (OSError, StopIteration):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dispatches", type=int, default=100_000)
    ap.add_argument("--layout", choices=("wide", "long", "both"), default="both")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        return child(*a.child)
    layouts = ("wide", "long") if a.layout == "both" else (a.layout,)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node()}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        write_wide(Path(tmp) / "warm.csv", 10)
        for layout in layouts:
            path = Path(tmp) / f"rocprof_{layout}.csv"
            (write_wide if layout == "wide" else write_long)(path, a.dispatches)
            size = path.stat().st_size / 1e6
            t_ref, t_us, rows, imp = interleaved(path, a.repeat)
            dispatches = sum(k.calls for k in imp.kernels)
            rss_ref, rss_us = peak_rss_mb("reference", path), peak_rss_mb("rooflab", path)
            print(f"{layout:5s} {a.dispatches:,} dispatches, {rows:,} CSV rows, {size:.0f} MB: "
                  f"csv.reader {t_ref:.2f} s, rooflab {t_us:.2f} s (ratio {t_us / t_ref:.1f}x; "
                  f"{dispatches:,} dispatches -> {len(imp.kernels)} kernels); peak RSS "
                  f"csv.reader {rss_ref:.0f} MB, rooflab {rss_us:.0f} MB "
                  f"({rss_us / size:.1f}x the file)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

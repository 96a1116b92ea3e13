"""How faithful is `rooflab probe` on this machine? (issue 3; not a test)

Builds small C reference kernels of our own in a temporary directory (STREAM-style triad
and copy with OpenMP, an FMA-throughput loop; gcc -O3 -march=native -fopenmp), runs
likwid-bench when it is installed (Debian: apt-get install likwid), times numpy GEMM, and
runs rooflab's CPU probe — interleaved, round after round, because the host is shared and
noisy: a number from another minute is not comparable (FACTS.md). Prints a ratio table of
the medians over the rounds.

Every reference reports the same statistic as the probe: the best of many short samples
(STREAM's "best of N runs"), with the STREAM byte model (explicit loads + stores).

    python benchmarks/cpu_fidelity.py               # 5 rounds of the default probe
    python benchmarks/cpu_fidelity.py --rounds 2 --mode quick
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STREAM_C = r"""
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
/* usage: stream_ref N TRIALS triad|copy REPS -> best and median B/s over TRIALS.
   One trial = one parallel region in which every thread sweeps its static chunk REPS
   times (REPS > 1 keeps a cache-sized chunk in its cache level; REPS = 1 is STREAM).
   Arrays are 2 MiB aligned and madvise(MADV_HUGEPAGE)d, as numpy does for large arrays
   (THP is "madvise" here), so both sides get the same pages. */
static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static double *alloc(long n) {
    size_t bytes = ((n * 8 + (2 << 20) - 1) / (2 << 20)) * (2 << 20);
    double *p = aligned_alloc(2 << 20, bytes);
    madvise(p, bytes, MADV_HUGEPAGE);
    return p;
}
int main(int argc, char **argv) {
    long n = atol(argv[1]); int trials = atoi(argv[2]); int triad = !strcmp(argv[3], "triad");
    long reps = atol(argv[4]);
    double *a = alloc(n), *b = alloc(n), *c = alloc(n), s = 3.0;
    double *r = malloc(trials * sizeof(double));
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) { a[i] = 1.0; b[i] = 2.0; c[i] = 0.5; }
    double bytes = (triad ? 24.0 : 16.0) * n * reps;
    for (int t = 0; t < trials + 1; t++) {
        double t0 = omp_get_wtime();
        #pragma omp parallel
        for (long k = 0; k < reps; k++) {
            if (triad) {
                #pragma omp for schedule(static) nowait
                for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
            } else {
                #pragma omp for schedule(static) nowait
                for (long i = 0; i < n; i++) c[i] = a[i];
            }
        }
        double dt = omp_get_wtime() - t0;
        if (t > 0) r[t - 1] = bytes / dt;   /* the first trial is a warm-up (STREAM) */
    }
    qsort(r, trials, sizeof(double), cmp);
    printf("%.6e %.6e %f\n", r[trials - 1], r[trials / 2], a[n / 2] + c[n / 3]);
    return 0;
}
"""

FMA_C = r"""
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
/* usage: fma_ref ITERS TRIALS d|s -> best and median FLOP/s; independent vector FMA
   chains per thread (GCC vector extensions; -march=native picks the ISA). The vector is
   the ISA's register width and the chains fit its register file: 16 x 512-bit on AVX-512
   (32 zmm), 12 x 256-bit on AVX2 (16 ymm: 12 chains + m + c; 16 x 512-bit spilled there and
   read 8 GFLOP/s on a Zen 3 that does 103) */
#ifdef __AVX512F__
#define VBYTES 64
#define NACC 16
#define ACCS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) \
    X(12) X(13) X(14) X(15)
#else
#define VBYTES 32
#define NACC 12
#define ACCS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#endif
typedef double vd __attribute__((vector_size(VBYTES)));
typedef float vs __attribute__((vector_size(VBYTES)));
static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
/* one named variable per chain: an array of them was stored to the stack on every
   iteration (GCC does not scalarize it), a store per FMA, which halved the rate on Zen 3 */
#define DECL(j) __typeof__(m) a##j = m * (__typeof__(m[0]))(seed + j) \
    * (__typeof__(m[0]))0.01;
#define STEP(j) a##j = a##j * m + c;
#define SUM(j) s += a##j[0];
#define KERNEL(T, E)                                                              \
    static double run_##T(long iters, int seed) {                                  \
        T m, c;                                                                    \
        for (int l = 0; l < (int)(VBYTES / sizeof(E)); l++) { m[l] = 0.999; c[l] = 0.001; } \
        ACCS(DECL)                                                                 \
        for (long i = 0; i < iters; i++) { ACCS(STEP) }                            \
        E s = 0; ACCS(SUM)                                                         \
        return (double)s; }
KERNEL(vd, double)
KERNEL(vs, float)
int main(int argc, char **argv) {
    long iters = atol(argv[1]); int trials = atoi(argv[2]); int dbl = argv[3][0] == 'd';
    double *r = malloc(trials * sizeof(double)), sink = 0;
    int nt = omp_get_max_threads();
    double flop = 2.0 * iters * NACC * (VBYTES / (dbl ? 8 : 4)) * nt;
    for (int t = 0; t < trials; t++) {
        double t0 = omp_get_wtime();
        #pragma omp parallel reduction(+:sink)
        { sink += dbl ? run_vd(iters, omp_get_thread_num()) : run_vs(iters, omp_get_thread_num()); }
        r[t] = flop / (omp_get_wtime() - t0);
    }
    qsort(r, trials, sizeof(double), cmp);
    printf("%.6e %.6e %g\n", r[trials - 1], r[trials / 2], sink);
    return 0;
}
"""

CFLAGS = ["-O3", "-march=native", "-fopenmp", "-fno-tree-loop-distribute-patterns"]


def build(tmp: Path) -> dict[str, Path]:
    out = {}
    for name, src in (("stream_ref", STREAM_C), ("fma_ref", FMA_C)):
        c = tmp / f"{name}.c"
        c.write_text(src)
        exe = tmp / name
        subprocess.run(["gcc", *CFLAGS, str(c), "-o", str(exe)], check=True)
        out[name] = exe
    return out


def run_c(exe: Path, *args, threads: int) -> tuple[float, float]:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    best, median, _ = subprocess.run([str(exe), *map(str, args)], capture_output=True,
                                     text=True, check=True, env=env).stdout.split()
    return float(best), float(median)


def likwid(test: str, ws: str, threads: int) -> float | None:
    """likwid-bench MByte/s (stream) or MFlops/s (peakflops), in B/s or FLOP/s."""
    if not shutil.which("likwid-bench"):
        return None
    proc = subprocess.run(["likwid-bench", "-s", "0.3", "-t", test, "-w",
                           f"S0:{ws}:{threads}"], capture_output=True, text=True)
    key = "MFlops/s" if test.startswith("peakflops") else "MByte/s"
    m = re.search(rf"{re.escape(key)}:\s*([\d.]+)", proc.stdout)
    return float(m.group(1)) * 1e6 if m else None


def numpy_gemm(dtype, n: int = 1024, samples: int = 10) -> float:
    import numpy as np

    a = np.random.default_rng(0).random((n, n)).astype(dtype)
    b, out = a.T.copy(), np.empty_like(a)
    np.matmul(a, b, out=out)
    best = 0.0
    for _ in range(samples):
        t0 = time.perf_counter()
        np.matmul(a, b, out=out)
        best = max(best, 2.0 * n**3 / (time.perf_counter() - t0))
    return best


def probe_values(profile) -> dict[str, float]:
    m = profile.measured
    vals = {f"probe {c.label}": c.value for c in m.compute + m.memory}
    for name, d in profile.extras.get("stream", {}).get("DRAM", {}).items():
        vals[f"probe DRAM {name}"] = d["bytes_per_s"]
    return vals


def one_round(exes, threads: int, mode: str, llc: int) -> dict[str, float | None]:
    from rooflab.probe.cpu import probe_cpu

    r: dict[str, float | None] = {}
    n = max(1 << 24, 4 * llc // 8)    # STREAM rule: each array >= 4x the last-level cache
    r["C triad DRAM"] = run_c(exes["stream_ref"], n, 50, "triad", 1, threads=threads)[0]
    r["C copy DRAM"] = run_c(exes["stream_ref"], n, 50, "copy", 1, threads=threads)[0]
    # cache levels: per-thread working sets inside L1, L2, L3 (3 arrays x n/threads x 8 B)
    for level, per_thread, reps in (("L1", 16 << 10, 20000), ("L2", 256 << 10, 1000),
                                    ("L3", 4 << 20, 40)):
        m = per_thread * threads // 24 // 64 * 64
        r[f"C triad {level}"] = run_c(exes["stream_ref"], m, 200, "triad", reps,
                                      threads=threads)[0]
    r["C FMA fp64"] = run_c(exes["fma_ref"], 200000, 300, "d", threads=threads)[0]
    r["C FMA fp32"] = run_c(exes["fma_ref"], 200000, 300, "s", threads=threads)[0]
    for level, ws in (("L1", "32kB"), ("L2", "1MB"), ("L3", "16MB"), ("DRAM", "1GB")):
        r[f"likwid stream {level}"] = likwid("stream_avx512", ws, threads)
    r["likwid peakflops fp64"] = likwid("peakflops_avx512_fma", "32kB", threads)
    r["likwid peakflops fp32"] = likwid("peakflops_sp_avx512_fma", "32kB", threads)
    import numpy as np

    r["numpy GEMM fp64"] = numpy_gemm(np.float64)
    r["numpy GEMM fp32"] = numpy_gemm(np.float32)
    t0 = time.perf_counter()
    r.update(probe_values(probe_cpu(mode, threads)))
    r["probe wall s"] = time.perf_counter() - t0
    return r


def med(rounds, key) -> float | None:
    xs = [r.get(key) for r in rounds if r.get(key)]
    return statistics.median(xs) if xs else None


# A reference reading this far below the probe judges nothing (the probe is not 25 % faster
# than a tuned C kernel on the same data): said, not counted as a pass.
REF_LOW = 1.25


def ratio_rows(rounds) -> list[tuple[str, float | None, float | None, str, str]]:
    from rooflab.units import fmt_fraction  # '98 %', the SI style of rooflab's own tables

    def best_of(*keys):
        vals = [(med(rounds, k), k) for k in keys if med(rounds, k)]
        return max(vals) if vals else (None, "none")

    rows = []
    checks = [("DRAM triad", "probe DRAM", ("C triad DRAM",), 0.95),
              ("DRAM copy", "probe DRAM copy", ("C copy DRAM",), None),
              ("L1 triad", "probe L1", ("likwid stream L1",), 0.80),
              ("L2 triad", "probe L2", ("likwid stream L2",), 0.80),
              ("L3 triad", "probe L3", ("likwid stream L3",), None),
              ("L1 triad (C ref)", "probe L1", ("C triad L1",), 0.80),
              ("L2 triad (C ref)", "probe L2", ("C triad L2",), 0.80),
              ("L3 triad (C ref)", "probe L3", ("C triad L3",), None),
              ("fp64 peak", "probe fp64 vector",
               ("C FMA fp64", "likwid peakflops fp64", "numpy GEMM fp64"), 0.90),
              ("fp32 peak", "probe fp32 vector",
               ("C FMA fp32", "likwid peakflops fp32", "numpy GEMM fp32"), 0.90)]
    for label, pk, refs, target in checks:
        p = med(rounds, pk)
        ref, which = best_of(*refs)
        ratio = p / ref if p and ref else None
        # the same comparison round by round (probe and reference minutes apart)
        paired = [r[pk] / r[which] for r in rounds if r.get(pk) and r.get(which)]
        pr = statistics.median(paired) if paired else None
        worse = min(ratio or 0.0, pr or 0.0)   # both readings must meet the target
        verdict = "-" if target is None or ratio is None else (
            f"{'PASS' if worse >= target else 'MISS'} (>= {fmt_fraction(target)})")
        # both readings (medians apart and round by round) must say so: a paired ratio
        # under the target is still a MISS
        if target is not None and ratio is not None and min(ratio, pr or ratio) > REF_LOW:
            # likwid-bench's L1 stream read 82 GB/s here against the C reference's 567
            # (its threads unpinned in the VM?): a reference that slow passes anything.
            verdict = f"REF LOW (reads {fmt_fraction(1 / ratio)} of the probe: cannot judge it)"
        rows.append((label, p, ref, which, fmt_fraction(ratio, 1) if ratio else "-",
                     fmt_fraction(pr, 1) if pr else "-", verdict))
    return rows


def agreement(rounds) -> list[tuple[str, float, float]]:
    """Per probe ceiling: |difference| between rounds 1 and 2, and the worst neighbours."""
    keys = [k for k in rounds[0] if k != "probe wall s"]
    out = []
    for k in keys:
        xs = [r[k] for r in rounds if r.get(k)]
        diffs = [abs(a - b) / ((a + b) / 2) for a, b in zip(xs, xs[1:], strict=False)]
        if diffs:
            out.append((k, diffs[0], max(diffs)))
    return out


def si(v: float | None) -> str:
    if v is None:
        return "-"
    for s, p in ((1e12, "T"), (1e9, "G"), (1e6, "M")):
        if abs(v) >= s:
            return f"{v / s:.1f} {p}"
    return f"{v:.3g}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--mode", default="default", choices=("quick", "default", "full"))
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--raw", help="also write the raw per-round numbers to this JSON file")
    a = ap.parse_args(argv)
    from rooflab.hardware.host import detect_host
    from rooflab.units import fmt_fraction

    host = detect_host()
    llc = (host.caches.l3 or 32 << 20) * host.caches.l3_instances
    rounds = []
    with tempfile.TemporaryDirectory(prefix="rooflab-fidelity-") as tmp:
        exes = build(Path(tmp))
        for i in range(a.rounds):
            t0 = time.perf_counter()
            rounds.append(one_round(exes, a.threads, a.mode, llc))
            print(f"round {i + 1}/{a.rounds} done in {time.perf_counter() - t0:.0f} s",
                  file=sys.stderr)
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"CPU probe fidelity — {now}; {host.cpu_model} (family {host.family} model "
          f"{host.model}), {host.cores} cores, {a.threads} threads, {host.hypervisor or 'bare'}"
          f"; {platform.platform()}; probe mode {a.mode}; medians of {a.rounds} interleaved "
          f"rounds; likwid {'yes' if shutil.which('likwid-bench') else 'not installed'}; "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    print()
    print("| ceiling | rooflab | reference | reference is | ratio of medians "
          "| median of per-round ratios | target |")
    print("|---|---|---|---|---|---|---|")
    for label, p, ref, which, ratio, paired, verdict in ratio_rows(rounds):
        unit = "FLOP/s" if "peak" in label else "B/s"
        print(f"| {label} | {si(p)}{unit} | {si(ref)}{unit} | {which} | {ratio} | {paired} "
              f"| {verdict} |")
    print()
    print(f"Round-to-round agreement (probe: {a.mode} probes, one per round; the "
          f"references show how much the host itself moves):")
    print()
    print("| measurement | rounds 1-2 differ | worst neighbouring rounds | within 5 % |")
    print("|---|---|---|---|")
    for k, first, worst in agreement(rounds):
        print(f"| {k} | {fmt_fraction(first, 1)} | {fmt_fraction(worst, 1)} | "
              f"{'yes' if first <= 0.05 else 'NO'} |")
    print()
    walls = [r["probe wall s"] for r in rounds]
    print(f"probe wall time per round: {', '.join(f'{w:.1f} s' for w in walls)}")
    print("all references (medians): " + ", ".join(
        f"{k} {si(med(rounds, k))}" for k in rounds[0] if not k.startswith("probe")))
    if a.raw:
        Path(a.raw).write_text(json.dumps(rounds, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

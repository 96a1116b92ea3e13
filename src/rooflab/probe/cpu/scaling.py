"""Thread scaling (`rooflab probe --threads 1,2,4,all`): the few numbers that answer "how
many cores saturate DRAM" and "what does one core reach", at each thread count.

The largest count gets the whole probe (its roof is the profile's measured roof); each
other count measures only STREAM triad at the DRAM working set and at the per-thread
working sets the full run chose for L1, L2 and L3 (where the host has an L3 and the sweep
found its plateau: a one-thread L3 run had nothing to be placed on, review 16a G/L6; at
fewer threads the same per-thread set is a smaller share of the shared L3, so it stays
there), and the fp64/fp32 FMA peaks, with the
quick mode's timing plans (ERT sweeps OpenMP thread counts the same way; likwid-bench
`-w S0:size:N`). The largest count's row is the full run's own FMA kernel and triad
figures, the same kernels as the other rows, not the roof: the roof's compute ceilings are
the best of its methods (FMA kernel or GEMM), so its fp64 can differ (review 17a N6:
8.44 in the row, 39.7 on the roof); reference_note says so. Every row keeps its samples
and spread (extras.scaling).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ...model.ceiling import Ceiling
from ..stats import rates_warning
from . import bandwidth as bw
from .flops import MOST_SIMD_RATIO, fma_peak, scalar_fma_peak, simd_ratio_note
from .modes import get_mode
from .runner import Rate, Team

LEVELS = ("L1", "L2", "L3", "DRAM")
PRECISIONS = ("fp64", "fp32")
SATURATED = 0.90   # DRAM within this of its best count: "saturated" (the review's 90 %)


def _rate_dict(rate: Rate, key: str) -> dict:
    return {key: rate.best, f"median_{key}": rate.median, "spread": rate.stats.spread,
            "calibrated": rate.calibrated, "samples": list(rate.samples)}


def _ceiling_dict(c: Ceiling, key: str) -> dict:
    return {key: c.value, f"median_{key}": c.median, "spread": c.spread,
            "samples": list(c.samples), "warnings": list(c.warnings)}


def reference_row(threads: int, mem: Mapping[str, Ceiling], peaks: Mapping,
                  ws: Mapping[str, float]) -> dict:
    """The largest count's row: the full run's ceilings (peaks: the FMA kernel's Measured,
    not GEMM, so every row comes from the same kernels)."""
    row: dict = {"threads": threads,
                 "source": "the full probe (its FMA kernel and DRAM ceiling)"}
    for lv in LEVELS:
        if lv in mem and lv in ws:
            row[lv] = _ceiling_dict(mem[lv], "bytes_per_s") | {"ws_bytes_per_thread": ws[lv]}
    for p in PRECISIONS:
        if p in peaks:
            row[p] = _rate_dict(peaks[p].rate, "flop_per_s")
    return row


def flag_scalar_row(row: dict) -> None:
    """A row's scalar figure at over MOST_SIMD_RATIO below its vector one gets the probe's
    note among its warnings (the row roof's `!` and `*`, hardware/profile._row_warnings):
    the scalar kernel was held up, its ridge is not to be trusted (review s19 x2 F17)."""
    for p, got in (row.get("scalar") or {}).items():
        vec, one = (row.get(p) or {}).get("flop_per_s"), got.get("flop_per_s")
        if vec and one and vec / one > MOST_SIMD_RATIO:
            got["warnings"] = [*got.get("warnings", ()), simd_ratio_note(p, vec / one)]


def measure_count(n: int, ws: Mapping[str, float], dram_total: float) -> dict:
    """One extra count: FMA peaks, then triad at L1/L2/L3's per-thread sets and at DRAM's
    total set (the same total as the full run, so each array stays >= 4x the LLC)."""
    spec = get_mode("quick")
    row: dict = {"threads": n, "source": "scaling pass (quick timing plans)"}
    with Team(n) as team:
        for p in PRECISIONS:
            row[p] = _rate_dict(fma_peak(p, team, spec.peak_plan).rate, "flop_per_s")
        # the scalar (no SIMD) FMA peaks, so the row's roof judges a loop on these threads
        # against its own scalar ceilings (review s19 r4 F1); half the vector budget, as
        # the full run (suite.py): register-resident, 2 x 0.075 s a count (quick plan)
        row["scalar"] = {p: _rate_dict(scalar_fma_peak(p, team, spec.peak_plan.scaled(0.5))
                                       .rate, "flop_per_s") for p in PRECISIONS}
        flag_scalar_row(row)
        for lv in LEVELS:
            if lv != "DRAM" and lv not in ws:
                continue
            per_thread = dram_total / n if lv == "DRAM" else ws[lv]
            # a pool sized for triad alone: the DRAM set at 1 thread is the whole total
            rate = bw.measure_stream(bw.STREAM["triad"], per_thread, team, spec.plan,
                                     pool=bw.ArrayPool(0))[0]
            row[lv] = _rate_dict(rate, "bytes_per_s") | {"ws_bytes_per_thread": per_thread}
    return row


def measure_scaling(counts: tuple[int, ...], reference: dict, ws: Mapping[str, float],
                    progress: Callable[[float], None] | None = None) -> dict:
    """extras.scaling: every count's row (the reference row given), the method, the
    working sets, and the DRAM saturation count."""
    dram_total = ws["DRAM"] * reference["threads"]
    rows = {}
    extra = [n for n in counts if n != reference["threads"]]
    for i, n in enumerate(extra):
        if progress:
            progress(i / max(1, len(extra)))
        rows[str(n)] = measure_count(n, ws, dram_total)
    rows[str(reference["threads"])] = reference
    out = {
        "counts": list(counts), "reference_threads": reference["threads"],
        "method": (f"STREAM triad {bw.STREAM['triad'].formula} ({bw.BYTE_MODEL}) at the "
                   f"per-thread working sets the full run chose for L1, L2 and L3 (each "
                   f"where the host has it) and at its "
                   f"DRAM total set split over the threads; fp64/fp32 FMA-throughput "
                   f"kernel and its scalar (no SIMD) twin (row 'scalar'); value = best sample; "
                   f"counts below the largest use the quick "
                   f"mode's timing plans"),
        "ws_bytes_per_thread": {lv: ws[lv] for lv in ("L1", "L2", "L3") if lv in ws},
        "dram_ws_bytes_total": dram_total,
        "by_threads": {k: rows[k] for k in sorted(rows, key=int)},
    }
    sat = dram_saturation(out)
    out["dram_saturates_at"] = sat[0] if sat else None
    return out


@dataclass(frozen=True)
class ScalingRow:
    """One thread count of the scaling table (B/s, FLOP/s; None where not measured)."""

    threads: int
    dram: float | None
    l1: float | None
    l2: float | None
    fp64: float | None
    fp32: float | None
    efficiency: float | None   # fp64 per thread over the smallest count's per thread
    noisy: frozenset[str] = frozenset()   # figures whose samples warn (flagged())
    l3: float | None = None    # absent from profiles written before L3 was measured

    @property
    def dram_per_thread(self) -> float | None:
        return self.dram / self.threads if self.dram else None

    @property
    def fp64_per_thread(self) -> float | None:
        return self.fp64 / self.threads if self.fp64 else None


def flagged(row: Mapping) -> frozenset[str]:
    """The figures of a row to read with care: calibration gave up, the samples disagree
    by more than 5 % (probe.stats.rates_warning, the probe table's `!`), or (the full
    run's row) the ceiling carries warnings."""
    out = set()
    for key in (*LEVELS, *PRECISIONS):
        got = row.get(key)
        if not isinstance(got, Mapping):
            continue
        samples = [float(v) for v in got.get("samples") or ()]
        if (got.get("calibrated") is False or got.get("warnings")
                or (samples and rates_warning(key, samples))):
            out.add(key)
    return frozenset(out)


def _value(row: Mapping, key: str, unit: str) -> float | None:
    got = row.get(key)
    return float(got[unit]) if isinstance(got, Mapping) and got.get(unit) else None


def scaling_rows(scaling: Mapping) -> list[ScalingRow]:
    """The table's rows, ascending thread count. Parallel efficiency is fp64 per thread
    relative to the smallest count's per thread (1.0 = perfect scaling)."""
    by = scaling.get("by_threads") or {}
    rows = sorted(by.values(), key=lambda r: int(r["threads"]))
    base = None
    out = []
    for r in rows:
        n = int(r["threads"])
        fp64 = _value(r, "fp64", "flop_per_s")
        if base is None and fp64:
            base = fp64 / n
        out.append(ScalingRow(n, _value(r, "DRAM", "bytes_per_s"), _value(r, "L1", "bytes_per_s"),
                              _value(r, "L2", "bytes_per_s"), fp64,
                              _value(r, "fp32", "flop_per_s"),
                              fp64 / n / base if fp64 and base else None, flagged(r),
                              _value(r, "L3", "bytes_per_s")))
    return out


def reference_note(scaling: Mapping, roof_fp64: float | None) -> str:
    """What the largest count's row is, under the table: the full probe's FMA kernel and
    DRAM figures (the kernels of the other rows), and the roof's own fp64 where it differs
    (its best of methods) by more than 1 %, so the two are not read as one figure."""
    rows = scaling_rows(scaling)
    if not rows:
        return ""
    top = rows[-1]
    text = (f"the {top.threads}-thread row is the full probe's FMA kernel and DRAM "
            f"figures, the kernels of the other rows")
    if roof_fp64 and top.fp64 and abs(roof_fp64 / top.fp64 - 1) > 0.01:
        text += (f"; the roof's fp64 is {roof_fp64 / 1e9:.3g} GFLOP/s, the best of its "
                 f"methods (FMA kernel or GEMM)")
    return text


def dram_saturation(scaling: Mapping) -> tuple[int | None, str] | None:
    """The smallest count whose DRAM triad reaches SATURATED of the best count's, and the
    sentence saying so (None without two DRAM figures). Where any DRAM row is flagged the
    count is None and the sentence says it cannot tell: other load lowers a disturbed row
    by an unknown amount, so it may be the true best (moving the 90 % mark) or reach the
    mark sooner, and "saturates at 1 thread" read from rows that were all disturbed
    (review 16a I) is a finding about the load, not the memory."""
    rows = [r for r in scaling_rows(scaling) if r.dram]
    if len(rows) < 2:
        return None
    best = max(rows, key=lambda r: r.dram)
    first = next(r for r in rows if r.dram >= SATURATED * best.dram)
    disturbed = [r.threads for r in rows if "DRAM" in r.noisy]
    if disturbed:
        counts = ", ".join(map(str, disturbed))
        rows_are = "rows at" if len(disturbed) > 1 else "row at"
        verb = "are" if len(disturbed) > 1 else "is"
        return None, (f"DRAM saturation: cannot tell (the DRAM {rows_are} {counts} "
                      f"thread{'s' if disturbed != [1] else ''} {verb} disturbed (!): rerun "
                      f"on a quiet machine)")
    text = (f"DRAM saturates at {first.threads} thread{'s' if first.threads > 1 else ''} "
            f"(>= {SATURATED * 100:.0f} % of its best, {best.dram / 1e9:.3g} GB/s)")
    if first is rows[-1]:
        text += ("; that is the most threads measured, so more threads may still add "
                 "bandwidth")
    return first.threads, text

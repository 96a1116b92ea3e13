"""The envelope roof: when no roof is known (no --on, no device name the catalog knows, no
recorded peaks), the best FLOP/s and B/s the profiled kernels themselves reached, labelled a
lower bound on the machine's roof, never a machine's roof. Split from
ingest/profile_import.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..model.ceiling import Ceiling, Roof
from ..model.kernel import Kernel

ENVELOPE_NAME = "best achieved (no roof given)"
ENVELOPE_NOTE = ("% roof and bound are measured against the best these kernels reached, not "
                 "against the machine: 100 % means the fastest here, not at a ceiling")


# CPU counters (likwid, perf) and torch's CPU ops are judged by a CPU's roof, not a GPU's
ON_CPU_HINT = ("pass --on CPU (a catalog name such as 'EPYC 9654', or a profile of this "
               "machine: `rooflab probe -o me.json`, then --on me.json)")


def on_cpu(kernels: Sequence[Kernel]) -> bool:
    """Whether every kernel ran on a CPU (the importer's meta device, or a torch CPU op)."""
    return bool(kernels) and all(k.meta.get("device") == "cpu"
                                 or k.meta.get("time") == "cpu op" for k in kernels)


def envelope_roof(kernels: Sequence[Kernel]) -> Roof | None:
    """Ceilings = the best FLOP/s per precision and unit, and B/s per level, any kernel
    reached; a kernel's FLOP/s of its main precision (Kernel.precision), raised where its
    other precisions are held to that ceiling so that the kernel takes its measured time.

    Not a machine's roof: a lower bound on it, used only when nothing better is known so that
    the kernels can still be compared with each other; so no kernel is above it, and the one
    that set a ceiling is at exactly 100 %. Tensor (MFMA, tensor-core) kernels get a tensor
    ceiling of their own: a single vector one made analyze() note "no fp8 tensor ceiling;
    using fp8 vector" for an MFMA kernel that had set that very ceiling.
    """
    flop: dict[tuple[str, str], float] = {}
    alone: dict[tuple[str, str], tuple[float, Kernel]] = {}   # main precision's own rate
    bw: dict[str, float] = {}
    timed = [k for k in kernels if k.seconds]
    for k in timed:
        main = k.flop.get(k.precision, 0.0)
        if main > 0:
            # A minor precision sets no ceiling: its FLOP ran alongside the main ones, and
            # as a ceiling of its own (2.16 GFLOP/s of fp32 in the GPP kernel) analyze()'s
            # time-weighted mix would put its own kernel at 200 %; held to the main one it
            # gets analyze()'s "no <p> ceiling" note.
            key = (k.precision, k.unit or "vector")
            flop[key] = max(flop.get(key, 0.0), main / k.seconds)
            if main / k.seconds >= alone.get(key, (0.0,))[0]:
                alone[key] = (main / k.seconds, k)
        for level, v in k.bytes.items():
            if v > 0:
                bw[level] = max(bw.get(level, 0.0), v / k.seconds)
    if not flop or not bw:
        return None
    roof = _envelope(flop, bw, alone, on_cpu(timed))
    # The main precision's own rate alone (review 12b H) put the GPP kernel at 102 % of the
    # roof it set: its 4.9e10 fp32 FLOP are held to the fp64 ceiling too (review 13v F-B).
    # Raise each main ceiling until every kernel's FLOP held to it, plus the time of its
    # parts on other ceilings, take at most its measured time. Raising only shortens other
    # kernels' roof times, so a few passes settle it (one, unless a minor precision falls
    # back to a ceiling another kernel then raises).
    for _ in range(4):
        raised = False
        for k in timed:
            key = (k.precision, k.unit or "vector")
            # a 0-FLOP kernel (an int copy_, a bf16 cast) of a precision no FLOP-carrying
            # kernel has sets no compute ceiling: nothing to raise (review r2 F1)
            if key not in flop:
                continue
            need = _rate_for_own_time(roof, k, key)
            if need > flop[key] * (1 + 1e-12):
                flop[key], raised = need, True
        if not raised:
            break
        roof = _envelope(flop, bw, alone, on_cpu(timed))
    return roof


def _rate_for_own_time(roof: Roof, k: Kernel, key: tuple[str, str]) -> float:
    """The rate the ceiling `key` (the kernel's main precision and unit) needs for kernel k
    to take its measured time on `roof`: the FLOP held to it over the time the kernel's
    other parts leave (0 when none are held to it or the others alone take longer)."""
    from ..model.ceiling import CeilingPart, kernel_ceiling

    held = kernel_ceiling(roof, k.flop, k.unit, k.precision)
    parts = held.parts or (CeilingPart(k.precision, k.total_flop, held.ceiling),)
    own = [x for x in parts if (x.ceiling.precision, x.ceiling.unit) == key]
    rest = sum(x.seconds_at_peak for x in parts if x not in own)
    if not own or rest >= k.seconds:
        return 0.0
    return sum(x.flop for x in own) / (k.seconds - rest)


ENVELOPE_SOURCE = "best achieved by the profiled kernels (a lower bound on the machine's roof)"


def _envelope(flop: Mapping[tuple[str, str], float], bw: Mapping[str, float],
              alone: Mapping[tuple[str, str], tuple[float, Kernel]],
              cpu: bool = False) -> Roof:
    """The envelope Roof; a compute ceiling raised above its precision's own best rate says
    so in its method (envelope_words)."""
    def method(key: tuple[str, str], value: float) -> str:
        rate, k = alone[key]
        if value <= rate * (1 + 1e-9):
            return ""
        from ..units import fmt_rate

        others = ", ".join(p for p, v in k.flop.items() if v > 0 and p != key[0])
        return (f"{k.name}'s FLOP, {others} included: {key[0]} alone "
                f"{fmt_rate(rate, key[0])}")

    return Roof(
        name=ENVELOPE_NAME, kind="derived",
        compute=tuple(Ceiling(value=v, precision=p, unit=unit, provenance="derived",
                              source=ENVELOPE_SOURCE, method=method((p, unit), v))
                      for (p, unit), v in flop.items()),
        memory=tuple(Ceiling(value=v, level=lv, provenance="derived", source=ENVELOPE_SOURCE)
                     for lv, v in bw.items()),
        source=ENVELOPE_SOURCE,
        notes=("no roof was given, the files name no known device and record no peaks; "
               + (ON_CPU_HINT if cpu else
                  "pass --on GPU (a catalog name or a profile)") + " for real ceilings",))


def envelope_words(roof: Roof) -> list[str]:
    """'fp64 vector 88.4 GFLOP/s (sigma_gpp_gpu_29's FLOP, fp32 included: fp64 alone
    86.3 GFLOP/s)': each envelope ceiling a mixed kernel's minor FLOP raised."""
    from ..units import fmt_rate

    if roof.name != ENVELOPE_NAME:
        return []
    return [f"{c.label} {fmt_rate(c.value, c.precision)} ({c.method})"
            for c in roof.compute if c.method]

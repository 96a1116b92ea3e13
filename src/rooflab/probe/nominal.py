"""Measured ceilings against nominal ones, for the CPU and GPU probes alike.

A measured value above the datasheet is a warning on the ceiling (compare_to_nominal, GPU;
the CPU probe's flags.flag_overshoot allows 5 % since its nominal is at a measured clock).
A value far *below* it is a note on the measured roof (below_nominal_notes): the ratio is in
the table, but nothing said that a DRAM at 45 % of the datasheet is no healthy machine.

Thresholds, from the seeds: a healthy run reaches 75-90 % of the datasheet bandwidth and
70-90 % of the compute peak (seed 004); a copy kernel 85-92 % of spec (seed 000 §3.1); a
GEMM at 60-70 % of peak already means the matrix is too small or the library misconfigured
(seed 000 §3.2). Flagged: bandwidth below 60 % (15 points under the lowest healthy figure)
and compute below 50 % (20 points under it, below the seeds' "misconfigured" band), so a
run at the low end of normal stays quiet. `rooflab report` warns at the same floors.
A GPU compute peak at 50-70 % is no disturbed probe but seed 000 §3.2's own symptom ("如果
只能跑到峰值的 60% 到 70% 那说明要么矩阵规模不够大要么库的配置没调好"): it gets a quieter
note of its own (low_compute_notes; review 18a F5: 62 % passed without a word).
"""

from __future__ import annotations

import platform
from collections.abc import Sequence
from dataclasses import replace

from ..model import datasheet_note as sheet
from ..model.ceiling import Ceiling, Roof
from ..model.datasheet_note import band_words
from ..units import LINKS, fmt_fraction, rate_unit, si

BANDWIDTH_FLOOR = 0.60
COMPUTE_FLOOR = 0.50
# The quieter note's upper edges are the healthy bands' low edges, read from their one home
# (model/datasheet_note.py) when a note is made: under sheet.HEALTHY_COMPUTE[0] (70 %) of a
# GPU's datasheet compute peak, and at or over COMPUTE_FLOOR, is seed 000 §3.2's "60-70 %";
# under sheet.HEALTHY_BANDWIDTH[0] (75 %) of its DRAM bandwidth, and at or over
# BANDWIDTH_FLOOR, is low, not yet disturbed: a copy reaches 85-92 % of spec (seed 000
# §3.1), a healthy run 75-90 % (seed 004) (review 19a N6: 62 % passed without a word).

# The usual reasons, per device and ceiling kind: what a reader can check.
_CAUSES = {
    ("cpu", "memory"): "another tenant or process using the memory bus, a VM or container "
                       "CPU quota stalling the threads, memory channels not all populated "
                       "(fewer DIMMs than channels), threads and memory on different NUMA "
                       "nodes, too few threads to fill the sockets",
    ("cpu", "compute"): "another tenant or process on the cores, a VM or container CPU "
                        "quota (cgroup cpu.max), power or thermal throttling (vector units "
                        "clock down under wide-SIMD load), a BLAS using narrower SIMD than "
                        "the CPU has (AVX2 on an AVX-512 CPU), problem sizes too small to "
                        "fill the cores",
    ("gpu", "memory"): "another process on the GPU, power or thermal throttling (memory "
                       "clock below its maximum: the profile's host clocks), a MIG slice or "
                       "vGPU, arrays too small to leave the L2",
    ("gpu", "link"): "a slot narrower or older than the card's link (x8, or Gen3 for a Gen4 "
                     "card), a PCIe switch shared with other devices, another process "
                     "copying at the same time",
    ("gpu", "compute"): "another process on the GPU, power or thermal throttling (SM clock "
                        "below boost: the profile's host clocks), a MIG slice or vGPU, "
                        "matrices too small to fill the SMs, the library on a slower path "
                        "(TF32 off, no tensor cores for the shape or dtype)",
    # A GPU's int8 ceiling is torch._int_mm's, which calls cuBLASLt with no heuristic and no
    # workspace (aten/src/ATen/cuda/CUDABlas.cpp int8_gemm): a library figure with its own
    # cause, not the machine's (review 14a #5; pytorch/pytorch#187094).
    ("gpu", "int8"): "PyTorch's int8 GEMM path (torch._int_mm runs cuBLASLt's default "
                     "algorithm with no workspace and can land on an older, slower kernel; "
                     "the Triton int8 GEMM measured beside it is one untuned tile: library "
                     "figures, not the card's); also another process on the GPU or "
                     "throttling, as for the other precisions",
}
# Linux's words in the CPU causes, and what they become elsewhere: macOS and Windows have no
# cgroups, and their quotas are a VM's vCPU limit or a Windows job object (s23 r3 F9)
_LINUX_QUOTA = "a VM or container CPU quota (cgroup cpu.max)"
_OTHER_QUOTA = "a VM's CPU limit or a container's CPU quota"


def _causes(device: str, group: str, system: str | None = None) -> str:
    """The usual causes for `device`/`group`, worded for this OS (`system`:
    platform.system(), given by tests)."""
    text = _CAUSES[(device, group)]
    if (system or platform.system()) != "Linux":
        text = text.replace(_LINUX_QUOTA, _OTHER_QUOTA)
    return text


# interconnects, judged against link bands, not memory ones (units.LINKS, the one list)
_LINKS = LINKS
# Groups whose ceilings are compute rates (units, floor, healthy band of "compute").
_COMPUTE_GROUPS = ("compute", "int8")
# What a healthy CPU run reaches of its compute. The CPU's nominal compute is taken at the
# clock measured in the same run, so its FMA kernel reaches ~100 % of it (bf16/int8 through
# torch 84-90 %); the seeds' 70-90 % is a GPU's distance to its boost-clock datasheet figure.
_CPU_HEALTHY_COMPUTE = "85-100 % (nominal at the clock measured in this run)"


def healthy_range(device: str, compute: bool = True) -> str:
    """What a quiet probe reaches of its nominal ceilings: a CPU's derived peak at the clock
    it measured, 85-100 %; a GPU's datasheet peak, 70-90 %; any bandwidth (memory or link),
    75-90 % (seed 004: datasheet_note's bands)."""
    if not compute:
        return band_words(sheet.HEALTHY_BANDWIDTH)
    return _CPU_HEALTHY_COMPUTE if device == "cpu" else band_words(sheet.HEALTHY_COMPUTE)


def nominal_for(c: Ceiling, nominal: Roof) -> Ceiling | None:
    """The nominal ceiling a measured one is judged against, or None."""
    if c.is_compute:
        # Same precision and unit only: a vector figure against a tensor-core peak says nothing.
        return next((n for n in nominal.compute if n.precision == c.precision
                     and n.unit in (c.unit, None)), None)
    return nominal.find_memory(c.level)


def floor_for(c: Ceiling) -> float:
    return COMPUTE_FLOOR if c.is_compute else BANDWIDTH_FLOOR


def _group(c: Ceiling, device: str) -> str:
    if c.is_compute:
        return "int8" if device == "gpu" and c.precision == "int8" else "compute"
    return "link" if device == "gpu" and c.level in _LINKS else "memory"


def _far_below(measured: Roof, nominal: Roof) -> list[tuple[Ceiling, Ceiling]]:
    pairs = [(c, nominal_for(c, nominal)) for c in (*measured.memory, *measured.compute)]
    return [(c, ref) for c, ref in pairs
            if ref is not None and ref.value > 0 and c.value < floor_for(c) * ref.value]


def _note(group: str, pairs: Sequence[tuple[Ceiling, Ceiling]], nominal: Roof,
          device: str) -> str:
    compute = group in _COMPUTE_GROUPS

    def unit(c: Ceiling) -> str:
        return rate_unit(c.precision) if compute else "B/s"

    what = ", ".join(f"{c.label} {si(c.value, unit(c))} = {fmt_fraction(c.value / ref.value)} of "
                     f"{si(ref.value, unit(c))}" for c, ref in pairs)
    floor = COMPUTE_FLOOR if compute else BANDWIDTH_FLOOR
    return (f"far below nominal ('{nominal.name}'): {what}; a healthy run reaches "
            f"{healthy_range(device, compute)} (flagged under {fmt_fraction(floor)}), so every % "
            f"of roof judged by "
            f"{'this ceiling' if len(pairs) == 1 else 'these ceilings'} reads high. Usual "
            f"causes: {_causes(device, group)}; rerun on a quiet machine, or judge by the "
            f"nominal roof")


def below_nominal_notes(measured: Roof, nominal: Roof | None, device: str) -> list[str]:
    """One note per kind (memory, host link, compute) naming each measured ceiling under
    BANDWIDTH_FLOOR / COMPUTE_FLOOR of its nominal one, the ratio, and the usual causes.
    `device` is "cpu" or "gpu" (the causes differ). Ceilings without a nominal match (the
    CPU's memory levels, a precision the datasheet lacks) are not judged."""
    if nominal is None:
        return []
    pairs = _far_below(measured, nominal)
    groups = ("memory", "link", "compute", "int8")
    return [_note(g, ps, nominal, device) for g in groups
            if (ps := [p for p in pairs if _group(p[0], device) == g])]


def low_compute(measured: Roof, nominal: Roof | None,
                device: str) -> list[tuple[Ceiling, Ceiling]]:
    """(measured, nominal) pairs of a GPU's float compute ceilings at COMPUTE_FLOOR to the
    healthy band's low edge (sheet.HEALTHY_COMPUTE[0]) of their nominal: low, not disturbed
    (seed 000 §3.2). A CPU's nominal is at its measured clock (healthy 85-100 %), and a
    GPU's int8 figure is a library's (its own cause in the far-below note), so neither is
    judged here."""
    if nominal is None or device != "gpu":
        return []
    pairs = [(c, nominal_for(c, nominal)) for c in measured.compute
             if _group(c, device) == "compute"]
    return [(c, ref) for c, ref in pairs if ref is not None and ref.value > 0
            and COMPUTE_FLOOR * ref.value <= c.value < sheet.HEALTHY_COMPUTE[0] * ref.value]


def low_compute_notes(measured: Roof, nominal: Roof | None, device: str) -> list[str]:
    """The quiet low-ceiling notes: one naming each GPU compute peak at 50-70 % of its
    datasheet figure (low_compute) with seed 000 §3.2's reading of it, then one for a GPU
    DRAM bandwidth at 60-75 % (low_bandwidth_notes; review 19a N6: every caller of this,
    report included, says both); [] when there is none."""
    return (_low_peak_notes(measured, nominal, device)
            + low_bandwidth_notes(measured, nominal, device))


def _low_peak_notes(measured: Roof, nominal: Roof | None, device: str) -> list[str]:
    """low_compute_notes' compute note alone."""
    pairs = low_compute(measured, nominal, device)
    if not pairs:
        return []
    what = ", ".join(f"{c.label} {si(c.value, rate_unit(c.precision))} = "
                     f"{fmt_fraction(c.value / ref.value)} of "
                     f"{si(ref.value, rate_unit(c.precision))}"
                     for c, ref in pairs)
    # TF32 is an fp32-input mode: no cause of a low fp16/bf16 peak (review 19a N12)
    tf32 = "TF32 off, " if any(c.precision in ("fp32", "tf32") for c, _ in pairs) else ""
    return [f"low against nominal ('{nominal.name}'): {what}; a quiet probe reaches "
            f"{healthy_range(device)} (noted at "
            f"{band_words((COMPUTE_FLOOR, sheet.HEALTHY_COMPUTE[0]))}), and seed 000 §3.2 "
            f"reads 60-70 % of the "
            f"peak as matrices too small to fill the SMs or a library path not tuned "
            f"({tf32}no tensor cores for the shape or dtype); rerun the probe with "
            f"larger matrices or check the library before taking this as the roof "
            f"(every % of roof it holds reads high)"]


def low_bandwidth(measured: Roof, nominal: Roof | None,
                  device: str) -> list[tuple[Ceiling, Ceiling]]:
    """(measured, nominal) pairs of a GPU's DRAM ceilings at BANDWIDTH_FLOOR to the healthy
    band's low edge (sheet.HEALTHY_BANDWIDTH[0]) of their datasheet figure: low, not
    disturbed. A CPU's datasheet DRAM is a channel rate its STREAM-counted figure sits well
    under, so it is not judged."""
    if nominal is None or device != "gpu":
        return []
    pairs = [(c, nominal.find_memory(c.level)) for c in measured.memory if c.level == "DRAM"]
    return [(c, ref) for c, ref in pairs if ref is not None and ref.value > 0
            and BANDWIDTH_FLOOR * ref.value <= c.value
            < sheet.HEALTHY_BANDWIDTH[0] * ref.value]


def low_bandwidth_notes(measured: Roof, nominal: Roof | None, device: str) -> list[str]:
    """One note naming a GPU DRAM bandwidth at 60-75 % of its datasheet (low_bandwidth);
    [] when there is none."""
    pairs = low_bandwidth(measured, nominal, device)
    if not pairs:
        return []
    what = ", ".join(f"{c.label} {si(c.value, 'B/s')} = {fmt_fraction(c.value / ref.value)} of "
                     f"{si(ref.value, 'B/s')}" for c, ref in pairs)
    return [f"low against nominal ('{nominal.name}'): {what}; a copy reaches "
            f"{band_words(sheet.COPY_BANDWIDTH)} of the datasheet (seed 000 §3.1) and a "
            f"healthy run {band_words(sheet.HEALTHY_BANDWIDTH)} (seed 004; noted at "
            f"{band_words((BANDWIDTH_FLOOR, sheet.HEALTHY_BANDWIDTH[0]))}): ECC on, "
            f"arrays too small to leave the L2, or the memory clock down; rerun the probe "
            f"before taking this as the roof (every % of roof it holds reads high)"]


def add_below_nominal_notes(measured: Roof, nominal: Roof | None,
                            device: str) -> tuple[Roof, list[str]]:
    """The measured roof with the below-nominal notes (and the low-compute note)
    appended, and the notes."""
    notes = [n for n in (*below_nominal_notes(measured, nominal, device),
                         *low_compute_notes(measured, nominal, device))
             if n not in measured.notes]
    return replace(measured, notes=measured.notes + tuple(notes)), notes


def below_nominal_extras(notes: Sequence[str]) -> dict:
    """The profile's extras.below_nominal: the notes (`rooflab probe --json` and `bench`'s
    own probe say them on stderr) and the thresholds that chose them."""
    return {"notes": list(notes), "bandwidth_floor": BANDWIDTH_FLOOR,
            "compute_floor": COMPUTE_FLOOR, "quiet_compute_floor": sheet.HEALTHY_COMPUTE[0],
            "quiet_bandwidth_floor": sheet.HEALTHY_BANDWIDTH[0]}


def profile_low_notes(profile) -> list[str]:
    """low_compute_notes for a profile holding both roofs (`rooflab report --on` a profile:
    a hand-written one carries no probe notes), the device read off its host; [] when it
    lacks either roof or has no such ceiling."""
    if profile is None or profile.measured is None or profile.nominal is None:
        return []
    device = "cpu" if (profile.host or {}).get("kind") == "cpu" else "gpu"
    return [n for n in low_compute_notes(profile.measured, profile.nominal, device)
            if n not in profile.measured.notes]


def compare_to_nominal(measured: Roof, nominal: Roof | None,
                       device: str = "gpu") -> tuple[Roof, list[dict]]:
    """Each measured ceiling against its nominal one. A measured value above the datasheet
    is flagged with a warning on the ceiling (never hidden or clipped); values far below it
    get a note on the roof (below_nominal_notes)."""
    if nominal is None:
        return measured, []
    rows: list[dict] = []

    def check(c: Ceiling) -> Ceiling:
        ref = nominal_for(c, nominal)
        if ref is None:
            return c
        above = c.value > ref.value
        rows.append({"ceiling": c.label, "kind": "compute" if c.is_compute else "memory",
                     "measured": c.value, "nominal": ref.value, "ratio": c.value / ref.value,
                     "above_nominal": above,
                     "below_nominal": c.value < floor_for(c) * ref.value})
        if not above:
            return c
        unit = rate_unit(c.precision) if c.is_compute else "B/s"
        note = (f"measured {c.label} {si(c.value, unit)} is above the nominal "
                f"{si(ref.value, unit)} of '{nominal.name}' ({fmt_fraction(c.value / ref.value)}); "
                f"check the catalog entry (sparse vs dense, boost clock) or the measurement method")
        return replace(c, warnings=c.warnings + (note,))

    checked = replace(measured, compute=tuple(check(c) for c in measured.compute),
                      memory=tuple(check(c) for c in measured.memory))
    return add_below_nominal_notes(checked, nominal, device)[0], rows

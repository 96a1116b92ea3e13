"""Each rocprof kernel's achieved occupancy, where the file has the SQ wave-level counters:
what ncu's sm__warps_active gives an NVIDIA kernel, as the same Kernel.meta key
(occupancy_achieved, % of the wave slots), so the table (-o x.csv), --json and the latency
advice ("achieved occupancy 12.5 % of a theoretical 25.0 %") cite it alike.

rocprof-compute's "Wavefront Occupancy" (its System Speed-of-Light panel, one formula in
the gfx90a, gfx942 and gfx950 analysis configs, 0200_system-speed-of-light.yaml):
    waves     = SQ_ACCUM_PREV_HIRES / $GRBM_GUI_ACTIVE_PER_XCD     (mean resident waves)
    % of peak = 100 x waves / ($max_waves_per_cu x $cu_per_gpu)
with GRBM_GUI_ACTIVE_PER_XCD = GRBM_GUI_ACTIVE / $num_xcd (its parser's built-in
variables: the file's GRBM_GUI_ACTIVE is summed over the XCDs, each counting the same
busy cycles). SQ_ACCUM_PREV_HIRES is SQ_LEVEL_WAVES (the waves in flight) accumulated
every cycle (coll_level SQ_LEVEL_WAVES). Per GPU the XCDs and CUs are
rocprof-compute's mi_gpu_spec.yaml num_xcds (spx) and the catalog's CU count; a compute
partition (CPX: 1 XCD of 38 CUs on an MI300X) divides both alike, so the % holds there.
It is the whole GPU's busy time (idle CUs count against it), where ncu's is the active
SMs': a grid smaller than the GPU reads lower here.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..model.occupancy_cdna import CuLimits

ACCUM = ("SQ_ACCUM_PREV_HIRES", "SQ_ACCUM_PREV_HIRES_sum")
ACTIVE = ("GRBM_GUI_ACTIVE", "GRBM_GUI_ACTIVE_sum")

# catalog name -> (XCDs, CUs) of the agent rocprof records: an MI250X's is one GCD (1 die
# of 110 CUs, AMD's MI250X page: 220 CUs on 2 GCDs), an MI210 one die of 104
SHAPE: dict[str, tuple[int, int]] = {
    "AMD Instinct MI210": (1, 104), "AMD Instinct MI250X": (1, 110),
    "AMD Instinct MI300X": (8, 304), "AMD Instinct MI325X": (8, 304),
    "AMD Instinct MI300A": (6, 228),
    "AMD Instinct MI350X": (8, 256), "AMD Instinct MI355X": (8, 256),
}


def _first(m: Mapping[str, float], names: tuple[str, ...]) -> float | None:
    """The first finite value among a counter's spellings (None: none there)."""
    v = next((m[n] for n in names if n in m), None)
    return v if v is not None and v == v else None


def has_counters(m: Mapping[str, float]) -> bool:
    """Whether a dispatch recorded the accumulated wave level (SQ_ACCUM_PREV_HIRES)."""
    return _first(m, ACCUM) is not None


def busy_waves(m: Mapping[str, float]) -> float | None:
    """SQ_ACCUM_PREV_HIRES / GRBM_GUI_ACTIVE of one dispatch (None without both or a busy
    time): its achieved occupancy but for the GPU's factor (_pct), which aggregate._Group
    records for each dispatch before the GPU is known (WAVES)."""
    if ACCUM[0] not in m and ACCUM[1] not in m:   # every ncu launch: two lookups, no more
        return None
    accum, active = _first(m, ACCUM), _first(m, ACTIVE)
    if accum is None or not active or active <= 0:
        return None
    return accum / active


def _pct(waves: float, gpu: str, lim: CuLimits) -> float:
    """busy_waves as % of the GPU's wave slots (the module's formula: x XCDs / slots)."""
    xcds, cus = SHAPE[gpu]
    return 100.0 * waves * xcds / (lim.max_waves * cus)


def achieved_meta(m: Mapping[str, float], gpu: str | None, lim: CuLimits | None) -> dict:
    """{occupancy_achieved: %} of one dispatch by rocprof-compute's formula (above), or {}
    without both counters, a busy time, or a known GPU (its XCDs, CUs and waves per CU)."""
    waves = busy_waves(m)
    if waves is None or gpu not in SHAPE or lim is None:
        return {}
    return {"occupancy_achieved": _pct(waves, gpu, lim)}


# the key of aggregate._Group.occupancy under which each dispatch's busy_waves wait for
# the GPU (launch_occupancy turns them into "achieved", the key ncu's launches fill)
WAVES = "rocprof_waves"


def launch_occupancy(groups, gpu: str | None, lim: CuLimits | None) -> None:
    """Each group's dispatches' achieved occupancy in %, where ncu's launches leave theirs
    (_Group.occupancy["achieved"]), so the one rule (_Group.occupancy_note) says when a
    kernel's launches differ, whichever tool recorded them: only the first dispatch's was
    read, and launches of one kernel at 16 % and 90 % went unsaid (s36 M). Dropped where
    the GPU is not known (achieved_note says why). The groups are accumulators: changed
    in place, before group_kernel reads them."""
    for g in groups:
        waves = g.occupancy.pop(WAVES, None)
        if waves and gpu in SHAPE and lim is not None:
            g.occupancy["achieved"] = [_pct(w, gpu, lim) for w in waves]


def achieved_note(kernels, gpu: str | None, lim: CuLimits | None, firsts,
                  shown: int = 5) -> str:
    """One line naming the longest kernels' achieved occupancy and how it was measured, or
    why it could not be (a counter missing, the GPU unnamed); '' without the counters."""
    if not any(has_counters(m) for m in firsts):
        return ""
    if not any(_first(m, ACTIVE) for m in firsts if has_counters(m)):
        return ("SQ_ACCUM_PREV_HIRES without GRBM_GUI_ACTIVE (the busy cycles it is "
                "divided by): add GRBM_GUI_ACTIVE to --pmc for each kernel's achieved "
                "occupancy")
    if gpu not in SHAPE or lim is None:
        return ("the file records SQ_ACCUM_PREV_HIRES and GRBM_GUI_ACTIVE but not which GPU "
                "ran it (its XCDs and CUs divide them): name it (--on mi300x) for each "
                "kernel's achieved occupancy")
    from ..model.occupancy_words import occupancy_pct

    said = [f"{k.name} {occupancy_pct(k.meta['occupancy_achieved'])}" for k in kernels
            if "occupancy_achieved" in k.meta]
    more = f", and {len(said) - shown} more" if len(said) > shown else ""
    xcds, cus = SHAPE[gpu]
    return (f"achieved occupancy, the mean resident waves over the GPU's wave slots while "
            f"it was busy (rocprof-compute's Wavefront Occupancy: SQ_ACCUM_PREV_HIRES / "
            f"(GRBM_GUI_ACTIVE / {xcds} XCDs) / ({lim.max_waves} waves x {cus} CUs), "
            f"{gpu}; each kernel's first dispatch): {', '.join(said[:shown])}{more}; "
            f"--json has each kernel's occupancy_achieved")


def target_gpu(device: str | None, paths) -> str | None:
    """The catalog name of the GPU the kernels ran on, as rocprof_occupancy.target_gfx
    finds its target: the GPU `--on` names, else a workload folder's (MI300X_A1)."""
    from pathlib import Path

    from ..errors import HardwareNotFound
    from ..hardware.catalog import lookup

    folders = [q.name.split("_")[0] for p in paths for q in (Path(p), Path(p).parent)
               if q.name.upper().startswith("MI")]
    for spec in ([device] if device else []) + folders:
        if Path(spec).suffix or Path(spec).is_dir():
            continue      # a roof file, a folder: not a GPU's name
        try:
            name = lookup(spec).name
        except (HardwareNotFound, ValueError):
            continue
        if name in SHAPE:
            return name
    return None

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
# rocprofv3's own achieved occupancy: a derived counter (--pmc OccupancyPercent), no
# kernel-trace column. rocprofiler-sdk's source/share/rocprofiler-sdk/counter_defs.yaml,
# "GPU Occupancy as % of maximum", on gfx90a, gfx940-942 and gfx950:
#   400 * reduce(SQ_WAVE_CYCLES,sum) / reduce(GRBM_GUI_ACTIVE,max) / CU_NUM / 32
# (100 * ... on RDNA): the wave-cycles of every CU over one XCD's busy cycles, per CU,
# over its 32 wave slots; CDNA's SQ_WAVE_CYCLES counts per 4 cycles, hence 400. The same
# mean-resident-waves figure as the Wavefront Occupancy above from another counter, and
# with the GPU's CU count rocprof knows, so it needs no --on.
PCT_COUNTER = "OccupancyPercent"
PCT_FORMULA = "400 x SQ_WAVE_CYCLES / GRBM_GUI_ACTIVE / CU_NUM / 32 wave slots"

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
    time): its achieved occupancy but for the GPU's factor (pct_of), which aggregate._Group
    records for each dispatch before the GPU is known (rocprof_dispatch)."""
    if ACCUM[0] not in m and ACCUM[1] not in m:   # every ncu launch: two lookups, no more
        return None
    accum, active = _first(m, ACCUM), _first(m, ACTIVE)
    if accum is None or not active or active <= 0:
        return None
    return accum / active


def pct_of(waves: float, gpu: str, lim: CuLimits) -> float:
    """busy_waves as % of the GPU's wave slots (the module's formula: x XCDs / slots)."""
    xcds, cus = SHAPE[gpu]
    return 100.0 * waves * xcds / (lim.max_waves * cus)


def _own(m: Mapping[str, float], gpu: str | None, lim: CuLimits | None) -> bool:
    """Whether rooflab can say a dispatch's achieved % itself: both counters, a busy time
    and a GPU whose XCDs, CUs and waves per CU are known."""
    return busy_waves(m) is not None and gpu in SHAPE and lim is not None


def achieved_meta(m: Mapping[str, float], gpu: str | None, lim: CuLimits | None) -> dict:
    """One dispatch's achieved occupancy in %: occupancy_achieved by rocprof-compute's
    formula (above) where _own, else rocprofv3's OccupancyPercent; that one also as
    occupancy_rocprof, beside rooflab's own. {} with neither."""
    theirs = _first(m, (PCT_COUNTER,))
    out = {} if theirs is None else {"occupancy_rocprof": theirs}
    if _own(m, gpu, lim):
        return {"occupancy_achieved": pct_of(busy_waves(m), gpu, lim), **out}
    return {"occupancy_achieved": theirs, **out} if out else {}


def achieved_words(m: Mapping[str, float], gpu: str | None, lim: CuLimits | None) -> str:
    """Where achieved_meta's figure came from, for the dispatch's occupancy_from."""
    from ..model.occupancy_words import occupancy_pct

    theirs = _first(m, (PCT_COUNTER,))
    if not _own(m, gpu, lim):
        return "" if theirs is None else \
            f"achieved measured: rocprofv3's {PCT_COUNTER} counter ({PCT_FORMULA})"
    also = "" if theirs is None else \
        f"; rocprofv3's own {PCT_COUNTER} {occupancy_pct(theirs)} (occupancy_rocprof)"
    return ("achieved measured: rocprof-compute's Wavefront Occupancy from "
            f"SQ_ACCUM_PREV_HIRES and GRBM_GUI_ACTIVE{also}")


def _said(kernels, shown: int, own: bool) -> str:
    """'gemm 25.0 % (rocprofv3's OccupancyPercent 24.6 %), scale 40.0 % (rocprofv3's
    OccupancyPercent), ...' of the longest kernels; own: the note is of rooflab's figures,
    so rocprof's stand beside them, or say whose a kernel's is."""
    from ..model.occupancy_words import occupancy_pct

    def one(m) -> str:
        text = occupancy_pct(m["occupancy_achieved"])
        if not own or "occupancy_rocprof" not in m:
            return text
        if "Wavefront Occupancy" not in m.get("occupancy_from", ""):   # rocprof's alone
            return f"{text} (rocprofv3's {PCT_COUNTER})"
        return f"{text} (rocprofv3's {PCT_COUNTER} {occupancy_pct(m['occupancy_rocprof'])})"

    said = [f"{k.name} {one(k.meta)}" for k in kernels if "occupancy_achieved" in k.meta]
    more = f", and {len(said) - shown} more" if len(said) > shown else ""
    return ", ".join(said[:shown]) + more


def achieved_note(kernels, gpu: str | None, lim: CuLimits | None, firsts,
                  shown: int = 5) -> str:
    """One line naming the longest kernels' achieved occupancy and how it was measured, or
    why it could not be (a counter missing, the GPU unnamed); '' without the counters.
    rocprofv3's own OccupancyPercent, where recorded, stands beside rooflab's figure, or
    in its place where rooflab has none (it needs neither the GPU's name nor SQ_ACCUM)."""
    own = any(has_counters(m) for m in firsts)
    theirs = any(_first(m, (PCT_COUNTER,)) is not None for m in firsts)
    if own and not any(_first(m, ACTIVE) for m in firsts if has_counters(m)):
        why = ("SQ_ACCUM_PREV_HIRES without GRBM_GUI_ACTIVE (the busy cycles it is "
               "divided by): add GRBM_GUI_ACTIVE to --pmc for each kernel's achieved "
               "occupancy")
    elif own and (gpu not in SHAPE or lim is None):
        why = ("the file records SQ_ACCUM_PREV_HIRES and GRBM_GUI_ACTIVE but not which GPU "
               "ran it (its XCDs and CUs divide them): name it (--on mi300x) for each "
               "kernel's achieved occupancy")
    elif own:
        xcds, cus = SHAPE[gpu]
        return (f"achieved occupancy, the mean resident waves over the GPU's wave slots "
                f"while it was busy (rocprof-compute's Wavefront Occupancy: "
                f"SQ_ACCUM_PREV_HIRES / (GRBM_GUI_ACTIVE / {xcds} XCDs) / ({lim.max_waves} "
                f"waves x {cus} CUs), {gpu}; each kernel's first dispatch): "
                f"{_said(kernels, shown, True)}; --json has each kernel's occupancy_achieved")
    else:
        why = ""
    if not theirs:
        return why
    return (f"achieved occupancy as rocprofv3 measured it (its {PCT_COUNTER} counter: "
            f"{PCT_FORMULA}; each kernel's first dispatch): {_said(kernels, shown, False)}; "
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

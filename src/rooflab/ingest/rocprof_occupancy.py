"""Each rocprof kernel's theoretical occupancy, from the resources rocprof records beside its
counters (workgroup size, VGPRs, AccVGPRs, SGPRs, LDS per workgroup), through HIP's
calculator (model/occupancy_cdna.py): what ncu's Occupancy section gives an NVIDIA kernel,
as the same Kernel.meta keys (occupancy_theoretical in %, occupancy_limiter,
occupancy_limit_blocks), so the advice and the latency diagnosis cite it alike.

The columns, as each rocprof spells them (verified against the tools' own headers):
  rocprof v1 results.csv     Index,KernelName,...,grd,wgr,lds,scr,arch_vgpr,accum_vgpr,sgpr,
                             wave_size,... (ROCm rocprofiler docs; older ones: vgpr, sgpr)
  rocprofv2 / rocprof-compute Dispatch_ID,...,Grid_Size,Workgroup_Size,LDS_Per_Workgroup,
    pmc_perf.csv             Scratch_Per_Workitem,Arch_VGPR,Accum_VGPR,SGPR,Wave_Size,...
  rocprofv3 counter          ...,Grid_Size,Kernel_Id,Kernel_Name,Workgroup_Size,LDS_Block_Size,
    _collection.csv          Scratch_Size,VGPR_Count,Accum_VGPR_Count,SGPR_Count,...
Workgroup sizes are work-items (x*y*z); LDS is bytes per workgroup, rocprofiler-sdk's
group_segment_size rounded up to its 512-B LDS block; the register counts are the kernel
descriptor's (granulated) per work-item (VGPR) and per wave (SGPR). On gfx90a and later the
architected VGPRs and AccVGPRs share one 512-entry file, so a wave holds their sum.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import InputError
from ..model.occupancy_cdna import CuLimits, cu_occupancy

# what -> its column's spellings, first found wins
COLUMNS: dict[str, tuple[str, ...]] = {
    "block": ("Workgroup_Size", "wgr", "WGR"),
    "arch_vgpr": ("Arch_VGPR", "arch_vgpr", "VGPR_Count", "vgpr"),
    "accum_vgpr": ("Accum_VGPR", "accum_vgpr", "ACCUM_VGPR", "Accum_VGPR_Count"),
    "sgpr": ("SGPR", "sgpr", "SGPR_Count"),
    "lds": ("LDS_Per_Workgroup", "LDS_Block_Size", "lds", "LDS"),
    "wave_size": ("Wave_Size", "wave_size"),
}
# the limits in the words ncu's limiter uses for its own
LIMITER_WORDS = {"waves": "wave slots (workgroup size)", "vgprs": "VGPRs", "sgprs": "SGPRs",
                 "lds": "LDS"}


def resources(m: Mapping[str, float]) -> dict[str, float] | None:
    """{what: value} of the COLUMNS a dispatch has (finite ones); None without a workgroup
    size or a VGPR count, the two the calculator cannot go without."""
    out = {}
    for what, names in COLUMNS.items():
        v = next((m[n] for n in names if n in m), None)
        if v is not None and v == v and v >= 0:
            out[what] = v
    return out if "block" in out and "arch_vgpr" in out else None


def dispatch_shape(m: Mapping[str, float]) -> tuple | None:
    """A dispatch's resources as a hashable tuple (((what, value), ...), for
    rocprof_dispatch to keep each distinct one); None without them, at once for an ncu
    launch (no workgroup column)."""
    if not any(n in m for n in COLUMNS["block"]):
        return None
    r = resources(m)
    return None if r is None else tuple(r.items())


def shape_pct(shape: tuple, lim: CuLimits) -> float | None:
    """The theoretical % of a dispatch_shape on `lim`'s CU (None: not one it can launch)."""
    return _meta(dict(shape), lim).get("occupancy_theoretical")


def occupancy_meta(m: Mapping[str, float], lim: CuLimits | None) -> dict:
    """The Kernel.meta of one dispatch's theoretical occupancy on `lim`'s CU ({} where the
    file lacks the columns, no target is known, or the dispatch is not wave64)."""
    r = resources(m)
    return {} if r is None or lim is None else _meta(r, lim)


def _meta(r: dict[str, float], lim: CuLimits) -> dict:
    """occupancy_meta of the resources `r` (resources' keys)."""
    if r.get("wave_size", lim.wave_size) != lim.wave_size:
        return {}
    block, vgprs = int(r["block"]), int(r["arch_vgpr"] + r.get("accum_vgpr", 0))
    try:
        o = cu_occupancy(block, vgprs, int(r.get("lds", 0)), lim, int(r.get("sgpr", 0)))
    except InputError:
        return {}     # a shape HIP could not launch: the row is not trusted
    how = "arch + AccVGPR" if "accum_vgpr" in r else "no AccVGPR column: arch only"
    return {"occupancy_theoretical": 100 * o.occupancy,
            "occupancy_limiter": ", ".join(LIMITER_WORDS[b] for b in o.binding),
            "occupancy_limit_blocks": o.active_blocks,
            "workgroup_size": block, "wave_size": lim.wave_size,
            "occupancy_from": (f"derived by HIP's occupancy calculator for {lim.gfx} from "
                               f"rocprof's workgroup {block}, {vgprs} VGPRs ({how}), "
                               f"{int(r['sgpr']) if 'sgpr' in r else 'no'} SGPRs, "
                               f"{int(r.get('lds', 0))} B LDS")}


def occupancy_note(kernels, gfx: str, shown: int = 5, spans=None) -> str:
    """One line naming the longest kernels' theoretical occupancy and what limits it;
    spans: {(kernel name, step): (lowest, highest) %} of those whose dispatches differ
    (rocprof_dispatch.theoretical_span), said as a range, where the limiter is the first
    dispatch's."""
    from ..model.occupancy_words import occupancy_pct

    spans = spans or {}
    # the one occupancy rule every page prints by (one decimal); '.3g' read 3 waves of 32
    # as '9.38 %' here and '9.4 %' in the advice beside it (s36 F)
    said = [f"{k.name} " + (
        f"{occupancy_pct(*spans[k.name, k.meta.get('step')])} by dispatch (the first: "
        f"{occupancy_pct(k.meta['occupancy_theoretical'])}, {k.meta['occupancy_limiter']})"
        if (k.name, k.meta.get("step")) in spans else
        f"{occupancy_pct(k.meta['occupancy_theoretical'])} ({k.meta['occupancy_limiter']})")
        for k in kernels if "occupancy_theoretical" in k.meta]
    if not said:
        return ""
    more = f", and {len(said) - shown} more" if len(said) > shown else ""
    return (f"theoretical occupancy and what limits it (HIP's calculator for {gfx}, from "
            f"each kernel's workgroup size, VGPRs + AccVGPRs, SGPRs and LDS as rocprof "
            f"recorded them): {', '.join(said[:shown])}{more}; --json has each kernel's "
            f"occupancy_*")


UNNAMED_NOTE = ("the file records each kernel's workgroup size, VGPRs and LDS, but not which "
                "GPU ran it: name it (--on mi300x) for the theoretical occupancy they allow")


# rocprof-compute names a workload's folder by its GPU (MI300X_A1, MI200); MI200 is no
# catalog name, but every MI200 is gfx90a
_FOLDER_GFX = {"MI200": "gfx90a"}


def target_gfx(device: str | None, paths) -> str | None:
    """The LLVM target the kernels ran on: the catalog GPU `--on` names, else a
    rocprof-compute workload folder's GPU (workloads/app/MI300X_A1); None when neither
    says (a counter CSV does not record it)."""
    from pathlib import Path

    from ..errors import HardwareNotFound
    from ..hardware.catalog import lookup
    from ..hardware.cdna_limits import GFX_BY_DEVICE

    folders = [q.name.split("_")[0] for p in paths for q in (Path(p), Path(p).parent)
               if q.name.upper().startswith("MI")]
    for spec in ([device] if device else []) + folders:
        if spec.upper() in _FOLDER_GFX:
            return _FOLDER_GFX[spec.upper()]
        if Path(spec).suffix or Path(spec).is_dir():
            continue      # a roof file, a folder: not a GPU's name
        try:
            return GFX_BY_DEVICE.get(lookup(spec).name)
        except (HardwareNotFound, ValueError):
            continue
    return None


def with_occupancy(kernels, firsts, gfx: str | None, gpu: str | None = None,
                   spans=None) -> tuple[list, tuple[str, ...]]:
    """The kernels with their first dispatch's occupancy in meta (`firsts`: each kernel's
    first dispatch's metrics): the theoretical one from its resources on `gfx`, the
    achieved one from the SQ counters on `gpu` (a catalog name: rocprof_achieved), and the
    notes that say them (or why they could not be); spans: occupancy_note's, the
    theoretical range of kernels whose dispatches differ."""
    from dataclasses import replace

    from ..hardware.cdna_limits import cu_limits
    from .rocprof_achieved import achieved_meta, achieved_note, achieved_words

    lim = cu_limits(gfx)
    out = [replace(k, meta={**k.meta, **extra}) if (
        extra := _both(occupancy_meta(m, lim), achieved_meta(m, gpu, lim),
                       achieved_words(m, gpu, lim))) else k
        for k, m in zip(kernels, firsts, strict=True)]
    longest = sorted(out, key=lambda k: -(k.seconds or 0.0))
    achieved = achieved_note(longest, gpu, lim, firsts)
    if lim is not None:
        note = occupancy_note(longest, lim.gfx, spans=spans)
    else:
        note = UNNAMED_NOTE if any(resources(m) is not None for m in firsts) else ""
    return out, tuple(n for n in (note, achieved) if n)


def _both(theoretical: dict, achieved: dict, how: str) -> dict:
    """One dispatch's occupancy meta: occupancy_from says where each figure came from, the
    achieved one measured (occupancy_words prints it after the achieved %, which read as
    "derived by HIP's calculator" with the theoretical's words alone); `how`:
    rocprof_achieved.achieved_words."""
    if not achieved:
        return theoretical
    said = theoretical.get("occupancy_from")
    return {**theoretical, **achieved,
            "occupancy_from": f"{said}; {how}" if said else how}

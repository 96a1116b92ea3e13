"""`rooflab ai occupancy` on an AMD CDNA GPU: HIP's occupancy calculator
(model/occupancy_cdna.py) in waves, VGPRs, SGPRs and LDS per compute unit."""

from __future__ import annotations

from .ai_args import _n


def run_cdna(target, block: str, regs: str, lds: int, sgprs: str | None,
             json_out: bool) -> None:
    """Print (or emit as JSON) the occupancy of one launch on target = (CuLimits, where)."""
    from ..hardware.cdna_limits import CU_SOURCE
    from ..model.occupancy_cdna import cu_levers, cu_occupancy

    lim, where = target
    res = cu_occupancy(_n(block, "--block", 1), _n(regs, "--regs", 0), lds, lim,
                       0 if sgprs is None else _n(sgprs, "--sgprs", 0))
    d = result(res, lim, where)
    d["levers"] = list(cu_levers(res, lim))
    d["source"] = CU_SOURCE
    answer(d, json_out, lines)


def answer(d: dict, json_out: bool, to_lines) -> None:
    """An occupancy answer (CUDA's or a CU's) as JSON or as its lines."""
    if json_out:
        from ..model.schema import SCHEMA_VERSION
        from .common import emit_json

        emit_json({"schema_version": SCHEMA_VERSION, **d})
    else:
        print("\n".join(to_lines(d)))


def result(res, lim, where: str) -> dict:
    """The answer's keys: those of the CUDA answer that mean the same on a CU, with waves,
    VGPRs, SGPRs and LDS in place of warps, registers and shared memory."""
    notes = []
    if not res.sgprs:
        notes.append(f"SGPRs not counted (--sgprs): {lim.sgprs_per_simd} per SIMD in "
                     f"granules of {lim.sgpr_granule} bind only past 96 per wave")
    return {"op": "occupancy", "gfx_target": res.gfx, "target_from": where,
            "chips": lim.chips, "wave_size": lim.wave_size, "block": res.block,
            "vgprs_per_workitem": res.vgprs, "vgprs_allocated": res.vgprs_allocated,
            "sgprs_per_wave": res.sgprs or None, "lds_per_block_bytes": res.lds,
            "lds_per_cu_bytes": res.lds_bytes, "waves_per_block": res.waves_per_block,
            "block_limits": res.limits(), "active_blocks_per_cu": res.active_blocks,
            "active_waves_per_cu": res.active_waves, "max_waves_per_cu": res.max_waves,
            "theoretical_occupancy": res.occupancy, "binding": list(res.binding),
            "notes": notes, "provenance": "derived"}


_WHY = {"waves": "wave slots", "vgprs": "VGPRs", "sgprs": "SGPRs", "lds": "LDS"}


def limit_row(d: dict, why: dict, key: str, what: str) -> str:
    """One 'allowed by' row of an occupancy answer (CUDA's or a CU's), marked if it binds."""
    v = d["block_limits"][key]
    mark = "  <- binds" if key in d["binding"] else ""
    return f"  {why[key]:<18} {'no limit' if v is None else v:>8}   {what}{mark}"


def lines(d: dict) -> list[str]:
    """The answer as text."""
    def row(key: str, what: str) -> str:
        return limit_row(d, _WHY, key, what)

    nb, w = d["active_blocks_per_cu"], d["waves_per_block"]
    sg = d["sgprs_per_wave"]
    out = [f"occupancy  workgroup {d['block']} ({w} wave{'s' if w != 1 else ''} of "
           f"{d['wave_size']}), {d['vgprs_per_workitem']} VGPRs/work-item, "
           f"{d['lds_per_block_bytes']} B LDS/workgroup  on {d['gfx_target']} "
           f"({d['target_from']}; {d['chips']})",
           "  workgroups per CU allowed by",
           row("waves", f"{d['max_waves_per_cu']} waves per CU (4 SIMDs x 8) / {w}"),
           row("vgprs", _vgpr_words(d['vgprs_allocated'], w)),
           row("sgprs", f"{sg} SGPRs per wave (granule 16) of 800 per SIMD" if sg else
                        "not given (--sgprs)"),
           row("lds", f"{d['lds_per_cu_bytes']} B per CU / {d['lds_per_block_bytes']} B "
                      f"per workgroup")]
    return out + resident(d, _WHY, (nb, "workgroup"),
                          f"{d['active_waves_per_cu']} of {d['max_waves_per_cu']} waves")


def _vgpr_words(vgprs: int, waves: int) -> str:
    """The VGPR limit with its numbers, so that a reader can redo it: '128 VGPRs per wave
    (granule 8): 512 // 128 = 4 waves per SIMD x 4 SIMDs / 4' (it said '512 // that waves
    per SIMD', which a first reader could not follow; s37 A)."""
    if not vgprs:
        return "0 VGPRs per wave: no VGPR limit"
    fit = 512 // vgprs
    held = (f"{fit} wave{'s' if fit != 1 else ''} per SIMD" if fit <= 8
            else f"{fit}, at most 8 waves per SIMD")
    return f"{vgprs} VGPRs per wave (granule 8): 512 // {vgprs} = {held} x 4 SIMDs / {waves}"


def resident(d: dict, why: dict, blocks: tuple[int, str], slots: str) -> list[str]:
    """The closing lines of an occupancy answer (CUDA's or a CU's): the resident `blocks`
    (how many, of what: block, workgroup) and the warp or wave `slots` they fill ('32 of
    64 warps'), the occupancy that makes (in its one style, occupancy_pct), what binds it,
    the levers and the notes."""
    from ..model.occupancy_words import occupancy_pct

    nb, unit = blocks
    return [f"  resident: {nb} {unit}{'s' if nb != 1 else ''} = {slots}: "
            f"theoretical occupancy {occupancy_pct(100 * d['theoretical_occupancy'])} "
            f"(bound by {', '.join(why[b] for b in d['binding'])})",
            *(f"  lever: {v}" for v in d["levers"]), *(f"  note: {n}" for n in d["notes"])]

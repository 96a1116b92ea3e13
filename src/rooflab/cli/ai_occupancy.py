"""`rooflab ai occupancy`: the CUDA occupancy calculator (model/occupancy.py) on a GPU
named by --on or a compute capability named by --cc."""

from __future__ import annotations

import math
import os
import re

import typer

from ..errors import InputError
from .ai_args import JSON, OnAi, _n


def register(ai: typer.Typer) -> None:
    """Add `rooflab ai occupancy`."""

    @ai.command("occupancy")
    def occupancy(block: str = typer.Option(..., "--block", help="threads per block "
                                            "(blockDim.x * y * z; on AMD, work-items per "
                                            "workgroup)"),
                  regs: str = typer.Option(..., "--regs", help="registers per thread "
                                           "(ptxas -v, or ncu's launch__registers_per_"
                                           "thread); on AMD, VGPRs per work-item, "
                                           "architected + AccVGPR (rocprof's Arch_VGPR + "
                                           "Accum_VGPR)"),
                  smem: str = typer.Option("0", "--smem", help="shared memory (AMD: LDS) "
                                           "per block, static + dynamic: bytes, or 48K / "
                                           "48KiB (K = 1024 B, as CUDA counts it)"),
                  on: OnAi = None,
                  cc: str | None = typer.Option(None, "--cc", help="compute capability "
                                                "instead of --on, e.g. 8.9; or an AMD LLVM "
                                                "target, e.g. gfx942"),
                  carveout: str | None = typer.Option(
                      None, "--carveout", help="the SM's configured shared memory: bytes "
                      "(ncu's launch__shared_mem_config_size, e.g. 64K) or a percent of the "
                      "SM's (cudaFuncSetAttribute's PreferredSharedMemoryCarveout, e.g. 50%); "
                      "rounded up to a size the SM supports; default: all of it (NVIDIA "
                      "only)"),
                  sgprs: str | None = typer.Option(
                      None, "--sgprs", help="AMD only: SGPRs per wave (rocprof's SGPR); "
                      "they limit residency only past 96 on CDNA; default: not counted"),
                  json_out: bool = JSON) -> None:
        """Theoretical occupancy: resident blocks per SM (limited by warps, registers,
        shared memory and the SM's block cap) and active warps / max warps; on AMD CDNA,
        workgroups per CU and waves.

        Why it matters to the roofline: a warp waiting on memory (hundreds of cycles) or
        on a dependent instruction leaves its scheduler idle unless another resident warp
        is ready, so a kernel needs enough warps in flight to reach either roof (seed 000
        §5.2 "提高占用率 ... 让更多 warp 并行执行掩盖延迟"). A kernel far below its roof
        with low occupancy may be latency-bound: the answer names the limit that binds
        and what admits one more block (fewer registers, less shared memory, another
        block size). More is not always faster: a tiled GEMM trades occupancy for reuse
        (registers and shared memory raise its AI), and fusing too much can cost both
        (seed 000 §6.3).

            rooflab ai occupancy --block 256 --regs 64 --on a100
            rooflab ai occupancy --block 256 --regs 64 --smem 48K --on a100
            rooflab ai occupancy --block 128 --regs 86 --smem 4K --cc 8.9 \\
                --carveout 64K

        The arithmetic of CUDA's occupancy calculator (cuda_occupancy.h), which Nsight
        Compute reports as launch__occupancy_limit_* and
        sm__maximum_warps_per_active_cycle_pct. Registers are allocated per warp in units
        of 256; 1 KiB of shared memory per block is reserved for the system from compute
        capability 8.0 on.

        On an AMD CDNA GPU (--on MI300X, --cc gfx942) it is HIP's calculator
        (hipOccupancyMaxActiveBlocksPerMultiprocessor): wave64, a CU's 4 SIMDs x 8 wave
        slots, 512 VGPRs per SIMD lane in granules of 8, the CU's LDS (64 KiB; 160 KiB
        on MI350).

            rooflab ai occupancy --block 256 --regs 64 --smem 48K --on MI300X"""
        if (amd := _amd_target(on, cc)) is not None:
            from .ai_occupancy_cdna import run_cdna

            if carveout is not None:
                raise InputError("--carveout is an NVIDIA SM's shared-memory setting; an AMD "
                                 "CU's LDS has no carveout: leave it out")
            run_cdna(amd, block, regs, _bytes(smem, "--smem"), sgprs, json_out)
            return
        if sgprs is not None:
            raise InputError("--sgprs counts an AMD wave's scalar registers; NVIDIA GPUs "
                             "have none: leave it out")
        from ..hardware.smem import SM_SOURCE, sm_limits
        from ..model.occupancy import occupancy as calc

        cap, where = _capability(on, cc)
        lim = sm_limits(cap)
        if lim is None:
            from ..hardware.smem import SM_BY_CC

            raise InputError(f"compute capability {cap} ({where}) has no row in rooflab's "
                             f"table (hardware/smem.py); tabled: {', '.join(SM_BY_CC)}: "
                             f"give --cc with the nearest of them only if its limits match")
        from ..model.occupancy import levers

        res = calc(_n(block, "--block", 1), _n(regs, "--regs", 0), _bytes(smem, "--smem"),
                   lim, None if carveout is None else _carveout(carveout, lim))
        d = result(res, where)
        d["levers"] = list(levers(res, lim))
        d["source"] = SM_SOURCE
        from .ai_occupancy_cdna import answer

        answer(d, json_out, lines)


def _capability(on: str | None, cc: str | None) -> tuple[str, str]:
    """The compute capability and where it came from: --cc, else --on's catalog entry or
    profile (ROOFLAB_ON is --on's default: --cc given beside it wins)."""
    if cc is not None:
        text = cc.strip()
        if not re.fullmatch(r"\d{1,2}\.\d", text):
            raise InputError(f"--cc must be a compute capability such as 8.0 or 8.9 "
                             f"(nvidia-smi --query-gpu=compute_cap), or an AMD LLVM target "
                             f"such as gfx942; got '{cc}'")
        if text in _ROCM_CC:
            # a ROCm torch reports gfx942 as major.minor 9.4: not a CUDA capability
            raise InputError(f"--cc {text} is what a ROCm PyTorch reports for {_ROCM_CC[text]}"
                             f" ({'MI300' if text == '9.4' else 'MI350'}), a gfx version and "
                             f"not a CUDA compute capability: give --cc {_ROCM_CC[text]} or "
                             f"--on with the GPU's name")
        if on is not None and on != os.environ.get("ROOFLAB_ON"):
            raise InputError(f"--on {on} and --cc {cc} both name the GPU: give one")
        return text, f"--cc {text}"
    if on is None:
        raise InputError("occupancy needs the GPU's limits: add --on GPU (e.g. --on a100) "
                         "or --cc X.Y (e.g. --cc 8.9)")
    from .ai_tile import device_facts

    facts = device_facts(on)
    if facts.cc is None and facts.not_cuda:
        # --cc would be a made-up number here: the calculator is CUDA's (warps, register
        # allocation units, carveouts of NVIDIA SMs)
        raise InputError(f"--on {on} is not an NVIDIA GPU: `ai occupancy` is CUDA's occupancy "
                         f"calculator (the warps, registers and shared memory of NVIDIA SMs); "
                         f"rooflab has none for this chip")
    if facts.cc is None:
        raise InputError(f"{facts.why_no_cc}: give --cc X.Y instead of --on {on}")
    return str(facts.cc), f"--on {on}"


# torch.cuda.get_device_capability() on ROCm: gfx942 -> (9, 4), gfx950 -> (9, 5); 9.0
# (gfx90a's) is also Hopper's, so it is not caught here
_ROCM_CC = {"9.4": "gfx942", "9.5": "gfx950"}


def _amd_target(on: str | None, cc: str | None):
    """(CuLimits, where) when --cc names a gfx target or --on an AMD GPU (a catalog entry,
    or a ROCm profile's gcn_arch); None for everything else, which the CUDA path takes."""
    from ..hardware.cdna_limits import CU_BY_GFX, GFX_BY_DEVICE, cu_limits

    tabled = ", ".join(CU_BY_GFX)
    if cc is not None:
        if not cc.strip().lower().startswith("gfx"):
            return None
        if on is not None and on != os.environ.get("ROOFLAB_ON"):
            raise InputError(f"--on {on} and --cc {cc} both name the GPU: give one")
        lim = cu_limits(cc)
        if lim is None:
            raise InputError(f"--cc {cc}: rooflab tables the CU limits of {tabled} only "
                             f"(hardware/cdna_limits.py)")
        return lim, f"--cc {lim.gfx}"
    if on is None:
        return None
    from .ai_tile import device_facts

    facts = device_facts(on)
    if facts.cc is not None or facts.unit != "CU":
        return None
    gfx, what = _amd_gfx(on, GFX_BY_DEVICE)
    lim = cu_limits(gfx)
    if lim is None:
        raise InputError(f"--on {on}: {what}; rooflab tables the CU limits of {tabled} only: "
                         f"give --cc with one of them only if the GPU is that target")
    return lim, f"--on {on}, {lim.gfx}"


def _amd_gfx(on: str, by_device: dict[str, str]) -> tuple[str | None, str]:
    """The gfx target of --on (an AMD catalog entry or a ROCm profile) and what it is."""
    from ..hardware.resolve import looks_like_file, split_threads

    spec = on.strip()
    at = split_threads(spec)
    path = at[0] if at is not None else spec
    if at is not None or looks_like_file(spec) or os.path.exists(spec):
        from ..hardware.profile import profile_in_file

        profile = profile_in_file(path) if path.lower().endswith(".json") else None
        gfx = profile.host.get("gcn_arch") if profile is not None else None
        return gfx, f"the profile records the target {gfx or 'none (host.gcn_arch)'}"
    from ..hardware.catalog import lookup

    name = lookup(spec).name
    gfx = by_device.get(name)
    return gfx, f"{name} is {gfx or 'an AMD GPU of no tabled target'}"


def _bytes(text: str, name: str) -> int:
    """Shared memory as CUDA counts it: 4096, 48K, 48KB, 48KiB (K = 1024 bytes)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(k|kb|kib)?\s*", str(text).replace("_", ""),
                     re.IGNORECASE)
    if m is None:
        raise InputError(f"{name} must be bytes (4096) or KiB (48K, 48KiB; K = 1024 B, as "
                         f"the CUDA guide counts shared memory); got '{text}'")
    value = float(m.group(1)) * (1024 if m.group(2) else 1)
    if not math.isfinite(value):
        # 309+ digits are inf, and int(inf) was a traceback (review s23 r4 F8)
        raise InputError(f"{name} must be bytes (4096) or KiB (48K), a number of a few "
                         f"digits (no SM has more than 228 KiB); got {len(m.group(1))} "
                         f"digits")
    if value != int(value):
        raise InputError(f"{name} must be a whole number of bytes; got '{text}' = {value} B")
    return int(value)


def _carveout(text: str, lim) -> int:
    """--carveout as bytes, or a percent of the SM's shared memory as CUDA's carveout
    attribute takes it (cuda_occupancy.h: percent x per-SM bytes / 100, then rounded up)."""
    t = str(text).strip()
    if not t.endswith("%"):
        return _bytes(t, "--carveout")
    try:
        pct = float(t[:-1])
    except ValueError:
        pct = -1.0
    if not 0 <= pct <= 100:
        raise InputError(f"--carveout as a percent must be 0%..100% of the SM's shared "
                         f"memory; got '{text}'")
    return int(pct * lim.smem.per_sm_bytes / 100)


def result(res, where: str) -> dict:
    """The answer's keys (docs/json.md, `ai occupancy`)."""
    return {"op": "occupancy", "compute_capability": res.cc, "capability_from": where,
            "block": res.block, "regs_per_thread": res.regs_per_thread,
            "smem_per_block_bytes": res.smem_per_block, "warps_per_block": res.warps_per_block,
            "regs_per_warp_allocated": res.regs_per_warp,
            "smem_per_block_allocated_bytes": res.smem_allocated_per_block,
            "smem_config_bytes": res.smem_config_bytes,
            "block_limits": res.limits(), "active_blocks_per_sm": res.active_blocks,
            "active_warps_per_sm": res.active_warps, "max_warps_per_sm": res.max_warps,
            "theoretical_occupancy": res.occupancy, "binding": list(res.binding),
            "notes": [res.carveout_note] if res.carveout_note else [],
            "provenance": "derived"}


_WHY = {"warps": "warps per SM", "registers": "registers", "shared_memory": "shared memory",
        "blocks": "the SM's block cap"}


def lines(d: dict) -> list[str]:
    """The answer as text."""
    from .ai_occupancy_cdna import limit_row, resident

    def row(key: str, what: str) -> str:
        return limit_row(d, _WHY, key, what)

    rounding = ("rounded to 256 B; no reserved bytes on 7.x"
                if d["compute_capability"].startswith("7.") else
                "+ the reserved 1 KiB, rounded to 128 B")
    nb = d["active_blocks_per_sm"]
    out = [f"occupancy  block {d['block']} ({d['warps_per_block']} warps), {d['regs_per_thread']}"
           f" regs/thread, {d['smem_per_block_bytes']} B shared/block  on compute capability "
           f"{d['compute_capability']} ({d['capability_from']})",
           "  blocks per SM allowed by",
           row("warps", f"{d['max_warps_per_sm']} warps per SM / {d['warps_per_block']}"),
           row("registers", f"{d['regs_per_warp_allocated']} regs per warp (x 32, in units "
                            f"of 256)"),
           row("shared_memory", f"{d['smem_config_bytes']} B / "
                                f"{d['smem_per_block_allocated_bytes']} B per block "
                                f"({rounding})"),
           row("blocks", "resident blocks per SM")]
    return out + resident(d, _WHY, (nb, "block"),
                          f"{d['active_warps_per_sm']} of {d['max_warps_per_sm']} warps")


# The unit a strided access moves, by the roof's machine (review s19 r1 F10): a GPU's DRAM
# and L2 move 32-byte sectors (NVIDIA since Maxwell, AMD CDNA); a CPU's caches move 64-byte
# lines (x86, Arm server cores), Apple's M-series 128-byte lines.
GPU_SECTOR_BYTES, CPU_LINE_BYTES, APPLE_LINE_BYTES = 32, 64, 128


def transfer_unit(roof) -> tuple[int, str]:
    """(bytes, word) a strided access moves on the roof's machine: (32, "sector") on a GPU
    or accelerator or without a roof, (64, "line") on a CPU (model.machine.is_cpu: a roof
    of unknown kind too), (128, "line") on an Apple M-series."""
    if roof is None:
        return GPU_SECTOR_BYTES, "sector"
    from ..model.machine import is_cpu

    if not is_cpu(roof):
        return GPU_SECTOR_BYTES, "sector"
    apple = "apple" in f"{roof.name} {roof.source}".lower()
    return (APPLE_LINE_BYTES if apple else CPU_LINE_BYTES), "line"


def strided_op(op, stride: int, roof=None):
    """`ai elementwise --stride S`: the op with its bytes counted in the whole sectors (GPU,
    32 B) or cache lines (CPU, 64 B) `roof` moves (model/coalescing.py; no roof: a GPU's
    sectors, said), and the answer's `coalescing` key (docs/json.md)."""
    from dataclasses import replace

    from ..model.coalescing import SECTOR_BYTES, strided
    from ..units import dtype_bytes, fmt_share, fmt_times

    unit, word = transfer_unit(roof)
    shape = op.shape
    e = dtype_bytes(shape["dtype"])
    # coalescing.strided counts 32-byte sectors; its count is scale-free (ceil of bytes /
    # unit throughout), so units of `unit` bytes are sectors of elements unit/32 times
    # smaller: strided(n, S, E·32/unit) counts the lines
    scale = SECTOR_BYTES / unit
    acc = strided(shape["n"], stride, e * scale)
    dense = strided(shape["n"], 1, e * scale)   # the same array read coalesced, whole units
    fetched = acc.sectors * unit
    efficiency = shape["n"] * e / fetched
    read = shape["inputs"] * fetched
    write = shape["outputs"] * fetched
    from ..model.machine import ASSUMED_CPU, kind_unknown

    where = ("; a GPU's sectors assumed: --on a CPU counts its 64-byte lines" if roof is None
             else f"; {ASSUMED_CPU}" if kind_unknown(roof) else "")
    model = (f"strided: every array at stride {stride} x {e:g} B from a {unit}-byte aligned "
             f"base, whole {unit}-byte {word}s moved ({fmt_share(efficiency)} of them used; "
             f"no reuse of the skipped bytes from {'L2' if word == 'sector' else 'cache'})"
             f"{where}")
    new = replace(op, bytes=float(read + write), byte_model=model,
                  bytes_split={"read": float(read), "write": float(write)},
                  shape={**shape, "stride": stride})
    info = {"stride": stride, "element_bytes": e, "sector_bytes": unit,
            "sectors_per_array": acc.sectors, "useful_bytes": op.bytes,
            "fetched_bytes": new.bytes, "efficiency": efficiency,
            "coalesced_ai": op.ai, "ai": new.ai, "provenance": "derived"}
    fix = ("make neighbouring threads read neighbouring elements (a transposed or tiled "
           "layout)" if word == "sector" else "make the inner loop walk contiguous "
           "elements (a transposed or blocked layout)")
    if acc.sectors > dense.sectors:
        note = (f"stride {stride}: {fmt_share(efficiency)} of each {unit}-byte {word} is "
                f"used, {fmt_times(acc.sectors / dense.sectors)} the {word}s of stride 1; AI "
                f"{new.ai:.4g} FLOP/B (coalesced {op.ai:.4g}); {fix} to restore it")
    elif efficiency < 0.99:
        # n·E under a few units: the rounding up to whole units, not the stride, is the
        # loss, and no layout recovers it (stride 1 moves the same units)
        note = (f"stride {stride}: the same {acc.sectors} {word}(s) per array as stride 1 "
                f"at n = {shape['n']:g}: {fmt_share(efficiency)} used because "
                f"{shape['n']:g} x {e:g} B fills part of whole {unit}-byte {word}s, not "
                f"because of the stride (AI {new.ai:.4g} FLOP/B)")
    else:
        note = f"stride {stride}: coalesced, whole {word}s used (AI {new.ai:.4g} FLOP/B)"

    def extra(d: dict) -> dict:
        return {"coalescing": info, "notes": [*d.get("notes", []), note]}

    return new, extra

"""`rooflab ai matmul --tile` on a device: tile and wave quantization and the shared-memory
fit (model/tile_quantization.py), with the device facts --on names (SM count, compute
capability) and the answer's `tile_quantization` key and text lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..workloads.ops_common import MAX_SIZE, too_large

# why the quantized ceiling is lower, in the answer's words (tile part, wave part)
WHY_TILES = "edge tiles compute padding (tile quantization)"
WHY_WAVES = "the last partial wave leaves SMs idle (wave quantization)"


@dataclass(frozen=True)
class DeviceFacts:
    """What --on tells about the chip: SMs (None: why_no_sms) and compute capability
    (None: why_no_cc)."""

    sms: int | None = None
    sms_source: str | None = None
    unit: str = "SM"                 # "CU" on an AMD GPU
    cc: str | None = None
    why_no_sms: str | None = None
    why_no_cc: str | None = None
    not_cuda: bool = False           # a CPU, an AMD/Apple/Intel/Google chip: no CUDA CC at all


def tile_extra(op, ideal, tile3, stages: str | None, tiles_per_sm: str | None,
                on: str | None):
    """The --tile keys: the tile, the compulsory count beside the tiled one, and
    `tile_quantization` (below), made once the roof's answer is known."""
    n_stages = count_option(stages, "--stages")
    per_sm = count_option(tiles_per_sm, "--tiles-per-sm")
    if per_sm is not None and on is None:
        raise InputError("--tiles-per-sm sets how many tiles one SM runs at once, for the "
                         "waves over a GPU's SMs: add --on GPU (e.g. --on a100)")

    def extra(d: dict) -> dict:
        facts = device_facts(on) if on else None
        return {"tile": list(op.shape["tile"]), "compulsory_bytes": ideal.bytes,
                "compulsory_ai": ideal.ai,
                "tile_quantization": tile_quantization(d, tile3, n_stages, per_sm, facts)}

    return extra


def count_option(text: str | None, name: str) -> int | None:
    """--stages / --tiles-per-sm as typed: a positive whole number (None: not given)."""
    if text is None:
        return None
    t = str(text).strip().replace("_", "")
    if not t.isdigit() or int(t) < 1:
        raise InputError(f"{name} must be a positive whole number such as 1, 2 or 4; "
                         f"got '{text}'")
    if int(t) > MAX_SIZE:
        raise InputError(too_large(name, int(t)))
    return int(t)


def device_facts(on: str) -> DeviceFacts:
    """The SM count and compute capability of --on: a catalog entry's `sms` and
    `compute_capability`, or a probed profile's host (torch's multi_processor_count and
    major.minor). Anything else says why it has none."""
    from ..hardware.resolve import looks_like_file, split_threads

    spec = on.strip()
    if spec.lower().endswith(".ncu-rep"):
        why = f"--on {spec}: an .ncu-rep roof carries no SM count or compute capability here"
        return DeviceFacts(why_no_sms=why, why_no_cc=why)
    at = split_threads(spec)
    path = at[0] if at is not None else spec
    if at is not None or looks_like_file(spec) or Path(spec).exists():
        return _profile_facts(path)
    from ..hardware.catalog import lookup

    dev = lookup(spec)
    if dev.kind == "cpu":
        why = f"{dev.name} is a CPU: SMs, waves and shared memory are a GPU's"
        return DeviceFacts(why_no_sms=why, why_no_cc=why, not_cuda=True)
    amd = dev.vendor == "AMD"
    no_sms = (None if dev.sms else f"the catalog gives no {'CU' if amd else 'SM'} count for "
              f"{dev.name} (`rooflab specs show \"{dev.name}\"`); a probed profile has it")
    # AMD's LDS is not tabled (hardware/smem.py); its size is said so a user can check
    # (ROCm hardware specifications: 64 KiB per CU on CDNA2/CDNA3; CDNA4 160 KiB)
    lds = (": its LDS is 64 KiB per CU on CDNA2/CDNA3 (MI200, MI300), 160 KiB on CDNA4 "
           "(MI350), so a tile staging more than that cannot run" if amd else "")
    no_cc = None if dev.compute_capability else (
        f"{dev.name} has no CUDA compute capability: rooflab tables shared memory for "
        f"NVIDIA GPUs only{lds}")
    return DeviceFacts(sms=dev.sms or None, sms_source="catalog" if dev.sms else None,
                       unit="CU" if amd else "SM",
                       cc=dev.compute_capability, why_no_sms=no_sms, why_no_cc=no_cc,
                       not_cuda=dev.vendor != "NVIDIA")


def _profile_facts(path: str) -> DeviceFacts:
    """The SMs and compute capability a probed profile's host records, the profile read by
    hardware/profile.py's loader (a broken one: its error, naming the file and field)."""
    from ..hardware.profile import profile_in_file

    profile = profile_in_file(path) if path.lower().endswith(".json") else None
    if profile is None:
        why = f"--on {path} is a roof file with no host: it names no SMs or compute capability"
        return DeviceFacts(why_no_sms=why, why_no_cc=why)
    host = profile.host
    backend = host.get("backend")
    if backend not in ("cuda", "rocm"):
        why = (f"the profile {path} is a CPU's ({host.get('name', 'host')}): SMs are a GPU's"
               if backend else f"the profile {path} records no GPU backend (host.backend "
               f"'cuda' or 'rocm'): `rooflab probe` on the GPU writes one")
        return DeviceFacts(why_no_sms=why, why_no_cc=why, not_cuda=bool(backend))
    # the loader has checked both fields' types (hardware/profile.py _check_host)
    sms, cc = host.get("multiprocessors"), host.get("compute_capability")
    return DeviceFacts(
        sms=sms, sms_source="profile (torch multi_processor_count)" if sms else None,
        unit="CU" if backend == "rocm" else "SM", cc=cc,
        why_no_sms=None if sms else f"the profile {path} records no multiprocessor count",
        why_no_cc=None if cc else (
            "an AMD GPU: rooflab tables shared memory (LDS) for NVIDIA GPUs only"
            if backend == "rocm" else f"the profile {path} records no compute capability"),
        not_cuda=backend == "rocm")


def element_bytes(shape: dict) -> tuple[float, float]:
    """Bytes per element of A and of B as staged: B at its stored dtype under --weights
    (group scales included, as the op counts them)."""
    from ..units import dtype_bytes, stored_weight_bytes

    a = dtype_bytes(shape["dtype"])
    w = shape.get("weight_dtype")
    b = stored_weight_bytes(w, int(shape.get("group_size", 128))) if w else a
    return float(a), float(b)


def tile_quantization(d: dict, tile3: tuple[int, int, int | None], stages: int | None,
                      tiles_per_sm: int | None, facts: DeviceFacts | None) -> dict:
    """The answer's `tile_quantization` (docs/json.md): d is the answer so far (its shape,
    and with --on its attainable FLOP/s); facts None: no --on."""
    from ..hardware.smem import SOURCE, default_stages, smem_limits
    from ..model import tile_quantization as tq

    shape = d["shape"]
    bm, bn, bk = tile3
    count = tq.tile_count(shape["m"], shape["n"], bm, bn, shape.get("batch", 1))
    cc = facts.cc if facts else None
    n_stages = stages if stages is not None else default_stages(cc)
    a_b, b_b = element_bytes(shape)
    bk_used = bk if bk is not None else tq.DEFAULT_BK
    out = {"tile": [bm, bn, bk_used], "bk_source": "given" if bk is not None else "default",
           "tiles": count.tiles, "tiles_m": count.tiles_m, "tiles_n": count.tiles_n,
           "batch": count.batch, "useful_fraction": count.useful_fraction,
           "stages": n_stages, "stages_source": "given" if stages is not None else "default",
           "a_element_bytes": a_b, "b_element_bytes": b_b,
           "smem_bytes_per_tile": tq.smem_bytes(bm, bn, bk_used, n_stages, a_b, b_b),
           "provenance": "derived", "waves": None, "waves_skipped": None,
           "on_chip": None, "on_chip_skipped": None, "notes": []}
    if facts is None:
        out["waves_skipped"] = "add --on GPU for its SM count"
        out["on_chip_skipped"] = "add --on GPU for its shared memory"
        return out
    waves = None
    if facts.sms:
        waves = tq.wave_count(count.tiles, facts.sms, tiles_per_sm or 1)
        out["waves"] = {"sms": facts.sms, "sms_source": facts.sms_source, "unit": facts.unit,
                        "tiles_per_sm": waves.tiles_per_sm,
                        "tiles_per_sm_source": "given" if tiles_per_sm else "default",
                        "waves": waves.waves, "full_waves": waves.full_waves,
                        "last_wave_tiles": waves.last_wave_tiles,
                        "efficiency": waves.efficiency}
    else:
        out["waves_skipped"] = facts.why_no_sms
    limits = smem_limits(cc)
    if limits is not None:
        fit = tq.smem_fit(bm, bn, bk_used, n_stages, a_b, b_b, limits)
        out["on_chip"] = {"compute_capability": cc, "per_sm_bytes": limits.per_sm_bytes,
                          "per_block_bytes": limits.per_block_bytes,
                          "reserved_per_block_bytes": limits.reserved_per_block_bytes,
                          "fits": fit.fits, "tiles_per_sm": fit.tiles_per_sm,
                          "max_stages": fit.max_stages, "provenance": "nominal",
                          "source": SOURCE}
        if not fit.fits:
            out["on_chip"]["remedy"] = tq.fit_remedy(fit)
        elif tiles_per_sm and tiles_per_sm > fit.tiles_per_sm:
            out["notes"].append(f"--tiles-per-sm {tiles_per_sm} is more than shared memory "
                                f"holds ({fit.tiles_per_sm} of these tiles per SM)")
    else:
        out["on_chip_skipped"] = facts.why_no_cc or (
            f"compute capability {cc}: no shared-memory row in rooflab's table "
            f"(hardware/smem.py, from the CUDA C++ Programming Guide)")
    rate = d.get("attainable_flop_per_s")
    if rate is not None and d.get("flop", 0) > 0:
        out.update(_quantized(d, rate, count, waves))
    return out


def _quantized(d: dict, rate: float, count, waves) -> dict:
    """The quantized ceiling and the time floor at it, beside the roof's (with --on)."""
    from ..model import tile_quantization as tq

    p = d["analysis"][0]
    peak = p["peak_flop_per_s"]
    ceiling = peak * tq.quantized_fraction(count, waves)
    # the same bytes and bandwidth as the point's work floor, only P lowered
    work = tq.quantized_floor(d["flop"], p["bytes"], peak, p["bytes_per_s"], count, waves)
    launch = d.get("launch_floor_s")
    return {"attainable_flop_per_s": rate, "compute_ceiling_flop_per_s": peak,
            "quantized_compute_flop_per_s": ceiling,
            "quantized_attainable_flop_per_s": tq.quantized_rate(rate, peak, count, waves),
            # memory only where the lowered ceiling stays above the memory roof: with no
            # loss (fraction 1) a compute-bound GEMM is still compute-bound
            "quantized_binding": "memory" if ceiling > rate else "compute",
            "quantized_why": f"{WHY_TILES}; {WHY_WAVES}" if waves else WHY_TILES,
            "quantized_work_floor_s": work,
            "quantized_time_floor_s": max(work, launch) if launch is not None else work}


# --- text -------------------------------------------------------------------------------

def _pct(x: float) -> str:
    """A share (of the tiles' area, of the waves' slots) as every share prints."""
    from ..units import fmt_share

    return fmt_share(x)


def _kib(n: float) -> str:
    return f"{n / 1024:.4g} KiB"


def tile_lines(t: dict) -> list[str]:
    """The `tiles`, `waves` and `on chip` lines of the text answer."""
    bm, bn, bk = t["tile"]
    grid = f"{t['tiles_m']} x {t['tiles_n']}"
    if t["batch"] > 1:
        grid = f"{t['batch']} x {grid}"
    if t["useful_fraction"] >= 1:
        use = "every tile is full (BM divides m, BN divides n)"
    else:
        use = (f"{_pct(t['useful_fraction'])} of their area is output (the edge tiles "
               f"compute padding)")
    lines = [f"  tiles       {t['tiles']} ({grid} of {bm}x{bn}): {use}"]
    w = t["waves"]
    if w is None:
        lines.append(f"  waves       not counted: {t['waves_skipped']}")
    else:
        unit, per = w["unit"], w["tiles_per_sm"]
        src = " (default)" if w["tiles_per_sm_source"] == "default" else ""
        n = w["waves"]
        head = f"{n:.3g} wave" + ("s" if n > 1 else "")
        last = (f", the last {w['last_wave_tiles']} tiles" if w["full_waves"] > 1
                and w["last_wave_tiles"] < w["sms"] * per else "")
        lines.append(f"  waves       {head}: {t['tiles']} tiles on {w['sms']} {unit}s x {per} "
                     f"tile{'s' if per > 1 else ''} per {unit}{src} -> {w['full_waves']} "
                     f"wave{'s' if w['full_waves'] > 1 else ''}{last}; {_pct(w['efficiency'])} "
                     f"of {unit} slots busy")
    lines.append(f"  on chip     {_staged(t)}")
    return lines + [f"  note: {n}" for n in t["notes"]]


def _staged(t: dict) -> str:
    """The shared memory a tile stages, then the fit on the device (or why not checked)."""
    bm, bn, bk = t["tile"]
    a, b = t["a_element_bytes"], t["b_element_bytes"]
    per = (f"({bm}x{bk} + {bk}x{bn}) x {a:.3g} B" if a == b
           else f"({bm}x{bk} x {a:.3g} B + {bk}x{bn} x {b:.3g} B)")
    said = ([f"BK {bk}"] if t["bk_source"] == "default" else []) + (
        [f"{t['stages']} stages"] if t["stages_source"] == "default" else [])
    dflt = f" (default {', '.join(said)})" if said else ""
    size = _kib(t["smem_bytes_per_tile"])
    staged = f"{t['stages']} stages x {per}{dflt}"
    c = t["on_chip"]
    if c is None:
        return f"{size} per tile = {staged}; fit not checked: {t['on_chip_skipped']}"
    limit = f"{_kib(c['per_block_bytes'])} per block"
    if not c["fits"]:
        return (f"does not fit: {size} > {limit} (cc {c['compute_capability']}): "
                f"{c['remedy']}; {size} = {staged}")
    n = c["tiles_per_sm"]
    return (f"fits: {size} per tile <= {limit}; {n} tile{'s' if n > 1 else ''} per SM by "
            f"shared memory ({_kib(c['per_sm_bytes'])} per SM, cc "
            f"{c['compute_capability']}); {size} = {staged}")


def quantized_line(t: dict, prec: str) -> list[str]:
    """`quantized` beside `attainable`: min(attainable, the compute ceiling x the tile
    fraction x the wave efficiency)."""
    from ..units import fmt_rate

    if "quantized_attainable_flop_per_s" not in t:
        return []
    parts = f"x {_pct(t['useful_fraction'])} (tiles)"
    if t["waves"] is not None:
        parts += f" x {_pct(t['waves']['efficiency'])} (waves)"
    ceiling = f"compute ceiling {fmt_rate(t['compute_ceiling_flop_per_s'], prec)} {parts}"
    if t["quantized_binding"] == "memory":
        return [f"  quantized   {fmt_rate(t['quantized_attainable_flop_per_s'], prec)} (as "
                f"attainable): {ceiling} = {fmt_rate(t['quantized_compute_flop_per_s'], prec)}, "
                f"above the memory roof, which still binds; derived (both quantizations cost "
                f"compute time, not DRAM bytes)"]
    why = t["quantized_why"]
    if t["quantized_compute_flop_per_s"] >= t["compute_ceiling_flop_per_s"]:
        why = ("no quantization loss (every tile full, every wave full)" if t["waves"]
               else "no tile quantization loss (every tile full; waves not counted)")
    return [f"  quantized   {fmt_rate(t['quantized_attainable_flop_per_s'], prec)} = {ceiling}, "
            f"derived: {why}"]

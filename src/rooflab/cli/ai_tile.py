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
        return DeviceFacts(why_no_sms=why, why_no_cc=why)
    no_sms = (None if dev.sms else f"the catalog gives no SM count for {dev.name} (`rooflab "
              f"specs {dev.name}`); a probed profile has it")
    no_cc = None if dev.compute_capability else (
        f"{dev.name} has no CUDA compute capability: rooflab tables shared memory for "
        f"NVIDIA GPUs only")
    return DeviceFacts(sms=dev.sms or None, sms_source="catalog" if dev.sms else None,
                       cc=dev.compute_capability, why_no_sms=no_sms, why_no_cc=no_cc)


def _profile_facts(path: str) -> DeviceFacts:
    from ..files import load_json

    data = load_json(path) if path.lower().endswith(".json") else None
    host = data.get("host") if isinstance(data, dict) else None
    if not isinstance(host, dict):
        why = f"--on {path} is a roof file with no host: it names no SMs or compute capability"
        return DeviceFacts(why_no_sms=why, why_no_cc=why)
    backend = host.get("backend")
    if backend not in ("cuda", "rocm"):
        why = f"the profile {path} is a CPU's ({host.get('name', 'host')}): SMs are a GPU's"
        return DeviceFacts(why_no_sms=why, why_no_cc=why)
    sms, cc = host.get("multiprocessors"), host.get("compute_capability")
    ok_sms = isinstance(sms, int) and not isinstance(sms, bool) and sms > 0
    return DeviceFacts(
        sms=sms if ok_sms else None,
        sms_source="profile (torch multi_processor_count)" if ok_sms else None,
        unit="CU" if backend == "rocm" else "SM",
        cc=cc if isinstance(cc, str) else None,
        why_no_sms=None if ok_sms else f"the profile {path} records no multiprocessor count",
        why_no_cc=None if isinstance(cc, str) else (
            "an AMD GPU: rooflab tables shared memory (LDS) for NVIDIA GPUs only"
            if backend == "rocm" else f"the profile {path} records no compute capability"))


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
        peak = d["analysis"][0]["peak_flop_per_s"]
        quantized = tq.quantized_rate(rate, peak, count, waves)
        out.update({"attainable_flop_per_s": rate, "compute_ceiling_flop_per_s": peak,
                    "quantized_compute_flop_per_s": peak * tq.quantized_fraction(count, waves),
                    "quantized_attainable_flop_per_s": quantized,
                    "quantized_binding": ("memory" if quantized >= rate else "compute"),
                    "quantized_why": f"{WHY_TILES}; {WHY_WAVES}" if waves else WHY_TILES})
    return out


# --- text -------------------------------------------------------------------------------

def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


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
    return [f"  quantized   {fmt_rate(t['quantized_attainable_flop_per_s'], prec)} = {ceiling}, "
            f"derived: {t['quantized_why']}"]

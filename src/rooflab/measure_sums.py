"""The counted meta of a decorated function's kernel: what each call's counter put in its
meta (bench/torch_count.TorchCount.meta, measure_counts._merge_count, measure_runs'
_single_run), taken over the calls `aggregate` keeps, as its FLOP and bytes are. A copy of
the first call's would describe one shape of a loop that ran two (review s24 r3 F7:
flop_by_unit and the unit of a 128x128 call kept after 512x512 calls were summed in)."""

from __future__ import annotations

from typing import Any

from .model.kernel import Kernel
from .model.provenance import DERIVED

# The per-call keys summed_count_meta rebuilds from every kept call (aggregate drops the
# first call's copies): a key no kept call has is left out, not left stale.
PER_CALL = ("ops", "flop_by_unit", "unit_note", "flop_unit", "fused_bytes",
            "uncounted_ops", "tf32_note", "counts_reused")


def summed_count_meta(runs: list[Kernel]) -> tuple[dict[str, Any], str | None]:
    """(the PER_CALL meta of `runs` together, the Kernel's unit). Summed like FLOP and
    bytes: the per-op rows, FLOP by unit, the one-pass bytes (only when every call has
    them: a part would read as the whole); the unit and its note are those of the summed
    FLOP by unit (the larger share of the total, shares adding up to 100 %); the ops with
    no FLOP formula and the TF32 note of any call; how many calls reused earlier counts."""
    meta: dict[str, Any] = {}
    if any("ops" in k.meta for k in runs):
        ops: dict[str, dict[str, float]] = {}
        for k in runs:
            for op, row in k.meta.get("ops", {}).items():
                acc = ops.setdefault(op, {key: 0 for key in row})
                for key, v in row.items():
                    acc[key] = acc.get(key, 0) + v
        meta["ops"] = ops
    if runs and all("fused_bytes" in k.meta for k in runs):
        meta["fused_bytes"] = sum(k.meta["fused_bytes"] for k in runs)
    by_unit: dict[str, float] = {}
    for k in runs:
        for key, v in k.meta.get("flop_by_unit", {}).items():
            by_unit[key] = by_unit.get(key, 0.0) + v
    unit = runs[0].unit if runs else None
    if by_unit:
        # torch code only (a run with flop_by_unit was counted): imported lazily
        from .bench.torch_count import unit_note, unit_of

        meta["flop_by_unit"] = by_unit
        note = unit_note(by_unit)
        if note:
            meta["unit_note"] = note
        # given FLOP (flop=) carry no unit (measure_counts._merge_count): only counted ones
        if all(k.provenance.get("flop") == DERIVED for k in runs):
            unit = unit_of(by_unit)
            if unit is not None:
                meta["flop_unit"] = unit
    uncounted = [op for k in runs for op in k.meta.get("uncounted_ops", ())]
    if uncounted:
        meta["uncounted_ops"] = list(dict.fromkeys(uncounted))
    tf32 = next((k.meta["tf32_note"] for k in runs if "tf32_note" in k.meta), None)
    if tf32:
        meta["tf32_note"] = tf32
    reused = sum(1 for k in runs if "counts_reused" in k.meta)
    if reused:
        n = len(runs)
        which = (("the call summed was" if n == 1 else f"all {n} calls summed were")
                 if reused == n else f"{reused} of the {n} calls summed were")
        meta["counts_reused"] = (f"{which} timed without the counter, with the counts of "
                                 f"an earlier call with the same argument shapes")
    return meta, unit

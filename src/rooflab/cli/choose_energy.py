"""`rooflab choose`'s energy columns: TDP over the time a row ranks by, for every GPU the
row stands for.

model.choose prices one device at its time with launches (Choice.energy_j, flop_per_joule).
On an `rooflab llm --tp N` document that left out two things the ranking holds: the TP
link time (ranked_s: the device is powered while it waits on the all-reduces) and the
other GPUs (a row stands for tp x pp of them). The CLI's rows, table, JSON and CSV all
read these figures, so the energy and the rank speak of the same step on the same GPUs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def _split(split: Mapping | None) -> tuple[int, int]:
    """(tp, pp) of the llm document a row stands for; (1, 1) for other inputs."""
    if not split:
        return 1, 1
    return int(split.get("tp") or 1), int(split.get("pp") or 1)


def step_flop(kernels: Sequence, split: Mapping | None = None) -> float:
    """The FLOP the row's GPUs execute in one step: the kernels' FLOP (one TP rank's
    shard, every stage in turn) x tp, as each of the tp ranks runs its own shard."""
    tp, _ = _split(split)
    return sum(k.total_flop for k in kernels) * tp


def step_energy_j(choice, split: Mapping | None = None, work_floor: bool = False
                  ) -> float | None:
    """Energy at TDP of one step on the row's tp x pp GPUs: gpus x TDP x the time it ranks
    by (ranked_s: with launches + the TP link; work_floor: floor_s, the work floor + the
    link, which CUDA graphs do not remove). None without a TDP. An estimate, not a bound:
    the time is a least time, TDP a most power (a GPU waiting on a launch, the link or
    another pipeline stage draws less)."""
    if not choice.tdp_w:
        return None
    tp, pp = _split(split)
    seconds = choice.floor_s if work_floor else choice.ranked_s
    return tp * pp * choice.tdp_w * seconds


def step_flop_per_joule(choice, kernels: Sequence, split: Mapping | None = None,
                        work_floor: bool = False) -> float | None:
    """step_flop / step_energy_j: under --tp the shard's FLOP / (TDP x ranked_s), as each
    GPU does 1/tp of the work in the whole step's time; under --pp 1/pp of that."""
    energy = step_energy_j(choice, split, work_floor)
    return step_flop(kernels, split) / energy if energy else None


def energy_fields(choice, kernels: Sequence, split: Mapping | None = None) -> dict:
    """--json's and the CSV's four energy keys for one row (they replace choices_to_dict's
    one-device, link-free figures; equal to them without --tp/--pp)."""
    return {"energy_j": step_energy_j(choice, split),
            "flop_per_joule": step_flop_per_joule(choice, kernels, split),
            "work_floor_energy_j": step_energy_j(choice, split, work_floor=True),
            "work_floor_flop_per_joule": step_flop_per_joule(choice, kernels, split,
                                                             work_floor=True)}


def energy_words(split: Mapping | None, link: bool) -> str:
    """The table's FLOP/J footnote: what the time, the power and the FLOP are."""
    tp, pp = _split(split)
    plus = " + TP link" if link else ""
    gpus = ""
    if pp > 1:   # a token passes every stage: all the GPUs are powered for the whole step
        gpus = (f", on all {tp * pp} GPUs: every stage's FLOP{f' x {tp}' if tp > 1 else ''}"
                f" / ({tp * pp} x TDP x the time)")
    elif tp > 1:   # each GPU runs its shard in the step's time: per GPU = all of them
        gpus = f", the same per GPU and on all {tp}: {tp} shards' FLOP / ({tp} x TDP x the time)"
    return (f"FLOP/J: the work's FLOP / (TDP x the time with launches{plus}), the launches"
            f"{' and the link' if link else ''} included{gpus}; --json also gives it at "
            f"the work floor{plus}")

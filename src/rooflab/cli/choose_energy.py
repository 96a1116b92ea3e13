"""`rooflab choose`'s energy footnote: what the FLOP/J column's time, power and FLOP are.

The figures are model.choose's (Choice.energy_j, flop_per_joule): TDP over the time a row
ranks by (with launches + the TP link) on every GPU the row stands for (an llm --tp/--pp
document's tp x pp), so the library, the table, --json and the CSV give one number.
"""

from __future__ import annotations

from collections.abc import Mapping


def _split(split: Mapping | None) -> tuple[int, int]:
    """(tp, pp) of the llm document a row stands for; (1, 1) for other inputs."""
    if not split:
        return 1, 1
    return int(split.get("tp") or 1), int(split.get("pp") or 1)


def energy_words(split: Mapping | None, link: bool, plus: str | None = None) -> str:
    """The table's FLOP/J footnote: what the time, the power and the FLOP are; plus: what
    the time adds (" + TP link", or a train --dp step's " + exposed comm")."""
    tp, pp = _split(split)
    plus = (plus or " + TP link") if link else ""
    gpus = ""
    if pp > 1:   # a token passes every stage: all the GPUs are powered for the whole step
        gpus = (f", on all {tp * pp} GPUs: every stage's FLOP{f' x {tp}' if tp > 1 else ''}"
                f" / ({tp * pp} x TDP x the time)")
    elif tp > 1:   # each GPU runs its shard in the step's time: per GPU = all of them
        gpus = f", the same per GPU and on all {tp}: {tp} shards' FLOP / ({tp} x TDP x the time)"
    return (f"FLOP/J: the work's FLOP / (TDP x the time with launches{plus}), the launches"
            f"{' and the link' if link else ''} included{gpus}; --json also gives it at "
            f"the work floor{plus}")

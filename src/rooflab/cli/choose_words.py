"""The words of `rooflab choose`'s table: its title, what a row stands for, what its work
floor is of and what its tok/s are per (split from cli/choose.py, which stays small)."""

from __future__ import annotations


def gpus_line(split: dict) -> str:
    """What each row of an llm --tp/--pp document stands for, above the table."""
    tp, pp = split["tp"], split["pp"]
    how = " x ".join(w for w in ((f"--tp {tp}" if tp > 1 else ""),
                                 (f"--pp {pp}" if pp > 1 else "")) if w)
    parts = []
    if tp > 1:
        parts.append(f"the time is one GPU's 1/{tp} shard + its catalog link's all-reduces")
    if pp > 1:
        parts.append(f"the time is every stage in turn (a token passes all {pp})")
    return (f"each row assumes {split['gpus']} GPUs of that device (the llm document's "
            f"{how}): {'; '.join(parts)}; memory is per GPU")


def llm_floor(scope) -> str | None:
    """`rooflab llm`'s name for the work floor of the step an llm document's kernels are:
    a decode step's is its TPOT floor, a prefill's its TTFT floor (review s20 x2 F4: a
    prefill's footer said TPOT); None for other kernels."""
    if scope is None:
        return None
    return "TTFT floor" if scope.phase == "prefill" else "TPOT floor"


def floor_words(split: dict | None, scope=None) -> str:
    """What the work floor is of an llm document split over GPUs: not `rooflab llm`'s TPOT
    floor, which adds the all-reduces and stage transfers (review 11b #8); of one GPU, the
    step's floor as `rooflab llm` names it; "" for kernels that are no llm step."""
    if not split or split["gpus"] <= 1:
        floor = llm_floor(scope)
        return f"`rooflab llm`'s {floor}" if floor else ""
    parts = ([f"per GPU of {split['tp']}, + TP link: its all-reduces on the device's "
              f"catalog link, as `rooflab llm --on` adds them"] if split["tp"] > 1
             else []) + ([f"all {split['pp']} stages, without stage transfers"]
                         if split["pp"] > 1 else [])
    return ", ".join(parts) + ("; `rooflab llm --on` the device adds the stage transfers"
                               if split["pp"] > 1 else "")


def per_unit(choices) -> str:
    """What a row's tok/s per ... is per: "GPU" where every ranked device is a catalog GPU,
    else "device" (a CPU socket, a TPU chip, a profile: review s20 x2 F5)."""
    from ..errors import RooflabError
    from ..hardware.catalog import lookup

    for c in choices:
        try:
            if lookup(c.name).kind != "gpu":
                return "device"
        except RooflabError:
            return "device"
    return "GPU"


def title(scope, plus: str, mixed: bool) -> str:
    """The table's title: what the time is of (an llm document's step), what ranks, and
    that the devices that cannot run the work come after the rest, slower or not."""
    from ..model.choose import WITH_LAUNCHES

    what = ("" if scope is None else
            f"{scope.words}: each time is this whole step, not one token's\n"
            if scope.tokens > 1 or getattr(scope, "verify", False)
            else f"{scope.words}: each time is this step's one token\n")
    order = ("fastest first, the devices that cannot run it last (marked)"
             if mixed else "fastest first")
    return (f"{what}Predicted time at the roof (lower bounds), ranked by the time "
            f"{WITH_LAUNCHES}{plus} (what binds), {order}")

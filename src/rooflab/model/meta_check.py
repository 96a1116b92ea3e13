"""The one check of a kernel's meta as a kernel file gives it (ingest's JSON and CSV readers
call checked_meta on every kernel they read). Kernel.meta is open (any key a tool or user
wants to keep), but rooflab itself reads some keys with a type in mind: a step_index sorts
the steps and keys the time shares, source and op are looked up in sets, flags and
compile_runs_left_out are iterated, flop_with_level_bytes is divided by. A hand-edited file
gave them any JSON type and crashed deep in a verb (review s23 r4 F3-F6). Here each such
key is refused with one line naming the kernel and the key, and what to write; a non-finite
number anywhere in meta (a CSV cell 'nan', JSON NaN or 1e999) is kept as its text, which
every reader of a number already passes over and which JSON can hold (it broke every
--json: review s23 r4 F4). Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..errors import InputError

# Text keys rooflab looks up or joins on (a list or dict there is unhashable): what each is,
# said in the error. A number is kept as its text (a CSV 'step' of 1 is the label '1').
TEXT_KEYS = {
    "source": "the tool that timed the kernel (ncu, rocprof, torch.profiler); keep a note "
              "of your own under another key, e.g. meta.note",
    "op": "the op kind the advice reads, e.g. 'matmul' or 'softmax'",
    "renamed_from": "the name of the kernel a repeated row is a launch of",
    "step": "the optimisation step's label, e.g. 'output3' (the profiler file's name)",
    "file": "the file the kernel was read from",
    "time": "what the time spans, e.g. 'cuda kernels'",
}
# Keys rooflab iterates (model/sanity_timing.slow_runs_finding, whatif_warnings._doubt,
# cli/bench). A text is its words (bench -o x.csv writes flags "below-floor cache-resident"
# in one cell, which read back was iterated letter by letter), a number a list of one;
# model_dtype_parts: the bytes_split parts whatif --precision fp8 keeps wide (train -o
# x.csv writes "activations weights" in one cell; s30 hg).
LIST_KEYS = {
    "flags": '["below-floor"]',
    "model_dtype_parts": '["activations", "weights"]',
    "compile_runs_left_out": "[2, 5]",
    "compile_runs_kept": "[2]",
    "slow_runs": "[3]",
}
# Keys rooflab reads as {name: number} (compare_merge.LEVEL_FLOP, fma_ceiling, the pipe
# advice): a value that is no number was divided or compared.
NUMBER_MAPS = {
    "flop_with_level_bytes": '{"L2": 2.0e9}',
    "fma_share": '{"fp64": 0.49}',
    "pipe_busy": '{"fma": 62.5}',
}
STEP_INDEX = "step_index"
# Number keys whose non-finite value is an error, not text: whatif --batch scales by it
# (int(inf) was a traceback: review s23 r4 F2); other values are whatif_batch.meta_batch's.
FINITE_KEYS = {"batch": "a whole number >= 1, the batch the kernel was counted at, e.g. 8"}
# Number keys read as a number > 0 (`train --dp`'s communication row: whatif --precision
# divides its bytes by grad_bytes; a text there was a traceback: review s35 D)
POSITIVE_KEYS = {"grad_bytes": "a number > 0, the bytes per gradient element the "
                               "communication was counted at (2 for bf16, 4 for fp32)"}


def _words(value: object) -> str:
    kind = {dict: "an object", list: "a list", bool: "true/false"}.get(type(value))
    return f"{kind} {value!r:.40}" if kind else f"{value!r:.40}"


def _finite_or_text(value: Any) -> Any:
    """value with every non-finite float in it (at any depth) as its text: 'nan', 'inf'."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, Mapping):
        return {k: _finite_or_text(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_text(v) for v in value]
    return value


def _number(value: object) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def step_index_value(value: object, where: str) -> int:
    """A meta step_index as the int it must be (the step's place in order, as `rooflab ncu
    a.csv b.csv` numbers its files), or InputError saying what to write."""
    if _number(value) and value == int(value):
        return int(value)
    raise InputError(f"{where}: meta.step_index must be a whole number (the step's place in "
                     f"order, 0 for the first file, as `rooflab ncu a.csv b.csv` writes it); "
                     f"got {_words(value)}; write 0, 1, 2, ... or remove the key",
                     field=STEP_INDEX)


def checked_meta(meta: Mapping[str, Any], where: str, field: str = "meta") -> dict[str, Any]:
    """meta with the keys rooflab reads checked: a wrong type is an InputError naming
    `where` (the kernel, "kernels[0] 'gemm'") and the key (its `field` FIELD.KEY, for the
    --json error document); null for one of them is the key left out (as the readers take
    null elsewhere); non-finite numbers become text."""
    try:
        return _checked(meta, where)
    except InputError as exc:
        raise InputError(str(exc), field=f"{field}.{exc.field}") from None


def _checked(meta: Mapping[str, Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in meta.items():
        checked = key in TEXT_KEYS or key in LIST_KEYS or key in NUMBER_MAPS \
            or key == STEP_INDEX or key in POSITIVE_KEYS
        if value is None and checked:
            continue
        if key in POSITIVE_KEYS and not (_number(value) and value > 0):
            raise InputError(f"{where}: meta.{key} must be {POSITIVE_KEYS[key]}; got "
                             f"{_words(value)}; fix it or remove the key", field=key)
        if key == STEP_INDEX:
            out[key] = step_index_value(value, where)
        elif key in FINITE_KEYS and isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"{where}: meta.{key} must be {FINITE_KEYS[key]}; got {value!r}",
                             field=key)
        elif key in TEXT_KEYS:
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise InputError(f"{where}: meta.{key} must be text ({TEXT_KEYS[key]}); got "
                                 f"{_words(value)}", field=key)
            out[key] = value if isinstance(value, str) else _text(value)
        elif key in LIST_KEYS:
            if isinstance(value, str):
                value = value.replace(",", " ").replace(";", " ").split()
            elif _number(value):
                value = [int(value) if value == int(value) else value]
            if not isinstance(value, (list, tuple)):
                raise InputError(f"{where}: meta.{key} must be a list, e.g. {LIST_KEYS[key]} "
                                 f"(rooflab writes it so); got {_words(value)}; fix it or "
                                 f"remove the key", field=key)
            out[key] = _finite_or_text(value)
        elif key in NUMBER_MAPS:
            if not isinstance(value, Mapping) or not all(_number(v) for v in value.values()):
                raise InputError(f"{where}: meta.{key} must be an object of finite numbers, "
                                 f"e.g. {NUMBER_MAPS[key]} (rooflab writes it so); got "
                                 f"{_words(value)}; fix it or remove the key", field=key)
            out[key] = dict(value)
        else:
            out[key] = _finite_or_text(value)
    return out


def _text(value: int | float) -> str:
    """A number given for a text key, as text: 3 and 3.0 -> '3', inf -> 'inf'."""
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def step_of(meta: Mapping[str, Any]) -> int | None:
    """A kernel's step (meta step_index) as an int, None when it has none. The readers
    check it (checked_meta); a Kernel built in Python with a step_index of another type is
    read as no step, not a traceback where the steps are sorted and keyed."""
    value = meta.get(STEP_INDEX) if isinstance(meta, Mapping) else None
    return int(value) if _number(value) and value == int(value) else None

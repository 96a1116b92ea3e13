"""Float options refuse infinity and NaN, in one place for every verb.

Python's float() reads 'inf', '1e999' (past the largest double: infinity) and 'nan', and so
did every float option: `rooflab llm llama-2-7b --on H100 --hop-latency-us 1e999` reached
the verb's own check, which said "got inf" for what was typed as 1e999, and an option with
no check of its own took the infinity into the model (review s34 F). No option means an
infinite or undefined amount, so each float option of each verb (and subcommand) checks the
text as typed before typer converts it: "--hop-latency-us must be a finite number such as
2.5; got '1e999'", exit 2, as cli/usage_words.py says other bad numbers
(main._click_error prints it with the usage; --json's error document alike).

An option whose verb checks its range in words of its own (`--bytes-scale -1`: "bytes scale
must be > 0 and finite (0.25 = a quarter of the bytes, AI x 4); got -1") is said in those
words for inf and nan too, not in this generic sentence beside them (review s35 B): OWN_RANGE
names those options, and their non-finite value reaches the verb as a `Typed` float that
prints as it was typed, so the verb's "got ..." reads '1e999', not 'inf'.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Iterable
from typing import Any

# how the message reads; usage_words.usage_message returns it as it is
WORDS = "{name} must be a finite number such as 2.5; got '{got}'"
_WRAPPED = "_rooflab_finite"   # set on a parameter once its check is in place

# command name -> its float options that refuse inf and nan in the verb's own range words
# (each checks `not x > 0`-style, so NaN fails too; tests/test_s35_b_finite_own_words.py
# holds every one to it)
OWN_RANGE: dict[str, frozenset[str]] = {
    "plot": frozenset({"--dpi"}),
    "report": frozenset({"--fail-below"}),
    "compare": frozenset({"--fail-if-slower"}),
    "whatif": frozenset({"--bytes-scale"}),
    "llm": frozenset({"--hop-latency-us", "--link-latency", "--pp-link-latency",
                      "--gpu-mem-util", "--tpot-ms", "--ttft-ms"}),
    "choose": frozenset({"--gpu-mem-util"}),
    "train": frozenset({"--step-ms", "--link-latency"}),
    "elementwise": frozenset({"--flop-per-element"}),
    "stencil": frozenset({"--flop-per-point"}),
    "upsample": frozenset({"--scale"}),
}


class Typed(float):
    """An infinite or NaN option value on its way to the verb's own range check: a float
    that prints as it was typed ('1e999', not 'inf') in any format the message uses."""

    text: str

    def __new__(cls, value: float, text: str) -> Typed:
        self = super().__new__(cls, value)
        self.text = text
        return self

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return self.text


def is_float_option(param) -> bool:
    """Whether param takes a float (typer's type descriptor: float, float | None, a list
    of floats; click's FLOAT type in a typer without descriptors)."""
    ann = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    if ann is not None:
        inner = {a for arg in (ann, *typing.get_args(ann))
                 for a in (arg, *typing.get_args(arg))}
        return float in inner
    return getattr(getattr(param, "type", None), "name", "") == "float"


def non_finite(raw: Any) -> bool:
    """Whether one raw value (the text typed, or a default) reads as infinity or NaN."""
    if isinstance(raw, bool) or raw is None:
        return False
    try:
        value = float(str(raw).strip()) if isinstance(raw, str) else float(raw)
    except (TypeError, ValueError):
        return False   # no number: the converter says so in its own words
    return not math.isfinite(value)


def _values(value: Any) -> Iterable[Any]:
    """The raw values of one parameter: one, or those of a repeated/multi-value option."""
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _values(v)
    else:
        yield value


def _option_name(param) -> str:
    opts = [o for o in getattr(param, "opts", ()) if o.startswith("--")]
    return opts[0] if opts else str(getattr(param, "name", "value"))


def _bad_parameter(param):
    """The usage-error class of the click that param belongs to (typer's own copy from
    0.22 on, else click's)."""
    try:
        from typer._click.core import Parameter
        from typer._click.exceptions import BadParameter
        if isinstance(param, Parameter):
            return BadParameter
    except ImportError:
        pass
    from click.exceptions import BadParameter

    return BadParameter


def _check(param, own: bool = False) -> None:
    """Make param refuse a non-finite value before it is converted; with `own` (the verb
    says its range itself: OWN_RANGE) pass it on as a Typed float for the verb to refuse."""
    process = param.process_value

    def process_value(ctx, value):
        if own and isinstance(value, str) and ctx is not None:   # for as_typed
            ctx.meta.setdefault(_TYPED, {})[_option_name(param)] = value.strip()
        bad = next((v for v in _values(value) if non_finite(v)), None)
        if bad is not None and own and not isinstance(value, (list, tuple)):
            got = process(ctx, value)
            return Typed(got, str(bad).strip()) if isinstance(got, float) else got
        if bad is not None:
            message = WORDS.format(name=_option_name(param), got=str(bad).strip())
            exc = _bad_parameter(param)(message, ctx=ctx, param=param)
            exc.rooflab_words = message   # usage_words.usage_message: said as it is
            raise exc
        return process(ctx, value)

    param.process_value = process_value
    setattr(param, _WRAPPED, True)


# ctx.meta key: {option: its value as typed} of the OWN_RANGE options of this command line
_TYPED = "rooflab.typed"


def as_typed(name: str, value: float) -> str:
    """An OWN_RANGE option's value as typed on this command line ('-1'), for the verb's
    own range message, which said the float (`--fail-below -1`: "got -1.0", s36 I); the
    value as `:g` writes it where nothing was typed (a default, a library call). Only the
    message: the verb keeps the float, so a valid value prints as it always did."""
    text = _typed_now().get(name)
    if text is not None:
        try:
            if float(text.replace("_", "")) == value:
                return text
        except ValueError:
            pass
    return f"{value:g}"


def _typed_now() -> dict[str, str]:
    """The typed values of the command line being run (the current click context's)."""
    import importlib

    for where in ("typer._click.globals", "click.globals"):
        try:
            ctx = importlib.import_module(where).get_current_context(silent=True)
        except ImportError:
            continue
        if ctx is not None:
            return ctx.meta.get(_TYPED, {})
    return {}


def refuse_non_finite(command) -> None:
    """Every float option of command and of its subcommands refuses inf, 1e999 and nan
    (idempotent)."""
    own = OWN_RANGE.get(getattr(command, "name", None) or "", frozenset())
    for param in getattr(command, "params", ()):
        if is_float_option(param) and not getattr(param, _WRAPPED, False):
            _check(param, _option_name(param) in own)
    for sub in getattr(command, "commands", {}).values():
        refuse_non_finite(sub)

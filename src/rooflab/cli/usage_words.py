"""A bad number given to an option, in rooflab's words rather than pydantic's.

typer (0.2x) converts option values with pydantic, and its error read "Invalid value for
'--blocks': Input should be a valid integer, unable to parse string as an integer" (`rooflab
scale --blocks x`, review s34 C): the parser's words, not naming what was typed. Every
integer and float option of every verb goes through this one place (main._click_error),
so each says it as the verbs' own number checks do ("--blocks must be a whole number such
as 4 or 32; got 'x'", cli/ai_args.py's wording). Any other usage error keeps click's text.
"""

from __future__ import annotations

# pydantic's error types (ValidationError.errors()[i]["type"]) this rewords
_WHOLE = ("int_parsing", "int_from_float", "int_type")
_NUMBER = ("float_parsing", "float_type")
_BOUNDS = {"greater_than_equal": "at least", "greater_than": "more than",
           "less_than_equal": "at most", "less_than": "less than"}


def usage_message(exc: BaseException) -> str:
    """The `error:` text of a click/typer usage error: an option's value that is no number
    of its kind, or past its bound, said in rooflab's words; else click's message."""
    words = value_words(exc)
    if words:
        return words
    from .unknown_command import unknown_command

    said = unknown_command(exc)   # `rooflab specs H100`: a word where a subcommand goes
    return said or exc.format_message()   # type: ignore[attr-defined]


def value_words(exc: BaseException) -> str:
    """An option's value that is no number of its kind, or past its bound, in rooflab's
    words; '' for any other usage error. Such an error is of kind `input` under --json (an
    option's value, docs/json.md), as the verbs' own checks say `nan` or `-1` for the same
    option: `--fail-if-slower abc` was `usage` beside `nan`'s `input` (s36 I)."""
    words = getattr(exc, "rooflab_words", None)   # finite_options: already rooflab's
    if words:
        return str(words)
    errors = getattr(exc.__cause__, "errors", None)
    param = getattr(exc, "param", None)
    if not callable(errors) or param is None:
        return ""
    try:
        first = errors()[0]
    except (IndexError, TypeError, ValueError):
        return ""
    name, kind, got = _name(param), first.get("type", ""), first.get("input")
    if kind in _WHOLE:
        return f"{name} must be a whole number such as 4 or 32; got '{got}'{_digits(got)}"
    if kind in _NUMBER:
        return f"{name} must be a number such as 2.5 or 1e-3; got '{got}'"
    if kind in _BOUNDS and str(got).strip().lower() in ("nan", "+nan", "-nan"):
        return f"{name} must be a number such as 2.5 or 1e-3; got '{got}'"   # no number
    limit = next(iter((first.get("ctx") or {}).values()), None)
    if kind in _BOUNDS and isinstance(limit, (int, float)):
        return f"{name} must be {_BOUNDS[kind]} {limit:g}; got {got}"
    return ""


def _name(param) -> str:
    """The option's name ('--blocks'; its first long name where it has aliases), else the
    argument's name."""
    opts = [o for o in getattr(param, "opts", ()) if o.startswith("--")]
    if opts:
        return opts[0]
    return str(getattr(param, "human_readable_name", None) or getattr(param, "name", "value"))


def _digits(got) -> str:
    """'1e3' or '32.0' is a whole number the option's parser reads only in digits: say so."""
    try:
        value = float(str(got))
    except ValueError:
        return ""
    if value != value or value in (float("inf"), float("-inf")) or value != int(value):
        return ""
    return f" (write it in digits: {int(value)})"

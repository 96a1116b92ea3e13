"""A word where a verb group's subcommand goes (`rooflab specs H100`, `rooflab ai 4096 ...`)
in rooflab's words: click said only "No such command 'H100'.", neither what the word looked
like nor which commands there are (review s35 D). Only the groups with subcommands (`specs`,
`ai`) are worded here; the root's own unknown verb keeps click's text (its --help lists them).
"""

from __future__ import annotations

import ast
import re
import shlex

# click's (and typer's vendored click's) words: "No such command 'H100'." + a "Did you mean"
_NO_SUCH = re.compile(r"No such command (?P<name>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\.")


def unknown_command(exc: BaseException) -> str | None:
    """The `error:` text for an unknown subcommand of a verb group, or None for any other
    usage error (and for an unknown verb: the root is no group of a verb)."""
    ctx = getattr(exc, "ctx", None)
    m = _NO_SUCH.match(exc.format_message())   # type: ignore[attr-defined]
    if m is None or ctx is None or ctx.parent is None:
        return None
    try:
        word = str(ast.literal_eval(m["name"]))
    except (ValueError, SyntaxError):
        return None
    group = ctx.info_name
    hint = _hint(group, word)
    if hint:
        article = "an" if group[:1] in "aeio" else "a"
        return f"'{word}' is not {article} `{group}` command; {hint}"
    commands = ", ".join(ctx.command.list_commands(ctx))
    return f"{exc.format_message()} The `{group}` commands: {commands}"   # type: ignore[attr-defined]


def _hint(group: str, word: str) -> str | None:
    """What the word suggests was meant: a catalog device after `specs` (its roof is
    `specs show`), a number after `ai` (the sizes of an op not named)."""
    # a word float() reads ('4096', '1e6'): perf's own test of a number field
    from ..ingest.perf_numbers import is_number

    if group == "specs" and _a_device(word):
        return f"to see a device's roof: rooflab specs show {shlex.quote(word)}"
    if group == "ai" and is_number(word):
        return (f"name the op first, then its sizes: rooflab ai matmul {word} ... (the ops: "
                f"`rooflab ai --help`)")
    return None


def _a_device(word: str) -> bool:
    """Whether `word` is a catalog device's name or alias (`H100`, `mi250x`); an ambiguous
    family (`epyc`) or an unknown word is not."""
    from ..errors import RooflabError
    from ..hardware.catalog import lookup

    try:
        lookup(word)
    except (RooflabError, LookupError, ValueError):
        return False
    return True

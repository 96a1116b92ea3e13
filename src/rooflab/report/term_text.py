"""Text from files and arguments made safe to show in a terminal (review s22 r1 F5, F7, F8).

Kernel, model, roof and file names come from files a stranger may have written. In a
terminal three things go wrong with them as they stand:
- control characters run: ESC [ 2 J clears the screen, ESC [ 31 m turns the rest red, a
  carriage return overwrites the line, U+202E reverses what follows; they are shown as
  escapes instead (`\\x1b`, `\\u202e`), so the name still reads and tells what it held;
- rich markup in a name ('[/]', '[link=...]') is taken for markup: a crash, or a live link;
- a name of megabytes takes rich a minute to wrap: it is cut (the reports and --json keep
  it whole).

`visible` does the first, `shown` the first and third, `cell` all three (for text handed
to rich as markup). The CLI's consoles (cli/common.py) pass every string through
`visible` too, as a last guard for a name that reached them another way.
"""

from __future__ import annotations

import re

# C0 and C1 control characters but line feed and tab (rich lays both out), DEL, and the
# bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069) that reorder the text
# after them on screen.
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_HIDDEN_INLINE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

# A name longer than this is cut on a terminal: rich wraps about 100k characters a second,
# so a 4 MB kernel name held the table for 50 s; the longest real C++ template kernel
# names run to a few thousand characters.
NAME_LIMIT = 4000


def _escaped(m: re.Match) -> str:
    c = m.group()
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def visible(text: str, inline: bool = False) -> str:
    """text with its control characters shown as escapes (`\\x1b`). inline: line feed and
    tab too (a name in a table cell or a one-line message, where a line feed would split
    it)."""
    return (_HIDDEN_INLINE if inline else _HIDDEN).sub(_escaped, text)


def shown(name: str, limit: int = NAME_LIMIT) -> str:
    """A name as a terminal shows it: on one line, control characters escaped, and cut
    past `limit` characters with a note of how many were left out."""
    name = str(name)
    cut = ""
    if len(name) > limit:
        cut = f"... ({len(name) - limit:,} more characters; in full: --json, -o report.md)"
        name = name[:limit]
    return visible(name, inline=True) + cut


def cell(name: str, limit: int = NAME_LIMIT) -> str:
    """A name for text rich reads as markup (a table cell, a title, console.print): shown,
    and its '[' escaped so that '[/]' or '[link=...]' stays text."""
    from rich.markup import escape

    return escape(shown(name, limit))

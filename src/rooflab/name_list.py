"""A list of kernel names in a warning, cut to its first few (review s23 r5 F4: "read with
care" named all 39,941 flagged kernels of a 100k-kernel file, 1.3 MB of terminal text)."""

from __future__ import annotations

from collections.abc import Iterable

# names a warning spells out before it counts the rest, once it has more than twice as many
# (cutting 13 names to 10 "and 3 more" would save nothing: up to 20 are all named, as before)
NAMED = 10


def cut(count: int, limit: int = NAMED) -> bool:
    """Whether a list of `count` names is cut to its first `limit`."""
    return count > 2 * limit


def named(names: Iterable[str], limit: int = NAMED, sep: str = ", ",
          where: str = "their sanity checks name them; `--json` has every kernel") -> str:
    """'a, b, c and 12,345 more (...)': the first `limit` names, then how many are left and
    `where` they are; every name where there are at most 2 x limit."""
    names = list(names)
    if not cut(len(names), limit):
        return sep.join(names)
    return sep.join(names[:limit]) + f" and {len(names) - limit:,} more ({where})"

"""Rows and launches an importer skipped, with where and why, so the CLI can warn about them.

Importers never print: they return their skips beside the kernels and the CLI turns each
into a `warning: FILE:LINE: reason` line on stderr.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Skip:
    """One skipped row (or launch, or whole file): file, 1-based line, reason."""

    path: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.reason}"


_ONE = {"rows": "row", "launches": "launch"}   # "(and 1 more row like it)"


class SkipLog:
    """Collects skips; repeats of the same reason are counted, not repeated (one line each)."""

    def __init__(self, path: str):
        self.path = path
        self._skips: list[Skip] = []
        # key -> (its first reason, what repeats: "rows", "launches", the lines)
        self._grouped: dict[str, tuple[str, str, list[int | None]]] = {}

    def add(self, line: int | None, reason: str) -> None:
        self._skips.append(Skip(self.path, line, reason))

    def add_grouped(self, line: int | None, reason: str, key: str | None = None,
                    what: str = "rows") -> None:
        """A reason that may repeat on many lines (an unused metric): reported once, as its
        first line's reason and how many more `what` were alike. key: what makes two alike
        when their reasons differ in detail (each launch's own numbers); the reason."""
        group = self._grouped.get(key or reason)
        if group is None:
            self._grouped[key or reason] = (reason, what, [line])
        else:
            group[2].append(line)

    def __len__(self) -> int:
        return len(self._skips) + len(self._grouped)

    def skips(self) -> tuple[Skip, ...]:
        out = list(self._skips)
        for reason, what, lines in self._grouped.values():
            n = len(lines) - 1
            more = f" (and {n} more {_ONE.get(what, what) if n == 1 else what} like it)" \
                if n else ""
            out.append(Skip(self.path, lines[0], reason + more))
        return tuple(sorted(out, key=lambda s: (s.line or 0)))


@dataclass(frozen=True)
class FileRead:
    """One file an importer read: its position among the files, what `read` returned, and
    the rows it skipped."""

    index: int
    path: str
    value: Any
    skips: tuple[Skip, ...]


def read_each(paths: Sequence[str], read: Callable[[str, SkipLog], Any]
              ) -> tuple[list[FileRead], list[Skip]]:
    """Each file through `read(path, log)`. Alone, a file's ParseError is the verb's error;
    among several (steps, one run of which crashed) it is listed as a failed file and the
    others are used: (the files read, the files that failed)."""
    from ..errors import ParseError

    several = len(paths) > 1
    done: list[FileRead] = []
    failed: list[Skip] = []
    for i, path in enumerate(paths):
        log = SkipLog(path)
        try:
            value = read(path, log)
        except ParseError as exc:
            if not several:
                raise
            failed.append(Skip(path, None, str(exc).removeprefix(f"{path}: ")))
            continue
        done.append(FileRead(i, path, value, log.skips()))
    return done, failed

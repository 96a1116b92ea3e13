"""Rows and launches an importer skipped, with where and why, so the CLI can warn about them.

Importers never print: they return their skips beside the kernels and the CLI turns each
into a `warning: FILE:LINE: reason` line on stderr.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Skip:
    """One skipped row (or launch, or whole file): file, 1-based line, reason."""

    path: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.reason}"


class SkipLog:
    """Collects skips; repeats of the same reason are counted, not repeated (one line each)."""

    def __init__(self, path: str):
        self.path = path
        self._skips: list[Skip] = []
        self._grouped: dict[str, list[int | None]] = {}

    def add(self, line: int | None, reason: str) -> None:
        self._skips.append(Skip(self.path, line, reason))

    def add_grouped(self, line: int | None, reason: str) -> None:
        """A reason that may repeat on many lines (an unused metric): reported once."""
        self._grouped.setdefault(reason, []).append(line)

    def __len__(self) -> int:
        return len(self._skips) + len(self._grouped)

    def skips(self) -> tuple[Skip, ...]:
        out = list(self._skips)
        for reason, lines in self._grouped.items():
            more = f" (and {len(lines) - 1} more rows like it)" if len(lines) > 1 else ""
            out.append(Skip(self.path, lines[0], reason + more))
        return tuple(sorted(out, key=lambda s: (s.line or 0)))

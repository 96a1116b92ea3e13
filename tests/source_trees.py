"""The syntax trees of the project's own .py files, parsed once per test session: the
import-scan tests (test_moved_names, test_model_module_sizes, test_ingest_names_importable)
read the same ~700 files, each parsed and walked again per test (review s18 r1 F7). The
trees are read, never changed."""

from __future__ import annotations

import ast
import functools
from pathlib import Path


@functools.cache
def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def walk(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the file, in ast.walk's order."""
    return tuple(ast.walk(tree(path)))


@functools.cache
def import_froms(path: Path) -> tuple[ast.ImportFrom, ...]:
    """The file's `from ... import` statements (lazy ones inside functions too), in
    ast.walk's order."""
    return tuple(n for n in walk(path) if isinstance(n, ast.ImportFrom))

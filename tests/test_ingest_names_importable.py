"""Every name imported from a module of rooflab.ingest or rooflab.bench is there: those
readers were split (kernelfile -> kernelfile_csv, kernelfile_rows, profile_files; the bench
tables) and a split keeps every old name importable from where it was. The same ast scan
as test_model_module_sizes.py's for model/ (its _module_of resolves relative imports),
over src/, tests/, benchmarks/, examples/ and the docs' one-line imports."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import re

import pytest
from source_trees import import_froms
from test_model_module_sizes import ROOT, _module_of

PACKAGES = ("rooflab.ingest", "rooflab.bench")
# A `from` import that resolves into ingest/bench spells ".ingest" or ".bench" in its module
# (`from rooflab.ingest.x`, `from ..bench import`), unless it is a relative import from inside
# those packages (`from .kernelfile_rows import`). Files with neither are not parsed: the
# parse of all ~1000 files was this test's 17-25 s.
MENTIONS = re.compile(r"\.(?:ingest|bench)\b")
OWN_DIRS = tuple(ROOT / "src" / "rooflab" / p.split(".")[1] for p in PACKAGES)


def _ours(module: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in PACKAGES)


def _may_import_ours(path) -> bool:
    return any(d in path.parents for d in OWN_DIRS) or \
        MENTIONS.search(path.read_text(encoding="utf-8")) is not None


@functools.cache          # both tests read the same scan
def _imports() -> dict[tuple[str, str], str]:
    """(module, name) -> where, for every `from <ingest/bench module> import name`
    (`from .kernelfile_rows import ...` inside src/ too, and lazy imports in functions)."""
    found: dict[tuple[str, str], str] = {}
    for top in ("src", "tests", "benchmarks", "examples"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if not _may_import_ours(path):
                continue
            for node in import_froms(path):
                if node.level and top != "src":
                    continue
                module = _module_of(node, path)
                if _ours(module):
                    for alias in node.names:
                        found.setdefault((module, alias.name),
                                         f"{path.relative_to(ROOT)}:{node.lineno}")
    one_line = re.compile(r"^\s*from (rooflab\.(?:ingest|bench)[\w.]*) import ([\w, ]+)$",
                          re.M)
    for path in sorted((ROOT / "docs").rglob("*.md")):
        for m in one_line.finditer(path.read_text(encoding="utf-8")):
            for name in filter(None, (n.strip() for n in m[2].split(","))):
                found.setdefault((m[1], name), f"{path.relative_to(ROOT)}")
    return found


def _resolves(module: str, name: str) -> bool:
    """name is an attribute of module, or (from a package) one of its submodules."""
    found = importlib.import_module(module)
    if name == "*" or hasattr(found, name):
        return True
    return hasattr(found, "__path__") and \
        importlib.util.find_spec(f"{module}.{name}") is not None


def test_the_scan_sees_the_split_readers_callers():
    """The scan is not empty by mistake: the verbs import load_kernels and file_kind from
    ingest.kernelfile, and the CSV reader imports the shared checks from kernelfile_rows
    by a relative import."""
    if not (ROOT / "src" / "rooflab").is_dir():
        pytest.skip("reads the clone's src/, docs/ and examples/: rooflab is imported from "
                    "an installed copy")
    imports = _imports()
    assert ("rooflab.ingest.kernelfile", "load_kernels") in imports
    assert ("rooflab.ingest.kernelfile", "file_kind") in imports
    assert ("rooflab.ingest.kernelfile_rows", "finish_read") in imports
    assert any(m.startswith("rooflab.bench") for m, _ in imports)
    assert len(imports) >= 100


def test_every_name_imported_from_an_ingest_or_bench_module_is_there():
    missing = [f"{where}: from {module} import {name}"
               for (module, name), where in sorted(_imports().items())
               if not _resolves(module, name)]
    assert not missing, "names no longer importable where they are imported from:\n" + \
        "\n".join(missing)

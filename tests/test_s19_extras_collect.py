"""Review s19 r3 F10: on a core-only install (the sdist ships tests/ for packagers, who build
without every extra) every test module collects: one that imports an optional package at
its top, directly or through a rooflab module that does (probe/cpu/kernels.py compiles its
numba kernels at import), skips the whole module with pytest.importorskip first. A module
that did not stopped the whole run at collection ("Interrupted: 2 errors"), which CI, with
every extra installed, never shows: this scan does.

Only top-level statements count: an import inside a function, a `try:` or an `if` runs when
a test asks for it, and a per-test importorskip guards it there."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from source_trees import tree

import rooflab

TESTS = Path(__file__).resolve().parent
SRC = Path(rooflab.__file__).resolve().parent
EXTRAS = frozenset({"numba", "torch", "plotly", "ncu_report", "scipy", "triton",
                    "transformers", "selenium", "pynvml", "threadpoolctl"})


def _module_path(name: str) -> Path | None:
    """The file of rooflab module `name`, or None outside rooflab."""
    parts = name.split(".")
    if parts[0] != "rooflab":
        return None
    base = SRC.joinpath(*parts[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = parts[:len(parts) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imported(node: ast.stmt, package: str) -> list[str]:
    """The modules a top-level statement imports: every parent package and, for `from pkg
    import sub`, the submodule too; a module-level `require("x", ...)` (errors.py: an
    import that raises MissingDependency) counts as importing x."""
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        module = _absolute(node, package)
        names = [module] + [f"{module}.{a.name}" for a in node.names]
    elif isinstance(node, (ast.Assign, ast.Expr)) and isinstance(node.value, ast.Call) \
            and getattr(node.value.func, "id", "") == "require" and node.value.args \
            and isinstance(node.value.args[0], ast.Constant):
        names = [str(node.value.args[0].value)]
    found = []
    for name in names:
        parts = name.split(".")
        found += [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return found


@functools.cache
def _edges(module: str) -> tuple[frozenset[str], frozenset[str]]:
    """(optional packages, rooflab modules) rooflab module `module` imports at its top."""
    path = _module_path(module)
    if path is None:
        return frozenset(), frozenset()
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    names = {n for node in tree(path).body for n in _imported(node, package)}
    return (frozenset(names & EXTRAS),
            frozenset(n for n in names if n.startswith("rooflab") and n != module))


@functools.cache
def _needs(module: str) -> frozenset[str]:
    """The optional packages importing rooflab module `module` imports (imports cycle:
    a package's __init__ and its submodules, so a walk, not a recursion)."""
    seen, todo, got = {module}, [module], set()
    while todo:
        extras, modules = _edges(todo.pop())
        got |= extras
        todo += [m for m in modules - seen]
        seen |= modules
    return frozenset(got)


def _guard(node: ast.stmt) -> str | None:
    """The package a top-level `pytest.importorskip("x", ...)` skips the module without."""
    call = getattr(node, "value", None)
    if isinstance(node, (ast.Assign, ast.Expr)) and isinstance(call, ast.Call) and \
            getattr(call.func, "attr", "") == "importorskip" and call.args and \
            isinstance(call.args[0], ast.Constant):
        return str(call.args[0].value).split(".")[0]
    return None


def _unguarded(path: Path) -> list[str]:
    """`file:line: module needs X` for each top-level import of an optional package X (or
    of a rooflab module that imports one) not skipped for above it."""
    guarded: set[str] = set()
    bad = []
    for node in tree(path).body:
        if (skipped := _guard(node)) is not None:
            guarded.add(skipped)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for name in _imported(node, "tests"):
                needs = ({name} & EXTRAS) | _needs(name)
                if needs - guarded:
                    bad.append(f"{path.name}:{node.lineno}: {name} needs "
                               f"{', '.join(sorted(needs - guarded))}")
    return sorted(set(bad))


def test_the_scan_sees_what_stopped_collection(tmp_path):
    # the modules that stopped a core-only collection (review s19 r3): numba through the
    # probe's kernels module, and a bare `import torch`
    assert _needs("rooflab.probe.cpu.kernels") == {"numba"}
    assert _needs("rooflab") == frozenset()   # the core import loads no extra
    assert _needs("rooflab.model.analysis") == frozenset()
    bare = tmp_path / "test_bare.py"
    bare.write_text("import pytest\nimport torch\nfrom rooflab.probe.cpu import kernels\n")
    assert _unguarded(bare) == ["test_bare.py:2: torch needs torch",
                                "test_bare.py:3: rooflab.probe.cpu.kernels needs numba"]
    guarded = tmp_path / "test_guarded.py"
    guarded.write_text("import pytest\n\npytest.importorskip('numba')\ntorch = "
                       "pytest.importorskip('torch')\nfrom rooflab.probe.cpu import kernels\n"
                       "import torch.nn\n")
    assert _unguarded(guarded) == []


def test_every_test_module_imports_optional_packages_behind_importorskip():
    bad = [line for path in sorted(TESTS.glob("*.py")) for line in _unguarded(path)]
    assert not bad, ("test modules that stop a core-only `pytest` at collection: put "
                     "`pytest.importorskip(PACKAGE)` before these imports\n" + "\n".join(bad))

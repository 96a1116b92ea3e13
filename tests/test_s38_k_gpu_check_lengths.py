"""Session 38 K: gpu_check.py's one long function split into named steps, and the rule that
keeps benchmarks/gpu_check*.py legible (functions <= 60 lines, modules <= 450), which
tests/test_legibility_length.py and tests/test_model_module_sizes.py hold src/rooflab to.

Hand numbers: the old `_check` ran from line 209 (its `def`) to line 354, 354 - 209 + 1 =
146 lines, and gpu_check_report.checks from line 89 to 153, 65 lines; gpu_check.py itself
had 450 lines, at the budget, so the steps that replace `_check` (and a short `_check`
calling them) had to move pieces out: the CLI runs to gpu_check_cli.py, kernel_resources
and release_device to gpu_check_device.py, the lost-context ending to gpu_check_retry.py,
the JSON clean-up to gpu_check_report.py (gpu_check.py: 450 -> 380 lines). The behaviour is
pinned by the gpu_check tests (test_probe_gpu_check, test_s37_f_gpu_check_guards,
test_s38_a_lost_context, test_gpu_preflight, ...).
"""

from __future__ import annotations

import ast
from pathlib import Path

from source_trees import tree, walk

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
MAX_FUNCTION_LINES = 60   # tests/test_legibility_length.py's rule
MAX_MODULE_LINES = 450    # tests/test_model_module_sizes.py's MAX_LINES


def _modules() -> list[Path]:
    return sorted(BENCHMARKS.glob("gpu_check*.py"))


def _lines(node: ast.AST) -> int:
    """A function's lines, from its first decorator to its last line (as
    test_legibility_length._lines counts them)."""
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return node.end_lineno - start + 1


def _functions(path: Path) -> dict[str, int]:
    return {n.name: _lines(n) for n in walk(path)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def test_every_gpu_check_function_is_at_most_60_lines():
    """No function of benchmarks/gpu_check*.py is over 60 lines (the old _check: 146)."""
    assert {p.name for p in _modules()} >= {"gpu_check.py", "gpu_check_report.py",
                                            "gpu_check_retry.py", "gpu_check_refs.py"}
    long = {f"{p.name}:{name}": n for p in _modules()
            for name, n in _functions(p).items() if n > MAX_FUNCTION_LINES}
    assert long == {}


def test_every_gpu_check_module_is_at_most_450_lines():
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in _modules()}
    assert {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES} == {}


def test_check_is_its_named_steps_in_order():
    """_check reads as the run's steps: open the device, the Triton checks, the probe (or
    its failure), the profile kept, references and chart, the CLI runs, the rows, the
    table; each a function of gpu_check.py, called once, in this order."""
    path = BENCHMARKS / "gpu_check.py"
    (check,) = [n for n in tree(path).body
                if isinstance(n, ast.FunctionDef) and n.name == "_check"]
    calls = [c.func.id for c in sorted(
        (c for c in ast.walk(check) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)),
        key=lambda c: (c.lineno, c.col_offset))]
    steps = [c for c in calls if c.startswith("_") and c not in ("_save", "_lost")]
    assert steps == ["_open", "_probe", "_probe_failed", "_keep_profile",
                     "_references_and_chart", "_cli_stage", "_results", "_finish"]
    assert _lines(check) <= 30

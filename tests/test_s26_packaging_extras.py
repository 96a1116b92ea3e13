"""Review s26 r1 F3-F5: the published extras serve the published package. The `llm` extra
installed transformers, which nothing in the wheel imports (only benchmarks/llm_validation.py
and its test: it is in `test` now); `all` pulled the test toolchain (pytest, ruff, selenium,
triton) into a user's install, so the test command installs `'.[all,test]'`, the README's
and .ci/run's alike; the metadata names its authors and no address that leads nowhere; the
torch hint no longer points an installed user at a docs/ folder the wheel lacks."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from rooflab.errors import install_reason

if sys.version_info >= (3, 11):
    import tomllib
else:   # pragma: no cover
    tomllib = pytest.importorskip("tomli")

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
EXTRAS = PROJECT["optional-dependencies"]
RUNTIME = set(EXTRAS) - {"all", "test"}


def _extras_of(requirement: str) -> set[str]:
    """'rooflab[cpu,torch]' -> {'cpu', 'torch'}."""
    return set(re.fullmatch(r"rooflab\[([^\]]*)\]", requirement).group(1).split(","))


def _names(requirements: list[str]) -> set[str]:
    return {re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower() for r in requirements}


def test_all_is_every_runtime_extra_but_gpu_and_not_test():
    (line,) = EXTRAS["all"]
    assert _extras_of(line) == RUNTIME - {"gpu"}
    assert "test" not in _extras_of(line)
    assert {"gguf", "cpu", "stats"} <= _extras_of(line)


def test_transformers_is_a_test_dependency_not_an_extra():
    assert "llm" not in EXTRAS
    assert "transformers" in _names(EXTRAS["test"])
    for extra in RUNTIME:
        assert "transformers" not in _names(EXTRAS[extra]), extra


def test_nothing_in_the_package_imports_transformers():
    """Why it need not be a runtime extra: no module of the wheel imports it."""
    src = REPO / "src" / "rooflab"
    for path in src.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.split(".")[0] == "transformers" for n in names), path


def _test_command(text: str) -> str:
    line = next(ln for ln in text.splitlines() if "python -m pytest" in ln
                and ln.startswith("pip install"))
    return re.sub(r"pip install -q ", "pip install ", line.strip())


def test_readme_and_ci_run_the_same_test_command_with_the_test_extra():
    readme = _test_command((REPO / "README.md").read_text())
    ci = REPO / ".ci" / "run"
    if not ci.exists():
        pytest.skip(".ci/run is in the repository, not in the sdist")
    assert readme == _test_command(ci.read_text())
    assert readme == ("pip install torch==2.13.0 && pip install -e '.[all,test]' && "
                      "python -m pytest -q -n 2 --dist loadfile")


def test_the_docs_list_every_extra():
    readme = (REPO / "README.md").read_text()
    extras_text = readme[readme.index("The\nextras are"):readme.index("The core (")]
    table = (REPO / "docs" / "install.md").read_text()
    for extra in RUNTIME:
        assert f"`{extra}`" in extras_text, extra
        assert f"| `{extra}` |" in table, extra
    assert "`llm` (" not in extras_text and "| `llm` |" not in table
    assert "'.[all,test]'" in table


def test_metadata_names_authors_and_no_placeholder_address():
    assert PROJECT["authors"] == [{"name": "the rooflab developers"}]
    assert "the rooflab developers" in (REPO / "LICENSE").read_text()
    # no home page exists yet: no URL rather than one that leads nowhere
    assert "urls" not in PROJECT


def test_the_torch_hint_is_whole_without_the_docs():
    reason = install_reason("torch")
    assert "docs/" not in reason and "source tree" not in reason
    assert "CPU build of PyTorch first" in reason

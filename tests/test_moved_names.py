"""Review 14b F13 and smaller items 2-3: renamed and moved names.

An old import path that docs/python.md does not document is gone (review r1 F3: only tests
used them); one it documents, or one kept for now, gives the very same object. The new names
must say what the thing is.
"""

import ast
import importlib.util
import re
from pathlib import Path

import pytest
from source_trees import import_froms, walk

import rooflab

SRC = Path(rooflab.__file__).resolve().parent


def test_mann_whitney_is_the_u_test_and_the_old_module_is_gone():
    from rooflab.model import mann_whitney

    # "utest" read as "unit test"; the shim module that kept the old path is gone (r1 F4)
    assert importlib.util.find_spec("rooflab.model.utest") is None
    for name in ("ALPHA", "UTest", "have_scipy", "smallest_p", "u_test"):
        assert hasattr(mann_whitney, name)
    # Google benchmark compare.py's default alpha
    assert mann_whitney.ALPHA == 0.05


def test_layernorm_flop_per_element_has_one_source():
    from rooflab.bench import torch_count
    from rooflab.workloads import ops

    # mean add 1, x - mean 1, square-accumulate 2, times rstd 1, times gamma plus beta 2 = 7;
    # without gamma and beta 7 - 2 = 5
    assert ops.LAYERNORM_AFFINE_FLOP_PER_ELEMENT == 7
    assert ops.LAYERNORM_PLAIN_FLOP_PER_ELEMENT == 5
    # one name, one meaning: the old name (7 in ops, {"affine": 7.0, "plain": 5.0} in
    # bench.torch_count) is gone from both (review r1 F3)
    assert not hasattr(ops, "LAYERNORM_FLOP_PER_ELEMENT")
    assert not hasattr(torch_count, "LAYERNORM_FLOP_PER_ELEMENT")
    # 2048 x 4096 elements x 7 = 58 720 256 FLOP
    assert ops.layernorm(2048, 4096).flop == 58_720_256


def test_parse_cache_size_is_binary():
    from rooflab.hardware import host, host_caches
    from rooflab.units import parse_size

    assert not hasattr(host, "parse_size_text")      # the old name (review r1 F3)
    # host.py's cache readers live in host_caches.py (s35 F split)
    assert host_caches.parse_cache_size("32K") == 32 * 1024   # lscpu/sysfs: K = 1024
    assert host_caches.parse_cache_size("2 MiB (2 instances)") == 2 * 1024**2
    assert parse_size("32K") == 32_000                        # user input: K = 1e3


def test_the_two_device_parsers_have_their_own_names():
    from rooflab.cli.probe import parse_device_option
    from rooflab.probe.gpu import identity

    assert parse_device_option(" torch-cpu ") == "torch-cpu"  # the flag: which probe
    assert identity.parse_torch_device("cuda:1") == ("cuda", 1)  # the torch device
    assert not hasattr(identity, "parse_device")     # the old name (review r1 F3)


def test_script_run_lives_in_bench_and_the_ingest_path_is_gone():
    from rooflab.bench import script_run

    assert importlib.util.find_spec("rooflab.ingest.script_run") is None   # r1 F4
    for name in ("check_script", "run_as_main", "script_error"):
        assert callable(getattr(script_run, name))


def _imports(path: Path) -> list[str]:
    """The absolute module each `from ... import` of a package file names."""
    pkg = path.relative_to(SRC.parent).with_suffix("").parts[:-1]
    found = []
    for node in import_froms(path):
        base = list(pkg[:len(pkg) - node.level + 1]) if node.level else []
        found.append(".".join(base + ([node.module] if node.module else [])))
    return found


def test_bench_does_not_import_ingest():
    """../shared/design/ARCHITECTURE.md: bench sits with probe/measure (layer 5), ingest is
    layer 6."""
    bad = [(p.name, m) for p in sorted((SRC / "bench").glob("*.py"))
           for m in _imports(p) if m.startswith("rooflab.ingest")]
    assert bad == []


# Review r1 F4: the only names a module imports without using (re-exports), each kept
# because a document or a script outside the package imports it from there. Anything else
# is imported from the module that defines it.
KEPT_REEXPORTS = {
    "bench.torch_count": ({"BACKWARD_PER_ELEMENT", "PER_ELEMENT", "reduction_flop"},
                          "docs/ingest.md"),
    "measuring": ({"collect", "CountWarning"}, "docs/python.md"),
    "model.parallel": ({"link_from_profile"}, "docs/comm.md"),
    "model.whatif": ({"change_batch", "change_precision", "quantize_weights", "describe"},
                     "docs/report.md docs/python.md"),
    "workloads.llm.config": ({"load_config", "parse_config"},
                             "benchmarks/llm_speed.py benchmarks/llm_validation.py"),
    "workloads.ops": ({"axpy", "dot", "spmv", "stencil"}, "docs/ai.md"),
}


def _module(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _re_exports(path: Path) -> set[str]:
    """Names a module imports from rooflab at its top level and never uses (a submodule
    imported for its side effect is no name). Package __init__ files are the packages'
    public faces and are not scanned."""
    used = {n.id for n in walk(path) if isinstance(n, ast.Name)}
    unused = set()
    for node, mod in zip(import_froms(path), _imports(path), strict=True):
        if node.col_offset or not mod.startswith("rooflab"):
            continue
        for a in node.names:
            local = a.asname or a.name
            sub = SRC.parent.joinpath(*mod.split("."), a.name)
            if local not in used and not sub.with_suffix(".py").exists() \
                    and not (sub / "__init__.py").exists():
                unused.add(local)
    return unused


def _all_re_exports() -> dict[str, set[str]]:
    return {_module(p): names for p in sorted(SRC.rglob("*.py"))
            if p.name != "__init__.py" and (names := _re_exports(p))}


def test_no_module_re_exports_a_name_nothing_outside_imports_from_it():
    """A new shim fails here: import the name from its owner instead, or, if a doc or a
    script outside the package shows the old path, add it to KEPT_REEXPORTS with them."""
    got = _all_re_exports()
    kept = {"rooflab." + m: names for m, (names, _) in KEPT_REEXPORTS.items()}
    assert got == kept
    # scanned for real: cli/ held 74 re-exported names before review r1 F4
    assert len(got) == 6 and sum(map(len, got.values())) == 16


def test_kept_re_exports_are_what_the_docs_and_benchmarks_import():
    root = SRC.parents[1]
    if not (root / "docs").is_dir():
        pytest.skip("reads the clone's src/, docs/ and examples/: rooflab is imported from "
                    "an installed copy")
    for module, (names, where) in KEPT_REEXPORTS.items():
        text = " ".join((root / w).read_text() for w in where.split())
        for name in names:
            path = re.escape(module.rsplit(".", 1)[-1])
            assert re.search(rf"{path}(\.| import [\w, ]*){name}\b", text), (module, name)


def test_package_imports_names_from_their_owners_not_re_exports():
    """Nothing in the package imports a name through another module's re-export (kept or
    not): a kept one is for outside readers."""
    shims = _all_re_exports()
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        for node, mod in zip(import_froms(path), _imports(path), strict=True):
            hits = [a.name for a in node.names if a.name in shims.get(mod, ())]
            if hits:
                bad.append((str(path.relative_to(SRC)), mod, hits))
    assert bad == []

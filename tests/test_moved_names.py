"""Review 14b F13 and smaller items 2-3: renamed and moved names.

An old import path that docs/python.md does not document is gone (review r1 F3: only tests
used them); one it documents, or one kept for now, gives the very same object. The new names
must say what the thing is.
"""

import ast
from pathlib import Path

import rooflab

SRC = Path(rooflab.__file__).resolve().parent


def test_mann_whitney_is_the_u_test_and_utest_still_imports():
    from rooflab.model import mann_whitney, utest

    for name in ("ALPHA", "UTest", "have_scipy", "smallest_p", "u_test"):
        assert getattr(utest, name) is getattr(mann_whitney, name)
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
    assert torch_count.LAYERNORM_AFFINE_FLOP_PER_ELEMENT == 7
    # 2048 x 4096 elements x 7 = 58 720 256 FLOP
    assert ops.layernorm(2048, 4096).flop == 58_720_256


def test_parse_cache_size_is_binary():
    from rooflab.hardware import host
    from rooflab.units import parse_size

    assert not hasattr(host, "parse_size_text")      # the old name (review r1 F3)
    assert host.parse_cache_size("32K") == 32 * 1024          # lscpu/sysfs: K = 1024
    assert host.parse_cache_size("2 MiB (2 instances)") == 2 * 1024**2
    assert parse_size("32K") == 32_000                        # user input: K = 1e3


def test_the_two_device_parsers_have_their_own_names():
    from rooflab.cli.probe import parse_device_option
    from rooflab.probe.gpu import identity

    assert parse_device_option(" torch-cpu ") == "torch-cpu"  # the flag: which probe
    assert identity.parse_torch_device("cuda:1") == ("cuda", 1)  # the torch device
    assert not hasattr(identity, "parse_device")     # the old name (review r1 F3)


def test_script_run_lives_in_bench_and_ingest_still_imports_it():
    from rooflab.bench import script_run
    from rooflab.ingest import script_run as old

    for name in ("check_script", "run_as_main", "script_error"):
        assert getattr(old, name) is getattr(script_run, name)


def _imports(path: Path) -> list[str]:
    """The absolute module each `from ... import` of a package file names."""
    pkg = path.relative_to(SRC.parent).with_suffix("").parts[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = list(pkg[:len(pkg) - node.level + 1]) if node.level else []
            found.append(".".join(base + ([node.module] if node.module else [])))
    return found


def test_bench_does_not_import_ingest():
    """../shared/design/ARCHITECTURE.md: bench sits with probe/measure (layer 5), ingest is
    layer 6."""
    bad = [(p.name, m) for p in sorted((SRC / "bench").glob("*.py"))
           for m in _imports(p) if m.startswith("rooflab.ingest")]
    assert bad == []


def test_package_imports_names_from_their_owners_not_re_exports():
    """Nothing in the package imports a name report.chart or model.advice only re-exports."""
    reexported = {}
    for mod in ("report/chart.py", "model/advice.py"):
        tree = ast.parse((SRC / mod).read_text())
        own = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
        own |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
                if isinstance(t, ast.Name)}
        names = {a.asname or a.name for n in tree.body
                 if isinstance(n, ast.ImportFrom) and n.level for a in n.names}
        reexported["rooflab." + mod[:-3].replace("/", ".")] = names - own
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text())
        mods = iter(_imports(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                mod = next(mods)
                hits = [a.name for a in node.names if a.name in reexported.get(mod, ())]
                if hits:
                    bad.append((str(path.relative_to(SRC)), mod, hits))
    assert bad == []

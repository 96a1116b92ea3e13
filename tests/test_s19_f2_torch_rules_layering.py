"""Session 19 f2: the pure FLOP/byte rules of PyTorch ops live in workloads/torch_rules/
(layer 4, ../shared/design/ARCHITECTURE.md), read by both the live counter (bench/) and the
trace rules (ingest/); the ingest/torch_ops* family shares one base module of public names
and torch_ops.py assembles the rule tables without an import cycle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import rooflab

SRC = Path(rooflab.__file__).resolve().parent
RULES_PKG = SRC / "workloads" / "torch_rules"
FAMILY = sorted((SRC / "ingest").glob("torch_ops*.py"))


def _from_imports(path: Path, top_level_only: bool = False) -> list[tuple[str, list[str]]]:
    """(absolute module, names) of each `from X import ...` of a package file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    pkg = ["rooflab", *path.parent.relative_to(SRC).parts]
    out = []
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            base = pkg[:len(pkg) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            out.append((module, [a.name for a in node.names]))
    return out


def test_torch_rules_are_a_workloads_package_of_four_modules():
    names = sorted(p.stem for p in RULES_PKG.glob("*.py"))
    assert names == ["__init__", "flop", "layer", "loss", "traffic"]


@pytest.mark.parametrize("path", sorted(RULES_PKG.glob("*.py")), ids=lambda p: p.stem)
def test_torch_rules_import_nothing_above_workloads_and_no_torch(path):
    """Layer 4 imports only layers 1-4 (units, errors, model, hardware, workloads), lazily
    or not, and torch not at all: the rules are numbers and op names."""
    above = ("rooflab.bench", "rooflab.ingest", "rooflab.probe", "rooflab.measur",
             "rooflab.report", "rooflab.cli")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    plain = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    modules = [m for m, _ in _from_imports(path)]
    assert not [m for m in modules if m.startswith(above)]
    assert not [m for m in plain + modules if m == "torch" or m.startswith("torch.")]


def test_workloads_imports_nothing_from_bench_or_ingest():
    """0 upward edges from the whole of workloads/ into bench/ (layer 5) or ingest/ (6)."""
    up = [(p.relative_to(SRC).as_posix(), m) for p in sorted((SRC / "workloads").rglob("*.py"))
          for m, _ in _from_imports(p) if m.startswith(("rooflab.bench", "rooflab.ingest"))]
    assert up == []


def test_trace_rules_import_no_rule_from_bench():
    """The trace rules read the pure counts from workloads/, not from the live counter's
    modules (bench/torch_*_rules.py read tensors)."""
    got = [(p.name, m) for p in FAMILY for m, _ in _from_imports(p)
           if m.startswith("rooflab.bench")]
    assert got == []


def test_the_torch_ops_family_imports_no_private_names_from_each_other():
    private = [(p.name, m, n) for p in FAMILY for m, names in _from_imports(p)
               if m.startswith("rooflab.ingest.torch_ops") for n in names
               if n.startswith("_")]
    assert private == []


def test_only_torch_ops_imports_torch_ops_and_at_its_top():
    """torch_ops.py is the assembler: no rule module imports it (the old cycle: torch_ops.py
    imported its submodules at its bottom, and they imported its helpers)."""
    users = [p.name for p in FAMILY
             for m, _ in _from_imports(p) if m == "rooflab.ingest.torch_ops"]
    assert users == []
    top = {m for m, _ in _from_imports(SRC / "ingest" / "torch_ops.py", top_level_only=True)}
    every = {m for m, _ in _from_imports(SRC / "ingest" / "torch_ops.py")}
    assert every == top   # no import below the top or inside a function
    rule_modules = {f"rooflab.ingest.{p.stem}" for p in FAMILY
                    if p.stem not in ("torch_ops", "torch_ops_base")}
    assert rule_modules <= top


@pytest.mark.parametrize("path", FAMILY, ids=lambda p: p.stem)
def test_each_torch_ops_module_imports_first_on_its_own(path):
    """A fresh interpreter imports the module first without the cycle's ImportError (old
    code: `import rooflab.ingest.torch_ops_table` first failed, TABLE_RULES from a partly
    initialised module), and loads no torch."""
    code = (f"import sys, rooflab.ingest.{path.stem}; "
            "assert 'torch' not in sys.modules, 'torch loaded'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_pure_rules_keep_their_numbers():
    from rooflab.workloads.torch_rules import flop, layer, loss, traffic

    # sum over dim 1 of 3x5x7: 105 inputs to 21 outputs, 84 adds; mean + 21 divides = 105
    assert flop.reduction_flop("sum", 105, 21) == 84
    assert flop.reduction_flop("mean", 105, 21) == 105
    # layer norm backward with weight and bias: x̂ 2 + grad_input 7 + 1 + grad_weight 2 + 1
    assert flop.layernorm_backward_per_element(True, True, True, True) == 13
    # causal SDPA, 6 queries over 4 keys (top-left): 1+2+3+4+4+4 = 18 pairs, D 8 and 4:
    # 2·18·(8 + 4) = 432 forward, 2·18·(3·8 + 2·4) = 1,152 backward, per head
    assert flop.sdpa_count(1, 6, 4, 8, 4, True) == 432
    assert flop.sdpa_count(1, 6, 4, 8, 4, True, backward=True) == 1_152
    # batch norm: 4 per element in eval, 7 in training; backward 9 training, 5 eval
    assert (layer.batchnorm_per_element(False), layer.batchnorm_per_element(True)) == (4, 7)
    assert layer.batchnorm_backward_per_element(True, True, True, True) == 9
    assert layer.batchnorm_backward_per_element(False, True, True, True) == 5
    # RMS norm backward with a weight, both gradients: x̂ 1 + 5 + 1 + 2 = 9
    assert layer.rmsnorm_backward_per_element(True, True, True) == 9
    # encoder-fast-path attention, B 2, H 4, L 16, D 8: 4·2048·8 + 4·2048 (softmax)
    assert layer.attention_core_flop(2, 4, 16, 16, 8) == 4 * 2048 * 8 + 4 * 2048 == 73_728
    # NLL mean over 32 rows of 10 fp32 classes, int64 targets, no weight: 32 adds + 1
    # divide; 32 looked-up inputs + 256 B of targets + output and total_weight, 4 B each
    assert loss.nll_counts(False, loss.MEAN, 32, 320, 4, 256.0, 0.0) == (33.0, 392.0)
    # embedding of 10 int64 ids into a [1000, 64] fp32 table: 2,560 B looked up, 80 B of
    # ids, 2,560 B written
    assert traffic.gather_bytes(1000 * 64 * 4.0, 80.0, 10 * 64 * 4.0) == 5_200.0


def test_both_paths_read_one_table():
    """The live counter's modules and the trace rules hold the very same objects."""
    from rooflab.bench import torch_count, torch_flop_rules, torch_layer_rules
    from rooflab.ingest import torch_ops_backward, torch_ops_table
    from rooflab.workloads.torch_rules import flop, layer

    assert torch_count.PER_ELEMENT is torch_ops_table.PER_ELEMENT is flop.PER_ELEMENT
    assert torch_flop_rules.BACKWARD_PER_ELEMENT is torch_ops_backward.BACKWARD_PER_ELEMENT
    assert torch_layer_rules.batchnorm_backward_per_element is \
        torch_ops_backward.batchnorm_backward_per_element is layer.batchnorm_backward_per_element

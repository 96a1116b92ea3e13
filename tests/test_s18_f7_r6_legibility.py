"""Review s18 r6 (legibility) F2, F3, F4, F5, F7: one formatting rule per kind of number,
one RMSNorm FLOP rule, dead code gone, model/ below hardware/, a bounded ncu_flop cache."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from rich.console import Console

from rooflab import Ceiling, Kernel, Roof, analyze
from rooflab.bench.table import zoo_table

SRC = Path(__file__).resolve().parents[1] / "src" / "rooflab"


def _render(table) -> str:
    console = Console(width=160, record=True)
    console.print(table)
    return console.export_text()


# --- F2: the bench table uses units.fmt_pct / fmt_times -----------------------------------

def test_bench_table_formats_percent_and_ratios_as_every_other_table():
    # roof 1 TFLOP/s fp32, 100 GB/s. "slow": 7e5 FLOP in 1 ms = 0.7 GFLOP/s, its floor
    # max(7e5 / 1e12, 1e3 / 1e11) = 0.7 us: 0.07 % of the roof, measured/floor 1428.57
    # (1430x, 3 figures from 10 as every factor).
    # "huge": 1e4 FLOP, 1e3 B -> floor 1e-8 s; 25 ms is 2.5e6 x the floor; its best sample
    # 0.004 x the floor (a below-floor best).
    roof = Roof("toy", compute=(Ceiling(1e12, "fp32", "vector"),),
                memory=(Ceiling(1e11, level="DRAM"),))
    kernels = [Kernel("slow", flop={"fp32": 7e5}, bytes={"DRAM": 1e3}, seconds=1e-3),
               Kernel("huge", flop={"fp32": 1e4}, bytes={"DRAM": 1e3}, seconds=0.025,
                      meta={"best_floor_ratio": 0.004})]
    text = _render(zoo_table(analyze(roof, kernels)))
    slow = next(line for line in text.splitlines() if "slow" in line)
    huge = next(line for line in text.splitlines() if "huge" in line)
    assert "0.07 %" in slow and " 0 % " not in slow           # was '0%'
    assert "1430x" in slow and "1428.57x" not in slow
    # fmt_factor's rule from 10: whole numbers, exponent form only from 1e9 (units.fmt_times)
    assert "2500000x" in huge and "2500000.00x" not in huge  # was '2500000.00x', then '2.5e+06x'
    assert "0.00400x" in huge and "0.00x" not in huge        # was '0.00x'


def test_one_binary_byte_formatter():
    from rooflab.units import fmt_bytes_binary

    assert fmt_bytes_binary(0) == "0 B"
    assert fmt_bytes_binary(512) == "512 B"
    assert fmt_bytes_binary(48 * 1024) == "48 KiB"
    assert fmt_bytes_binary(1.5 * 2**20) == "1.5 MiB"
    assert fmt_bytes_binary(1000 * 2**20) == "1000 MiB"      # not '1e+03 MiB'
    assert fmt_bytes_binary(4 * 2**30) == "4 GiB"
    assert fmt_bytes_binary(12.3456 * 2**30) == "12.3 GiB"


def test_the_former_copies_use_it():
    from rooflab.cli import specs_tables
    from rooflab.probe import plateaus
    from rooflab.report import sweep_chart

    # a 48 KiB L1 in `specs`: was '0.0469 MiB'; memories from 1 GB up stay decimal GB
    assert specs_tables._bytes(48 * 1024) == "48 KiB"
    assert specs_tables._bytes(80e9) == "80 GB"
    # probe notes: 4 GiB was '4.1e+03 MiB', 512 B '0.5 KiB'
    assert plateaus.fmt_bytes(4 * 2**30) == "4 GiB"
    assert plateaus.fmt_bytes(512) == "512 B"
    # the sweep table: a 1000 MiB working set was '1e+03 MiB'
    assert sweep_chart._fmt(1000 * 2**20) == "1000 MiB"
    # no module keeps its own GiB/MiB/KiB ladder
    for path in SRC.rglob("*.py"):
        if path.name == "units.py":
            continue
        text = path.read_text()
        assert '("GiB", 1 << 30)' not in text and '("GiB", 2**30)' not in text, path
        assert 'f"{b / 2**20:.3g} MiB"' not in text, path


# --- F3: one RMSNorm rule, one LayerNorm constant -------------------------------------------

def test_ai_rmsnorm_and_the_torch_trace_rule_agree(capsys):
    from rooflab.bench.torch_layer_rules import fused_rms_norm_flop
    from rooflab.cli.main import main
    from rooflab.ingest.torch_ops_base import OpCall
    from rooflab.ingest.torch_ops_rmsnorm import RMSNORM_RULES

    # 4 rows of 2048: 4·8192 per element + 2·4 per row (eps, rsqrt) = 32,776
    assert main(["ai", "rmsnorm", "4", "2048", "--json"]) in (0, None)
    assert json.loads(capsys.readouterr().out)["flop"] == 32_776   # was 32,768
    call = OpCall("aten::_fused_rms_norm", ((4, 2048), None, (2048,), None),
                  ("float", "", "float", ""), ("", "[2048]", "", "1e-06"))
    assert RMSNORM_RULES[call.name](call).flop == 32_776
    torch = pytest.importorskip("torch")
    x, w = torch.randn(4, 2048), torch.randn(2048)
    fused = torch.ops.aten._fused_rms_norm.default
    assert fused_rms_norm_flop(fused, (x, [2048], w, 1e-6), {}) == 32_776


def test_ai_rmsnorm_matches_the_cpu_decomposition_live():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F

    from rooflab.bench.torch_count import FlopCounter
    from rooflab.workloads import ops

    x, w = torch.randn(4, 2048), torch.randn(2048)
    with FlopCounter() as c:
        F.rms_norm(x, (2048,), w, 1e-6)
    assert c.result.flop["fp32"] == ops.rmsnorm(4, 2048, "fp32").flop == 32_776


def test_layernorm_plain_constant_is_defined_once():
    defined = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id in (
                        "LAYERNORM_PLAIN_FLOP_PER_ELEMENT", "RMSNORM_FLOP_PER_ROW")
                    for t in node.targets):
                defined.append((path.relative_to(SRC).as_posix(), node.targets[0].id))
    assert sorted(defined) == [("workloads/ops.py", "LAYERNORM_PLAIN_FLOP_PER_ELEMENT"),
                               ("workloads/ops.py", "RMSNORM_FLOP_PER_ROW")]


# --- F4: dead code ---------------------------------------------------------------------------

def test_dead_code_is_gone():
    from rooflab import units
    from rooflab.cli import ai_args
    from rooflab.model import diagnose, occupancy, pipeline

    assert not hasattr(diagnose, "diagnose_kernel")
    assert not hasattr(ai_args, "_tile") and hasattr(ai_args, "_tile3")
    assert not hasattr(occupancy, "LIMITS")
    assert not hasattr(pipeline.PPStep, "heaviest")
    assert not hasattr(units, "positive")


# --- F5: model/ imports nothing from hardware/ ------------------------------------------------

def test_model_does_not_import_hardware():
    upward = []
    for path in (SRC / "model").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                mod = ("." * node.level) + (node.module or "")
                if mod.startswith("..hardware") or mod.startswith("rooflab.hardware"):
                    upward.append(f"{path.name}: {mod}")
            elif isinstance(node, ast.Import):
                upward += [f"{path.name}: {a.name}" for a in node.names
                           if a.name.startswith("rooflab.hardware")]
    assert upward == []


def test_smem_table_keeps_its_values_and_types():
    from rooflab.hardware import smem
    from rooflab.model.sm_limits import SmemLimits, SmLimits

    a100 = smem.sm_limits("8.0")
    assert isinstance(a100, SmLimits) and isinstance(a100.smem, SmemLimits)
    # CUDA guide: 8.0 164 KB per SM, 163 per block, 64 warps, 32 blocks, 64 K registers
    assert (a100.smem.per_sm_bytes, a100.smem.per_block_bytes) == (164 * 1024, 163 * 1024)
    assert (a100.max_warps, a100.max_blocks, a100.regs_per_sm) == (64, 32, 65536)


# --- F7: bounded caches in ncu_flop -----------------------------------------------------------

def test_ncu_flop_caches_are_bounded():
    from rooflab.ingest import ncu_flop

    assert ncu_flop._tensor_key.cache_info().maxsize == 4096
    # 10,000 launches, each with a metric name never seen before: nothing grows past the cap
    for i in range(10_000):
        ncu_flop.flop_counts({f"sm__made_up_{i}.sum": 1.0}, (8, 0))
    assert len(ncu_flop._plain) <= ncu_flop._PLAIN_MAX + 1
    assert ncu_flop._tensor_key.cache_info().currsize <= 4096
    # and the counts are still right: 1000 fp16 tensor ops + 10 FFMA (2 FLOP each)
    flop = ncu_flop.flop_counts({"sm__ops_path_tensor_src_fp16_dst_fp32.sum": 1000.0,
                                 "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": 10.0},
                                (8, 0))[0]
    assert flop == {"fp32": 20.0, "fp16": 1000.0}

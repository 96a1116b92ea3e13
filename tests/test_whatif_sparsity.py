"""whatif --sparsity 2:4 (seed 002: "should a fully connected layer be sparsified?"), checked
by hand: weights shrink to the kept half plus 2-bit positions, the math on tensor cores skips
the zero half, kernels without weights stay where they are."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup_roof
from rooflab.model.kernel import Kernel
from rooflab.model.whatif_weights import sparse_weight_ratio, sparsify


def test_the_compressed_format_keeps_half_plus_metadata():
    assert sparse_weight_ratio(2) == pytest.approx(9 / 16)     # fp16: (2 x 16 + 4) / 64 bits
    assert sparse_weight_ratio(1) == pytest.approx(5 / 8)      # fp8 / int8: (2 x 8 + 4) / 32


def test_a_weight_gemm_halves_its_math_and_shrinks_its_weights():
    a100 = lookup_roof("A100 80GB SXM")
    n = 4096
    gemm = Kernel("fc", flop={"fp16": 2.0 * n ** 3}, bytes={"DRAM": 3 * 2.0 * n * n},
                  seconds=1e-3, unit="tensor",
                  meta={"op": "matmul", "weight_bytes": 2.0 * n * n})
    add = Kernel("add", flop={"fp16": n * n}, bytes={"DRAM": 3 * 2.0 * n * n}, seconds=1e-4,
                 meta={"op": "elementwise"})
    w = sparsify(a100, [gemm, add])
    (_, fc), (_, add2) = w.moves
    assert fc.total_flop == pytest.approx(n ** 3)               # the zero half skipped
    # weights 1/3 of the bytes: 2/3 + 1/3 x 9/16
    assert fc.bytes["DRAM"] == pytest.approx(6.0 * n * n * (2 / 3 + 1 / 3 * 9 / 16))
    assert fc.meta["sparsity"] == "2:4"
    assert add2.bytes == add.bytes and add2.total_flop == add.total_flop
    # compute-bound at 1 ms: the same efficiency on half the math: about half the time
    assert fc.seconds == pytest.approx(gemm.seconds / 2, rel=0.05)


def test_cli_sparsity_on_an_llm_decode_step(tmp_path, capsys):
    doc = tmp_path / "d.json"
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "--context", "500", "--tpot-ms", "15",
                 "--json"]) == 0
    doc.write_text(capsys.readouterr().out)
    assert main(["whatif", str(doc), "--on", "T4", "--sparsity", "2:4", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    moves = {m["kernel"]: m for m in data["moves"]}
    # gate_proj is all weights at batch 1: its bytes part shrinks to 9/16 (launches stay)
    gate = moves["gate_proj"]
    assert gate["after_floor_s"] < gate["before_floor_s"]
    assert moves["rope"]["after_floor_s"] == pytest.approx(moves["rope"]["before_floor_s"])
    assert moves["embedding"]["after_floor_s"] == pytest.approx(
        moves["embedding"]["before_floor_s"])
    assert "2:4" in data["label"] and "9/16" in data["assumption"]
    assert main(["whatif", str(doc), "--on", "T4", "--sparsity", "1:2"]) == 2
    assert "--sparsity takes 2:4" in capsys.readouterr().err

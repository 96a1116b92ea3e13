"""`whatif --quantize` marks what it changed, by the rule --precision follows (session 31
hb): the weights alone change dtype (the activations and the math stay), so a name that
says the weights' old dtype is kept and marked '[weights old->new]'; a kernel whose
weights did not move, or whose name says no dtype, is left unmarked. Until s31 --quantize
marked nothing: 'gemv_4096x4096_fp16' with int4 weights still read fp16 weights.

And one reading of the weights' dtype for their bytes and their mark: vLLM's AWQ GEMM
('gemm_forward_4bit_cuda', 'awq': a weight-only int4 GEMM, as the advice and the share
words read it) was priced from its fp16 math precision, so --quantize int8 halved weights
the same line called 4-bit; int4 -> int8 doubles them.

Hand numbers (A100 80GB SXM, DRAM 2.039 TB/s, launch floor 5 us). `rooflab ai gemv 4096
4096 --dtype fp16`: 33,570,816 B, all weights by its kind (gemv: the weight share rule of
docs/whatif.md), timed 25 us (work 20 us after its launch). int4 weights: a quarter of the
bytes, 8,392,704 B, so 5 + 20 / 4 = 10 us. The AWQ GEMM at batch 1:
8,404,992 B (the int4 weights and 16 KiB of fp16 activations) in 12 us, every byte read as
weights by its AI; int8 weights: 2x the bytes, 5 + 7 x 2 = 19 us.
"""

from __future__ import annotations

import json

import pytest

from rooflab import load_roof
from rooflab.cli.main import main
from rooflab.model import Kernel
from rooflab.model.whatif_weights import quantize_weights

A100 = "A100 80GB SXM"
GEMV = {"name": "gemv_4096x4096_fp16", "flop": {"fp16": 33554432.0},
        "bytes": {"DRAM": 33570816.0}, "seconds": 25e-6,
        "meta": {"op": "gemv", "shape": {"m": 4096, "n": 4096, "dtype": "fp16"}}}
ADD = {"name": "add_fp16", "flop": {"fp16": 2 ** 24}, "bytes": {"DRAM": 3 * 2 ** 25},
       "seconds": 55e-6, "meta": {"op": "add"}}
Q_PROJ = {"name": "q_proj", "flop": {"fp16": 33554432.0}, "bytes": {"DRAM": 33570816.0},
          "seconds": 25e-6, "meta": {"op": "linear"}}
AWQ = ("void vllm::awq::gemm_forward_4bit_cuda_m16nXk32<128>(int, int, __half*, int*, "
       "__half*, int*, int, int, int, __half*)")


def _whatif(tmp_path, capsys, kernels, *args) -> dict:
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"schema_version": 1, "kernels": kernels}))
    capsys.readouterr()
    assert main(["whatif", str(path), "--on", A100, *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_quantize_marks_the_weights_a_name_says(tmp_path, capsys):
    d = _whatif(tmp_path, capsys, [GEMV, ADD, Q_PROJ], "--quantize", "int4")
    gemv, add, q = d["moves"]
    assert gemv["new_kernel"] == "gemv_4096x4096_fp16 [weights fp16->int4]"
    assert gemv["after_s"] == pytest.approx(5e-6 + 20e-6 / 4, 1e-6)      # 10 us
    assert add["new_kernel"] == "add_fp16"          # no weights moved: unmarked
    assert add["after_s"] == pytest.approx(55e-6)
    assert q["new_kernel"] == "q_proj"              # its name says no dtype
    assert "marked [old->new]" in d["assumption"]


def test_precision_then_quantize_reads_both_marks(tmp_path, capsys):
    d = _whatif(tmp_path, capsys, [GEMV], "--precision", "bf16", "-o",
                str(tmp_path / "w.json"))
    assert d["moves"][0]["new_kernel"] == "gemv_4096x4096_fp16 [fp16->bf16]"
    capsys.readouterr()
    assert main(["whatif", str(tmp_path / "w.json"), "--on", A100, "--quantize", "int8",
                 "--json"]) == 0
    q = json.loads(capsys.readouterr().out)
    assert q["moves"][0]["new_kernel"] == ("gemv_4096x4096_fp16 [fp16->bf16, "
                                           "weights bf16->int8]")


def test_a_weight_only_int4_name_is_read_as_int4_for_bytes_and_mark():
    k = Kernel(AWQ, {"fp16": 33554432.0}, {"DRAM": 8404992.0}, seconds=12e-6)
    w = quantize_weights(load_roof(A100), [k], "int8")
    ((_, new),) = w.moves
    assert new.name == AWQ + " [weights int4->int8]"
    assert new.bytes == {"DRAM": pytest.approx(2 * 8404992)}
    assert new.seconds == pytest.approx(5e-6 + 7e-6 * 2, 1e-6)      # 19 us
    assert "WIDER, not narrower" in w.assumption and "(int4)" in w.assumption
    # to int4, its own format: nothing moves and nothing is marked
    ((_, same),) = quantize_weights(load_roof(A100), [k], "int4").moves
    assert same.name == AWQ and same.bytes == {"DRAM": pytest.approx(8404992)}

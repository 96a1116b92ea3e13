"""model/opkind.py: one op-kind vocabulary, asked through named predicates (review 14b F3).

The kinds were six tuples matched by bare prefixes, none stripping the 'aten::' namespace:
`whatif --sparsity 2:4` left PyTorch's addmm (every biased nn.Linear in a torch trace),
aten::addmm and aten::mm unpruned while --quantize treated them as weights.
"""

from __future__ import annotations

import json

import pytest

from rooflab.hardware.resolve import load_roof
from rooflab.ingest.torch_trace import load_torch_trace
from rooflab.model.kernel import Kernel
from rooflab.model.opkind import (
    has_weights,
    is_gemm,
    is_matrix,
    is_streaming,
    kind_word,
    normal_kind,
    streams_weights,
)
from rooflab.model.whatif import quantize_weights
from rooflab.model.whatif_weights import sparsify, weight_share

PREDICATES = (is_matrix, is_gemm, streams_weights, has_weights, is_streaming)
# kind: (is_matrix, is_gemm, streams_weights, has_weights, is_streaming)
TABLE = {
    "mm":               (True, True, False, True, False),
    "addmm":            (True, True, False, True, False),    # nn.Linear: no 'add'
    "aten::addmm":      (True, True, False, True, False),    # namespace stripped
    "baddbmm":          (True, True, False, False, False),   # batched: attention (r8 F2)
    "linear":           (True, True, False, True, False),
    "gemv":             (False, False, True, True, True),    # streams its matrix
    "mul_mat_vec":      (False, False, True, True, True),    # llama.cpp's GEMV
    "conv2d":           (True, False, False, False, False),  # 'conv' and a digit
    "attention":        (True, False, False, False, False),
    "add":              (False, False, False, False, True),
    "relu_":            (False, False, False, False, True),  # in-place suffix
    "softmax_backward": (False, False, False, False, True),
    "decode":           (False, False, True, True, False),
}


@pytest.mark.parametrize("kind", TABLE)
def test_each_kind_answers_every_predicate(kind):
    assert tuple(p(kind) for p in PREDICATES) == TABLE[kind]


@pytest.mark.parametrize("kind", ["ATEN::AddMM", "torch.nn.functional.relu", "aten::mm",
                                  "prims::mul"])
def test_a_kind_is_normalised_once(kind):
    plain = normal_kind(kind)
    assert plain == plain.lower() and "::" not in plain and not plain.startswith("torch.")
    assert tuple(p(kind) for p in PREDICATES) == tuple(p(plain) for p in PREDICATES)


@pytest.mark.parametrize(("kind", "word"), [
    ("addmm", "addmm"), ("addbmm", "addbmm"), ("add.Tensor", "add"), ("expand", ""),
    ("mul_mat_vec_q4_0", "mul_mat_vec"), ("mul_mat_q", "mul_mat"), ("mul", "mul"),
    ("conv3d", "conv"), ("decode_step", "decode"), ("mmul", ""), ("gemv2t", "gemv")])
def test_words_match_whole_not_as_bare_prefixes(kind, word):
    assert kind_word(kind) == word


# --- the bug: 2:4 sparsity skipped addmm / aten::addmm / aten::mm -------------------------

A100 = load_roof("A100 SXM")
M, N_ = 64, 4096


def _gemm(op: str) -> Kernel:
    """A 64x4096x4096 fp16 GEMM with no shape: its kind alone says it has weights."""
    return Kernel(f"gemm_{op}", {"fp16": 2 * M * N_ * N_},
                  {"DRAM": 2 * (M * N_ + N_ * N_ + M * N_)}, seconds=100e-6,
                  meta={"op": op})


@pytest.mark.parametrize("op", ["mm", "addmm", "aten::addmm", "aten::mm", "linear"])
def test_sparsity_prunes_every_matrix_multiply_as_quantize_shrinks_it(op):
    k = _gemm(op)
    assert weight_share(k, None) == 1.0       # no shape: all weights by its kind
    sparse = sparsify(A100, [k]).moves[0][1]
    # fp16 2:4: two of four 2-byte values kept, plus 2 bits each: (2 x 2 + 0.5) / 8 = 9/16
    assert sparse.bytes["DRAM"] == pytest.approx(k.bytes["DRAM"] * 9 / 16)   # addmm: x1.000
    assert sparse.flop["fp16"] == pytest.approx(k.flop["fp16"] / 2)          # tensor cores
    quant = quantize_weights(A100, [k], "int4").moves[0][1]
    assert quant.bytes["DRAM"] == pytest.approx(k.bytes["DRAM"] / 4)        # 2 B -> 0.5 B


def test_sparsity_leaves_kernels_without_weights_alone():
    for op in ("add", "relu_", "softmax_backward", "attention", "conv2d", "baddbmm"):
        k = Kernel(op, {"fp16": 1e9}, {"DRAM": 1e8}, seconds=1e-3, meta={"op": op})
        assert sparsify(A100, [k]).moves[0][1].bytes == k.bytes


def test_sparsity_on_a_torch_trace_prunes_its_linear_layer(tmp_path):
    # the torch trace of tests/test_torch_trace.py (aten::linear -> aten::addmm -> its
    # kernel), at a size where bytes bind: x 64x4096 @ W^T 4096x4096 + bias, fp16
    def ev(name, ts, dur, ext, dims=None, types=None, cat="cpu_op"):
        args = {"External id": ext}
        if dims is not None:
            args.update({"Input Dims": dims, "Input type": types,
                         "Concrete Inputs": [""] * len(dims)})
        return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts,
                "dur": dur, "args": args}
    half = "c10::Half"
    events = [ev("aten::linear", 0, 100, 1, [[M, N_], [N_, N_], [N_]], [half] * 3),
              ev("aten::addmm", 10, 80, 2, [[N_], [M, N_], [N_, N_], [], []],
                 [half] * 3 + ["Scalar", "Scalar"]),
              ev("ampere_fp16_gemm", 200, 60, 2, cat="kernel")]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    (k,) = load_torch_trace(str(path)).kernels
    assert k.meta["op"] == "addmm"
    # A 64x4096, W 4096x4096, bias 4096, C 64x4096, 2 B each; the trace names no m/n/k,
    # so the kind says all weights, as --quantize already read it
    before = 2 * (M * N_ + N_ * N_ + N_ + M * N_)
    assert k.bytes["DRAM"] == before == 34_611_200
    (_, after), = sparsify(A100, [k]).moves
    assert after.bytes["DRAM"] == pytest.approx(before * 9 / 16)   # was 34,611,200 (x1.00)
    assert after.meta["sparsity"] == "2:4"

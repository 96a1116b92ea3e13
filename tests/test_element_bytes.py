"""element_dtype.element_bytes: one reader of a kernel's element size for every advice and
what-if path (review 14b F10).

Five helpers read it five ways: _narrower_storage took meta dtype before the shape's (the
opposite of the others), weight_size / shape_ai / dims_size / the GEMV matrix bytes never
read meta dtype, and six `except Exception` blocks also hid TypeErrors. The rule now: the
shape's dtype, then meta dtype, then the math precision; None where no one size holds.
"""

from __future__ import annotations

import pytest

from rooflab.hardware.resolve import load_roof
from rooflab.model.advice_fusion import _matrix_bytes
from rooflab.model.analysis import analyze
from rooflab.model.diagnose import diagnose
from rooflab.model.element_dtype import element_bytes, weight_bytes_per_element
from rooflab.model.kernel import Kernel
from rooflab.model.weight_traffic import shape_ai, weight_size
from rooflab.model.whatif_weights import _elementwise_ai

A100 = load_roof("A100")
N = 64

# (shape dtype, meta dtype) -> bytes per element of an fp32-math kernel
CASES = [
    (("bf16", None), 2.0),           # shape only
    ((None, "fp8"), 1.0),            # meta only: weight_size/shape_ai read 4 (fp32) before
    (("fp16", "fp32"), 2.0),         # both, disagreeing: the shape's (narrowing read 4)
    (("int32", None), 4.0),
    ((None, "torch.float64"), 8.0),  # torch's spelling
    (("complex128", None), None),    # two fp64 parts: the real formulas do not apply
    (("junk", None), 4.0),           # a name rooflab does not know: the math precision's
    ((None, None), 4.0),             # nothing named: the math precision's
]


def _kernel(shape_dtype, meta_dtype, flop=2.0 * N**3, op="matmul", name="k"):
    shape = {"m": N, "n": N, "k": N}
    if shape_dtype is not None:
        shape["dtype"] = shape_dtype
    meta = {"op": op, "shape": shape}
    if meta_dtype is not None:
        meta["dtype"] = meta_dtype
    return Kernel(name, {"fp32": flop}, {"DRAM": 1e6}, seconds=1e-3, meta=meta)


@pytest.mark.parametrize(("dtypes", "size"), CASES)
def test_every_reader_sees_one_element_size(dtypes, size):
    k = _kernel(*dtypes)
    assert element_bytes(k, "fp32") == size
    # shape_ai: 2 N^3 / (s x 3 N^2) = 2N / 3s
    cap = shape_ai(k, "fp32")
    assert (cap is None if size is None else cap == pytest.approx(2 * N / (3 * size)))
    # a GEMV's matrix, m x n elements
    matrix = _matrix_bytes(k)
    assert (matrix is None if size is None else matrix == pytest.approx(N * N * size))
    # the weights' size, with no weight_dtype or int4 name to say otherwise
    assert weight_size(k, "fp32")[0] == size
    assert weight_bytes_per_element(k, "fp32")[0] == size


@pytest.mark.parametrize(("dtypes", "size"), [c for c in CASES if c[1] is not None])
def test_whatif_streaming_test_uses_the_same_size(dtypes, size):
    # no kind: streaming when FLOP / bytes < 1 / s; just under and just over that AI
    below = _kernel(*dtypes, flop=0.99e6 / size, op="")
    above = _kernel(*dtypes, flop=1.01e6 / size, op="")
    assert _elementwise_ai(below) and not _elementwise_ai(above)


def test_complex_has_no_element_size_for_the_streaming_test():
    assert not _elementwise_ai(_kernel("complex128", None, flop=1.0, op=""))


def _narrowing(meta: dict) -> str:
    """The 'store the data in a narrower type' detail for a 1e8-byte copy with no FLOP."""
    k = Kernel("copy", {}, {"DRAM": 1e8}, seconds=1e-2, meta={"op": "copy", **meta})
    (d,) = diagnose(analyze(A100, [k]))
    (narrow,) = [a for a in d.advice if a.action == "store the data in a narrower type"]
    return narrow.detail


def test_narrower_storage_reads_the_shape_first_as_the_others_do():
    # shape fp16 (2 B), meta dtype fp32: the element is the shape's, 2 -> 1 byte (was 4 -> 2)
    detail = _narrowing({"dtype": "fp32", "shape": {"dtype": "fp16"}})
    assert detail.startswith("2 -> 1 bytes per element (fp16 -> fp8")
    assert _narrowing({"dtype": "float64"}).startswith("8 -> 4 bytes per element (fp64 -> fp32")


def test_a_weight_dtype_or_int4_name_sets_the_weight_size_not_the_element_size():
    k = Kernel("gemm", {"fp16": 1e9}, {"DRAM": 1e8},
               meta={"op": "matmul", "weight_dtype": "int8", "shape": {"dtype": "fp16"}})
    assert weight_bytes_per_element(k, "fp16") == (1.0, "weight dtype int8 (meta)")
    assert element_bytes(k, "fp16") == 2.0
    named = Kernel("lm_head gemm w4a16", {"fp16": 1e9}, {"DRAM": 1e8})
    assert weight_bytes_per_element(named, "fp16")[0] == 0.5
    junk = Kernel("gemm", {"fp16": 1e9}, {"DRAM": 1e8}, meta={"weight_dtype": "nf3"})
    assert weight_bytes_per_element(junk, "fp16") == (None, "")

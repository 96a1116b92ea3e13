"""Round 18: batching / int4 for a GEMM whose weights are half its bytes or more, offered
where the computed gain passes WEIGHT_MIN_GAIN (advice_memory), and a CountWarning that
points at the user's line in all three forms of rooflab.measure (review note).

Hand figures, A100 80GB SXM (fp16 tensor 312 TFLOP/s, DRAM 2.039 TB/s, ridge 153.0):
- a measured m 128, k = n = 4096 fp16 linear moving 37,748,736 B: weights 4096 x 4096 x 2 =
  33,554,432 B = 88.9 % (the shape's compulsory traffic would be 35,651,584 B, 94.1 %; the
  counted bytes hold 4,194,304 B of non-weights). AI = 2 x 128 x 4096^2 / 37,748,736 =
  113.8, memory-bound: 37,748,736 / 2.039e12 = 18.513 us (untimed: the floor).
  Batch 8: bytes 33,554,432 + 8 x 4,194,304 = 67,108,864 B (32.91 us), FLOP 8 x 4.295e9 =
  3.436e10 (110.13 us at 312 TFLOP/s): compute-bound, 8 x 18.513 / 110.13 = 1.345x per
  request (the slope alone would say 8 x 37.75 / 67.11 = 4.5x; the roof caps it).
  int4: 4,194,304 + 33,554,432 / 4 = 12,582,912 B (6.17 us) vs 4.295e9 / 312e12 =
  13.766 us: 18.513 / 13.766 = 1.345x. The 0.9 gate gave neither.
- bytes_split weights 50 / activations 50 at AI 10: batch 8 moves 0.5 + 8 x 0.5 = 4.5x the
  bytes for 8x the FLOP (AI 17.8, under the ridge): 8 / 4.5 = 1.778x; int4 (fp16 weights):
  bytes x (0.5 + 0.5 / 4) = 0.625: 1.6x. At 49 % weights: neither (no weight stream).
- 60 % weights at AI 150 (just under the ridge): batch 8 is compute-bound, 8 x (1e8 /
  2.039e12 = 49.04 us) / (8 x 1.5e10 / 312e12 = 384.6 us) = 1.020x; int4 0.55e8 B (26.97 us)
  vs 48.08 us of math: 1.020x; both under 1.05x, so neither is offered.
"""

from __future__ import annotations

import warnings

import pytest

import rooflab
from rooflab import load_roof
from rooflab.model import Kernel, analyze
from rooflab.model.advice import advise

A100 = load_roof("A100")
BATCH = "batch 8 requests per weight read"
INT4 = "store weights in int4 (dequantize on the fly)"


def _advice(kernel: Kernel) -> dict:
    a = analyze(A100, [kernel])
    return {x.action: x for x in advise(a.points[0], a.roof, kernel)}


def test_measured_m128_linear_at_88_9_percent_weights_gets_batching_and_int4():
    shape = {"m": 128, "n": 4096, "k": 4096, "dtype": "fp16"}
    k = Kernel("fc", {"fp16": 2.0 * 128 * 4096 * 4096}, {"DRAM": 37_748_736.0},
               provenance={"flop": "derived", "bytes": "counted"},
               meta={"op": "linear", "shape": shape})
    got = _advice(k)
    t0 = 37_748_736 / 2.039e12
    assert got[BATCH].speedup == pytest.approx(8 * t0 / (8 * 2 * 128 * 4096**2 / 312e12))
    assert got[BATCH].speedup == pytest.approx(1.345, abs=0.001)
    assert "weights are 88.9 % of the bytes" in got[BATCH].assumption
    assert got[BATCH].new_ai == pytest.approx(8 * 2 * 128 * 4096**2 / 67_108_864)   # 512
    assert got[INT4].speedup == pytest.approx(1.345, abs=0.001)
    assert got[INT4].new_ai == pytest.approx(2 * 128 * 4096**2 / 12_582_912)        # 341.3


def _split(weights: float, ai: float) -> Kernel:
    nbytes = 1e8
    return Kernel("proj", {"fp16": ai * nbytes}, {"DRAM": nbytes},
                  provenance={"flop": "derived", "bytes": "derived"},
                  meta={"op": "linear", "bytes_split": {"weights": weights * nbytes,
                                                        "activations": (1 - weights) * nbytes}})


def test_half_weights_is_enough_and_the_gain_decides():
    got = _advice(_split(0.5, 10.0))
    assert got[BATCH].speedup == pytest.approx(8 / 4.5)          # 1.778x
    assert got[INT4].speedup == pytest.approx(1 / 0.625)         # 1.6x
    got = _advice(_split(0.49, 10.0))
    assert BATCH not in got and INT4 not in got
    # near the ridge both would gain 1.020x: under WEIGHT_MIN_GAIN (1.05), not offered
    got = _advice(_split(0.6, 150.0))
    assert BATCH not in got and INT4 not in got


# --- CountWarning: the user's line in every form of measure() ------------------------------

torch_needed = pytest.mark.skipif(
    __import__("importlib").util.find_spec("torch") is None, reason="needs torch")


def _count_warnings(caught) -> list:
    return [w for w in caught if issubclass(w.category, rooflab.measuring.CountWarning)]


@torch_needed
def test_count_warning_points_at_the_callers_line_in_all_three_forms():
    import torch

    a = torch.randn(32, 32)   # a QR has no FLOP formula: CountWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rooflab.measure(torch.linalg.qr, a, plan="quick"); line_fn = _line()   # noqa: E702
    with warnings.catch_warnings(record=True) as caught_with:
        warnings.simplefilter("always")
        with rooflab.measure(name="qr"):
            torch.linalg.qr(a)
        line_with = _line() - 2

    @rooflab.measure(name="qr")
    def qr(x):
        return torch.linalg.qr(x)

    with warnings.catch_warnings(record=True) as caught_deco:
        warnings.simplefilter("always")
        qr(a); line_deco = _line()   # noqa: E702
    for found, line in ((caught, line_fn), (caught_with, line_with),
                        (caught_deco, line_deco)):
        ws = _count_warnings(found)
        assert len(ws) == 1
        assert ws[0].filename == __file__
        assert ws[0].lineno == line


def _line() -> int:
    import inspect
    return inspect.currentframe().f_back.f_lineno

"""whatif and advice read a kernel's weight share through one function (session 9).

whatif's own copy took every byte of a matrix kernel for a weight, even when its meta shape
says otherwise: --quantize int4 on a square 4096^3 fp16 GEMM (one third weights) shrank all
of its bytes 4x, where advice (and the hand count) shrink only B's third.
"""

from __future__ import annotations

import pytest

from rooflab.hardware.resolve import load_roof
from rooflab.model.advice_memory import weight_share as advice_share
from rooflab.model.kernel import Kernel
from rooflab.model.whatif import quantize_weights
from rooflab.model.whatif_weights import weight_share

N = 4096
SQUARE = Kernel("gemm", {"fp16": 2 * N**3}, {"DRAM": 3 * N * N * 2}, seconds=1e-3,
                meta={"op": "matmul", "shape": {"m": N, "n": N, "k": N, "dtype": "fp16"}})


def test_a_shaped_gemm_is_one_third_weights_in_both():
    # A (m x k), B (k x n, the weights), C (m x n), 2 bytes each: B is 1/3 of the bytes
    assert advice_share(SQUARE, "matmul", N / 3, "fp16")[0] == pytest.approx(1 / 3)
    assert weight_share(SQUARE, None) == pytest.approx(1 / 3)     # was 1.0


def test_int4_shrinks_only_the_weights_of_a_shaped_gemm():
    after = quantize_weights(load_roof("h100"), [SQUARE], "int4").moves[0][1]
    # 2/3 of 100.7 MB stay, the weights' 33.6 MB become 8.4 MB: 75.5 MB (was 25.2 MB)
    assert after.bytes["DRAM"] == pytest.approx(3 * N * N * 2 * (2 / 3 + 1 / 3 / 4))


def test_a_split_naming_activations_only_has_no_weights():
    k = Kernel("rope", {"fp16": 1e6}, {"DRAM": 4e6},
               meta={"op": "matmul", "bytes_split": {"activations": 3e6, "kv": 1e6}})
    assert advice_share(k, "matmul", 0.25, "fp16") == (0.0, "meta bytes_split")
    assert weight_share(k, None) == 0.0

"""advice_memory.reuse_limit: why tiling cannot raise a kernel's AI, in three answers, and the
slope words that follow from each (review 14b F11).

A yes/no "reuses data" returned one False both for a weight-streaming GEMV and for a GEMM
already at its shape's compulsory AI, so a square 256^3 GEMM was told "each weight is used
once per request": each element of B is used 256 times, and B is a third of its bytes.
"""

from __future__ import annotations

import pytest

import rooflab
from rooflab.model.diagnose import diagnose

H100 = rooflab.load_roof("H100")


def _matmul(m: int, n: int, k: int) -> rooflab.Kernel:
    """What `rooflab ai matmul M N K --dtype fp16 --json` writes: compulsory fp16 bytes."""
    return rooflab.Kernel(f"matmul_{m}x{n}x{k}_fp16", {"fp16": 2.0 * m * n * k},
                          {"DRAM": 2.0 * (m * k + k * n + m * n)}, unit="tensor",
                          provenance={"flop": "derived", "bytes": "derived"},
                          meta={"op": "matmul",
                                "shape": {"m": m, "n": n, "k": k, "dtype": "fp16"}})


def _slope(k: rooflab.Kernel) -> str:
    (d,) = diagnose(rooflab.analyze(H100, [k]))
    (slope,) = [x for x in d.distances if x.name == "along slope"]
    return slope.words


def _limit(k: rooflab.Kernel) -> str:
    from rooflab.model.advice_tiling import reuse_limit
    ai = k.total_flop / k.bytes["DRAM"]
    return reuse_limit("matmul", k, ai, "fp16")


def test_square_gemm_slope_words_say_compulsory_not_once_per_request():
    k = _matmul(256, 256, 256)
    # 2 x 256^3 / (3 x 256^2 x 2 B) = 85.3 FLOP/B, the shape's compulsory AI already
    assert k.total_flop / k.bytes["DRAM"] == pytest.approx(256 / 3)
    words = _slope(k)
    assert "each weight is used once per request" not in words                # was said
    assert "Batching (more requests per weight read)" not in words
    assert "its traffic is already compulsory (each operand moved once)" in words
    assert "Only a larger problem per call, fusion with a neighbour" in words


def _tile_offered(k: rooflab.Kernel) -> bool:
    """Whether advise() offers the tiling lever (tiling_advice decides, by its own rule)."""
    from rooflab.model.advice import advise
    from rooflab.model.machine import machine_of, words

    tile = words(machine_of(H100), "tile")[0]
    (p,) = rooflab.analyze(H100, [k]).points
    return any(a.action == tile for a in advise(p, H100, k))


def test_square_gemm_reuse_is_limited_by_compulsory_traffic():
    k = _matmul(256, 256, 256)
    assert _limit(k) == "compulsory"
    # tiling is not offered either: asked of advise(), not of reuse_limit again (a
    # test-only reuses_data wrapper checked reuse_limit, review s28 R1 #14). As a
    # profiler gives it: timed at 100 us (far above the 5 us launch floor, so the kernel's
    # own levers are advised), bytes measured (counted bytes are compulsory ones)
    timed = k.with_(seconds=1e-4, provenance={"flop": "measured", "bytes": "measured"})
    assert not _tile_offered(timed)
    # the same GEMM moving 2x its compulsory bytes (operands re-read) has room: AI
    # 85.3 / 2 = 42.7 FLOP/B, under the shape's 85.3, so the lever is offered
    assert _tile_offered(timed.with_(bytes={"DRAM": 2 * k.bytes["DRAM"]}))


def test_gemv_shaped_and_weight_dominated_gemms_keep_the_weight_words():
    # m = 1: a GEMV; m = 16: 99.2 % weights (review 13v F-E): batching is their lever
    for m in (1, 16):
        k = _matmul(m, 4096, 4096)
        assert _limit(k) == "streams_weights"
        words = _slope(k)
        assert ("Batching (more requests per weight read) and fewer bytes per weight "
                "(quantization) climb") in words
        assert "tiling and fusion cannot (each weight is used once per request)" in words


def test_decode_kind_streams_weights_and_a_counted_gemm_is_tileable():
    from rooflab.model.advice_tiling import reuse_limit
    assert reuse_limit("decode") == "streams_weights"
    assert reuse_limit("mul_mat_vec_q4_0") == "streams_weights"
    # a GEMM with no shape whose AI is far from a GEMV's: tiles may still cut its bytes
    g = rooflab.Kernel("gemm", {"fp16": 1e9}, {"DRAM": 1e8}, seconds=1e-3,
                       meta={"op": "matmul"})
    assert reuse_limit("matmul", g, 10.0, "fp16") == "tileable"
    assert "data reuse (tiling), fusion" in _slope(g)

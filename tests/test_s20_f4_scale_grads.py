"""`rooflab scale --grad-dtype fp32`: the replica's memory counts the gradients at 4 B per
parameter (review s20 r5 F5). hidden 8192, 80 blocks: 12 x 8192^2 x 80 = 64.4 G
parameters; bf16 weights 2 B + fp32 gradients 4 B = 6 B x 64.4 G = 386.5 GB, not the
4 B x 64.4 G = 258 GB of bf16 gradients; Adam: 2 + 4 + 12 = 18 B/parameter."""

from __future__ import annotations

import pytest

from rooflab.cli.scale_memory import memory_line, memory_warning, replica_memory

PARAMS = 12 * 8192**2 * 80


def test_fp32_gradients_are_counted_at_4_bytes():
    m = replica_memory(PARAMS, "bf16", "H100 SXM", "fp32")
    assert m.weights_grads_bytes == pytest.approx(6 * PARAMS)
    assert m.weights_grads_bytes == pytest.approx(386.5e9, rel=1e-3)
    assert m.adam_bytes == pytest.approx(18 * PARAMS)
    line = memory_line(m, "bf16")
    assert "weights + gradients 387 GB (bf16 weights, fp32 gradients)" in line
    assert "18 B/parameter" in line
    assert "387 GB > the device's 80 GB" in memory_warning(m)


def test_gradients_of_the_weights_type_keep_zeros_16_bytes():
    for grads in (None, "bf16"):
        m = replica_memory(PARAMS, "bf16", "H100 SXM", grads)
        assert m.weights_grads_bytes == pytest.approx(4 * PARAMS)
        assert m.adam_bytes == pytest.approx(16 * PARAMS)
        assert "(bf16), with Adam's state 1.03 TB (16 B/parameter, ZeRO)" in memory_line(m, "bf16")
    fp32 = replica_memory(PARAMS, "fp32", "H100 SXM", "fp32")   # 4 + 4 + 8
    assert fp32.adam_bytes == pytest.approx(16 * PARAMS)
    assert fp32.weights_grads_bytes == pytest.approx(8 * PARAMS)

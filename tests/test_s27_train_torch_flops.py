"""`rooflab train`'s matmul FLOP of one step equal PyTorch's FlopCounterMode on a real
forward + loss.backward() of a tiny random Llama (benchmarks/train_validation.py (a)).

Both sides count 2 FLOP per multiply-add of the same shapes (X W, Q K^T, P V and each
one's two backward matmuls), so every module's FLOP must agree exactly: the sums are of
integers far below 2^53, and 1e-9 only leaves room for float summation order."""

from __future__ import annotations

import pytest
from benchmark_script import load_benchmark

pytest.importorskip("torch")
pytest.importorskip("transformers")



@pytest.fixture(scope="module")
def bench():
    return load_benchmark("train_validation")


@pytest.fixture(scope="module")
def flops(bench, tmp_path_factory):
    shape = bench.TINY
    model = bench.build_model(shape)
    config = bench.write_config(model, tmp_path_factory.mktemp("tiny-llama"))
    # the FLOP do not depend on the roof: a catalog device spares a probe
    train = bench.rooflab_train(config, "H100", batch=shape["batch"],
                                seq=shape["seq"])["train"]
    rooflab, rest = bench.rooflab_flop_by_module(train)
    torch_ = bench.torch_flop_by_module(model, batch=shape["batch"], seq=shape["seq"])
    return shape, train, rooflab, rest, torch_


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_every_matmul_module_agrees_with_flopcountermode(bench, flops):
    shape, _, rooflab, _, torch_ = flops
    for k in bench.LINEARS + ("attention",):
        assert rooflab[k] == pytest.approx(torch_[k], rel=bench.FLOP_REL_TOL), k
    # by hand: q_proj's forward 2 m k n, backward dX and dW as much again each: 6 m k n
    # over the layers (m = 2 x 32 tokens, k = n = 64)
    m, h = shape["batch"] * shape["seq"], shape["hidden"]
    assert torch_["q_proj"] == 6 * m * h * h * shape["layers"] == 3_145_728
    # eager attention's dense Q K^T and P V (heads 4, head_dim 16, 32 x 32 scores per
    # sequence), forward and twice that backward: 3 x 2 x 2 x (2 x 4 x 32 x 32 x 16)
    dense = shape["batch"] * shape["heads"] * shape["seq"] ** 2 * (h // shape["heads"])
    assert rooflab["attention"] == 3 * 2 * 2 * dense * shape["layers"]


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_the_totals_agree_and_the_rest_is_what_flopcountermode_skips(bench, flops):
    _, train, rooflab, rest, torch_ = flops
    # every FLOP FlopCounterMode counts lies in a listed module: transformers 5.x builds
    # the rotary angles element-wise (positions[..., None] * inv_freq; 4.x used a small
    # matmul there, which would land in `other`)
    assert torch_["other"] == rooflab["other"] == 0
    assert sum(rooflab.values()) == pytest.approx(sum(torch_.values()), rel=bench.FLOP_REL_TOL)
    # counted_flop = the matmuls + norms, element-wise, softmax, loss, embedding, AdamW
    assert train["counted_flop"] == pytest.approx(sum(rooflab.values()) + rest, rel=1e-12)
    assert 0 < rest < 0.1 * train["counted_flop"]

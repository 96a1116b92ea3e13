"""Counting PyTorch code: FLOP through FlopCounterMode plus rooflab's per-element table,
compulsory bytes from each dispatched op's tensors; measure() in all three forms."""

from __future__ import annotations

import pytest

import rooflab
from rooflab.workloads import ops

torch = pytest.importorskip("torch")
from rooflab.bench.torch_count import FlopCounter, count_call, torch_precision  # noqa: E402


def count(fn, *args, **kwargs):
    return count_call(fn, args, kwargs)[1]


def test_mm_hand_calculation():
    a, b = torch.randn(64, 32), torch.randn(32, 16)
    c = count(torch.mm, a, b)
    assert c.flop == {"fp32": 2 * 64 * 32 * 16}
    assert c.bytes == 4 * (64 * 32 + 32 * 16 + 64 * 16)
    assert c.ops[0].flop_source == "FlopCounterMode"
    # the same numbers as the analytic count
    ref = ops.matmul(64, 16, 32, "fp32")
    assert (sum(c.flop.values()), c.bytes) == (ref.flop, ref.bytes)


def test_add_hand_calculation():
    n = 1000
    x, y = torch.randn(n), torch.randn(n)
    c = count(lambda: x + y)
    assert c.flop == {"fp32": n} and c.bytes == 12 * n
    assert c.ops[0].flop_source == "per-element table"


def test_same_tensor_is_read_once_and_views_move_nothing():
    x = torch.randn(100, 10)
    c = count(lambda: x * x)
    assert c.bytes == 8 * 1000                        # x read once, result written once
    c = count(lambda: x.t().reshape(-1))             # a copy of the transposed view
    names = [r.op for r in c.ops]
    assert "aten.t" not in names                      # the view itself is free


def test_in_place_and_out_variants():
    n = 500
    x, y, z = torch.randn(n), torch.randn(n), torch.empty(n)
    c = count(lambda: x.add_(y))
    assert c.bytes == 12 * n and c.flop == {"fp32": n}     # x read + written, y read
    c = count(lambda: torch.add(x, y, out=z))
    assert c.bytes == 12 * n and c.flop == {"fp32": n}     # z written, not read


def test_fp64_counts_under_fp64():
    x = torch.randn(256, dtype=torch.float64)
    c = count(lambda: torch.exp(x))
    assert c.flop == {"fp64": 256} and c.bytes == 16 * 256


def test_softmax_and_layernorm_follow_the_ops_conventions():
    x = torch.randn(8, 64)
    c = count(lambda: torch.softmax(x, dim=-1))
    ref = ops.softmax(8, 64, "fp32")
    assert sum(c.flop.values()) == ref.flop == 4 * 8 * 64
    assert c.bytes == ref.bytes
    w, b = torch.ones(64), torch.zeros(64)
    c = count(lambda: torch.nn.functional.layer_norm(x, (64,), w, b))
    assert sum(c.flop.values()) == ops.layernorm(8, 64, "fp32").flop == 7 * 8 * 64
    c = count(lambda: torch.nn.functional.layer_norm(x, (64,)))
    assert sum(c.flop.values()) == 5 * 8 * 64


def test_comparisons_count_zero_and_movement_is_not_uncounted():
    x = torch.randn(100)
    c = count(lambda: torch.relu(x))
    assert c.flop == {} and c.bytes == 800 and c.uncounted == ()
    assert c.ops[0].flop_source == "comparison"
    c = count(lambda: torch.sort(x))
    assert c.flop == {} and c.bytes == 400 + 400 + 800    # values in, values + int64 idx out
    assert c.ops[0].flop_source == "movement"


def test_fft_follows_5n_log2n():
    x = torch.randn(4, 1024, dtype=torch.complex64)
    c = count(lambda: torch.fft.fft(x))
    assert c.flop == {"fp32": 4 * 5 * 1024 * 10}
    assert c.bytes == 2 * 4 * 1024 * 8
    r = count(lambda: torch.fft.rfft(torch.randn(1024)))
    assert sum(r.flop.values()) == pytest.approx(2.5 * 1024 * 10)


def test_unknown_ops_are_listed_as_uncounted():
    x = torch.randn(50)
    c = count(lambda: torch.special.bessel_j0(x))
    assert c.flop == {} and c.uncounted == ("aten.special_bessel_j0",)
    assert c.meta()["uncounted_ops"] == ["aten.special_bessel_j0"]


def test_linear_model_counts_matmul_and_bias():
    lin = torch.nn.Linear(32, 16)
    x = torch.randn(8, 32)
    with torch.no_grad():
        c = count(lin, x)
    assert sum(c.flop.values()) == 2 * 8 * 32 * 16           # addmm: the bias add not counted
    assert c.bytes == 4 * (8 * 32 + 32 * 16 + 16 + 8 * 16)
    assert c.summary()["aten.addmm"]["calls"] == 1


def test_torch_precision_names():
    assert torch_precision(torch.bfloat16) == "bf16"
    assert torch_precision(torch.complex128) == "fp64"
    assert torch_precision(torch.int64) == "int32"


def test_measure_counts_a_torch_callable():
    a, b = torch.randn(64, 32), torch.randn(32, 16)
    k = rooflab.measure(torch.mm, a, b, plan="quick")
    assert k.name == "mm"
    assert dict(k.flop) == {"fp32": 2 * 64 * 32 * 16}
    assert dict(k.bytes) == {"DRAM": 4 * (64 * 32 + 32 * 16 + 64 * 16)}
    assert dict(k.provenance) == {"flop": "derived", "bytes": "derived", "seconds": "measured"}
    assert k.meta["ops"]["aten.mm"]["calls"] == 1 and k.meta["device"] == "cpu"


def test_measure_mixes_given_and_counted():
    x, y = torch.randn(1000), torch.randn(1000)
    k = rooflab.measure(torch.add, x, y, bytes={"L2": 5.0}, plan="quick")
    assert dict(k.flop) == {"fp32": 1000.0} and dict(k.bytes) == {"L2": 5.0}
    assert dict(k.provenance)["flop"] == "derived" and dict(k.provenance)["bytes"] == "given"


def test_measure_without_torch_ops_asks_for_counts():
    with pytest.raises(rooflab.RooflabError, match="dispatched no PyTorch ops.*flop="):
        rooflab.measure(lambda: sum(range(10)), plan="quick")


def test_context_manager_counts_the_ops_inside():
    a, b = torch.randn(64, 32), torch.randn(32, 16)
    with rooflab.measure(name="step") as m:
        c = torch.mm(a, b)
        c + 1.0
    k = m.kernel
    assert dict(k.flop) == {"fp32": 2 * 64 * 32 * 16 + 64 * 16}
    assert dict(k.bytes) == {"DRAM": 4 * (64 * 32 + 32 * 16 + 64 * 16) + 4 * 2 * 64 * 16}
    assert k.meta["timing_includes_counting"] is True and k.seconds > 0


# the counted calls may or may not run under 100 µs; the short-run warning is tested elsewhere
@pytest.mark.filterwarnings("ignore::rooflab.measuring.TimingWarning")
def test_decorator_counts_each_call():
    @rooflab.measure()
    def double(x):
        return x + x

    double(torch.randn(100))
    double(torch.randn(300))
    k = double.kernel
    assert k.calls == 2 and dict(k.flop) == {"fp32": 400.0}
    assert dict(k.bytes) == {"DRAM": 8 * 400.0}


def test_counter_is_reusable_and_records_nothing_outside():
    counter = FlopCounter()
    x = torch.randn(10)
    with counter:
        x * 2
    x * 3                                             # outside: not recorded
    assert len(counter.result.ops) == 1
    with counter:
        x - 1
        x - 2
    assert len(counter.result.ops) == 2               # a fresh count each time

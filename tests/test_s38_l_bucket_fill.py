"""Session 38 L: gradient buckets filled a run at a time, not a tensor at a time.

model/ddp_ready.filled looped once per tensor of a train JSON's meta tensor_runs ([bytes,
count] runs), and train_comm._runs took any count >= 1: a hand-edited run of 1e9 tensors
held `rooflab whatif t.json --hardware H200` for minutes (1e7: 2.4 s). A run now fills
whole buckets by arithmetic, with the same buckets as the per-tensor loop (kept below as
the reference), and a file past 1e7 tensors is not of the shape: its row's own bucket
count times it, as a count of 0 does.
"""

from __future__ import annotations

import random
import signal

import pytest

from rooflab.model.ddp_ready import filled
from rooflab.model.train_comm import _runs

MIB = 1024 * 1024


def per_tensor(runs, limits, rule="ddp"):
    """The session-37/38 loop, tensor by tensor: the rule the bulk fill must keep."""
    out, size, done = [], 0.0, 0.0
    for b, count in runs:
        for _ in range(count):
            cap = limits[min(len(out), len(limits) - 1)]
            if rule == "deepspeed" and size > 0 and size + b > cap:
                out.append((size, done + b))
                size = 0.0
            size += b
            done += b
            if rule == "ddp" and size >= cap:
                out.append((size, done))
                size = 0.0
    return tuple(out + ([(size, done)] if size > 0 else []))


@pytest.fixture
def deadline():
    """Fail, not hang, where a fill goes tensor by tensor (old: minutes for 1e9)."""
    def stop(*_):
        raise TimeoutError("filled() took over 10 s")
    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("rule", ["ddp", "deepspeed"])
def test_same_buckets_as_the_per_tensor_loop(rule):
    """3000 random runs (sizes 1-400 bytes, 1-30 in a row; 1-3 limits of 1-64 bytes, so a
    tensor may pass, meet or fall short of the cap): every bucket's bytes and launch point
    equal, integer bytes so both sums are exact."""
    rng = random.Random(38)
    for _ in range(3000):
        runs = tuple((float(rng.choice([1, 2, 3, 5, 8, 10, 16, 25, 40, 100]) *
                            rng.choice([1, 1, 4])), rng.randint(1, 30))
                     for _ in range(rng.randint(1, 6)))
        limits = tuple(float(rng.choice([1, 5, 10, 16, 25, 50, 64]))
                       for _ in range(rng.randint(1, 3)))
        assert filled.__wrapped__(runs, limits, rule) == per_tensor(runs, limits, rule)


def test_a_billion_small_tensors_fill_in_bulk(deadline):
    """lm_head's 262,144,000 B alone past the first 1 MiB, then 1e9 tensors of 8192 B
    under 25 MiB = 26,214,400 B = 3200 x 8192: 1e9 / 3200 = 312,500 buckets of exactly 25
    MiB, 312,501 in all; the last launched after all 262,144,000 + 8192e9 B.
    Old: tensor by tensor, minutes (the alarm stops it at 10 s)."""
    got = filled.__wrapped__(((262144000.0, 1), (8192.0, 10**9)), (1.0 * MIB, 25.0 * MIB))
    assert len(got) == 312501
    assert got[0] == (262144000.0, 262144000.0)
    assert got[-1] == (25.0 * MIB, 262144000.0 + 8192e9)


def test_deepspeed_closes_before_the_tensor_that_would_pass(deadline):
    """1e9 tensors of 8192 B under 1e9 B: a bucket takes floor(1e9 / 8192) = 122,070
    (999,997,440 B; one more, 1,000,005,632 B, passes), launched at the next one's hook;
    1e9 = 8192 x 122,070 + 2,560, so 8192 full buckets and the last of 2,560 x 8192 =
    20,971,520 B. Old: minutes."""
    got = filled.__wrapped__(((8192.0, 10**9),), (1e9,), "deepspeed")
    assert len(got) == 8193
    assert got[0] == (999997440.0, 999997440.0 + 8192)
    assert got[-1] == (20971520.0, 8192e9)


def test_a_count_past_any_model_is_not_of_the_shape():
    """1e7 tensors in all is kept (an MoE has tens of thousands); 1e9 is a hand edit: None,
    so the row's own bucket count times it, as a count of 0 does. Old: the runs as given."""
    assert _runs([[8192.0, 10**7]]) == [(8192.0, 10**7)]
    assert _runs([[262144000.0, 1], [90177536.0, 10**9]]) is None
    assert _runs([[8192.0, 0]]) is None

"""Review s20 r3 F7: a sample's call count came from the best of 3 single calls; on a loaded
host a single call after a barrier took 89 us while back to back each took 2.5 ms, so 112
calls made 0.28 s samples against a 10 ms plan and the 3 s budget went to 1 KiB. The first
sample now re-plans the others. A fake clock: no process is started."""

from __future__ import annotations

import pytest

from rooflab.probe.comm import collectives
from rooflab.probe.comm.collectives import get_plan, sweep

KiB, MiB = 1 << 10, 1 << 20
FRESH_S, BUSY_S = 89e-6, 2.5e-3      # per call: right after a barrier, back to back
LINK = 1e9                            # B/s on top of the per-call cost


class LoadedComm:
    """One rank whose calls are fast right after a barrier and slow back to back (the
    other rank is descheduled between calls on a loaded host)."""

    world = 2

    def __init__(self):
        self.t, self.fresh = 0.0, False

    def clock(self):
        return self.t

    def barrier(self):
        self.fresh = True

    def sync(self):
        pass

    def agree_max(self, values):
        return list(values)


@pytest.fixture
def loaded(monkeypatch):
    comm = LoadedComm()

    def fake_op(c, collective, size, pair=None):
        def op():
            c.t += (FRESH_S if c.fresh else BUSY_S) + size / LINK
            c.fresh = False
        return op, size
    monkeypatch.setattr(collectives, "make_op", fake_op)
    return comm


def test_first_sample_replans_the_rest(loaded):
    plan = get_plan("quick")       # 10 ms samples, 5 of them, 3 s budget, x4 sizes
    res = sweep(loaded, "send_recv", plan)
    row = res.rows[0]
    assert row.nbytes == KiB
    # singles: 89 us + 1024 B / 1 GB/s = 90.0 us -> round(0.01 / 90.0e-6) = 111 calls
    one = FRESH_S + KiB / LINK
    first_iters = round(plan.sample_s / one)
    assert first_iters == 111 and row.first_iters == 111
    # first sample: one fresh call and 110 back to back, per call
    busy = BUSY_S + KiB / LINK
    first = (one + (first_iters - 1) * busy) / first_iters
    assert row.samples[0] == pytest.approx(first)
    # 0.275 s, 27x the plan: the other four get round(0.01 / 2.478 ms) = 4 calls
    assert row.iters == round(plan.sample_s / first) == 4
    assert row.samples[1] == pytest.approx((one + 3 * busy) / 4)
    assert res.to_dict()["rows"][0]["first_sample_iters"] == 111
    # the samples of 1 KiB took 0.275 + 4 x 7.6 ms = 0.31 s, not 5 x 0.275 = 1.38 s
    timed = row.samples[0] * row.first_iters + sum(s * row.iters for s in row.samples[1:])
    assert timed == pytest.approx(0.2752 + 4 * 4 * row.samples[1], rel=1e-3)
    assert timed < 0.35


def test_the_budget_reaches_the_bandwidth_sizes(loaded):
    # At 1 GB/s n_1/2 = 2.5 ms x 1 GB/s = 2.5 MB: the sizes above it say the bandwidth.
    # Before, every size planned from 89 us singles ran ~28x long and the 3 s budget was
    # spent by 64 KiB (the reviewer's send/recv stopped there); now 16 MiB is measured.
    res = sweep(loaded, "send_recv", get_plan("quick"))
    sizes = [r.nbytes for r in res.rows]
    assert max(sizes) >= 16 * MiB, (sizes, res.stopped)


def test_a_sample_on_plan_is_not_replanned(monkeypatch):
    comm = LoadedComm()

    def steady(c, collective, size, pair=None):
        def op():
            c.t += 1e-3          # 1 ms a call, after a barrier or not
        return op, size
    monkeypatch.setattr(collectives, "make_op", steady)
    plan = get_plan("quick")
    row = sweep(comm, "all_reduce", plan).rows[0]
    assert row.iters == 10 and row.first_iters == 0      # 10 x 1 ms = the 10 ms plan
    assert "first_sample_iters" not in sweep(comm, "all_reduce", plan).to_dict()["rows"][0]

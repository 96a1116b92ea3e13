"""s24 fixer fB: Ctrl-C in the CPU probe (review s24 r3 F2, F3). An interrupted probe_cpu
leaves no arrays alive through a kept traceback (IPython's sys.last_traceback), and the
DRAM pool's first touch runs in chunks, so a pending Ctrl-C is handled between them."""

from __future__ import annotations

import gc
import sys
import traceback
import weakref

import numpy as np
import pytest

from rooflab.probe.cpu import bandwidth as bw

numba = pytest.importorskip("numba")


def _interrupted_probe(monkeypatch, error: BaseException):
    """probe_cpu whose measurement raises `error` inside a kernel's closure over pool rows
    (as bandwidth.measure_stream's `call`); the weakrefs to the pool and its buffer, and
    the traceback a caller keeps (IPython's sys.last_traceback)."""
    from rooflab.probe.cpu import suite

    refs = []

    def fake_probe(*a, **kw):
        pool = bw.ArrayPool(2**20)
        rows = pool.rows(0, 1, 1024)
        refs.extend((weakref.ref(pool), weakref.ref(pool._rows[0])))

        def call(reps):   # a closure: its cells outlive a cleared frame (3.11's f_func)
            rows[0, 0] = reps
            raise error

        call(1)

    monkeypatch.setattr(suite, "_probe", fake_probe)
    try:
        suite.probe_cpu("quick", 1)
    except BaseException:   # noqa: BLE001  (what IPython does)
        kept = sys.exc_info()[2]
    gc.collect()
    return [r() for r in refs], kept


def test_an_interrupted_probe_leaves_no_arrays_in_its_traceback(monkeypatch):
    # was: the frames of the kept traceback held the pool (1.1 GB after a quick probe's
    # Ctrl-C in IPython) until another exception replaced sys.last_traceback
    alive, kept = _interrupted_probe(monkeypatch, KeyboardInterrupt())
    assert alive == [None, None]
    assert "fake_probe" not in "".join(traceback.format_tb(kept))   # nothing below


def test_a_probe_error_leaves_no_arrays_either(monkeypatch):
    from rooflab.errors import ProbeError

    alive, _ = _interrupted_probe(monkeypatch, ProbeError("too little memory"))
    assert alive == [None, None]


def test_a_bug_keeps_its_traceback_for_the_report(monkeypatch):
    # an internal error's traceback still names where it happened (the CLI prints it);
    # its frames' locals are cleared, the closure's cells are not
    alive, kept = _interrupted_probe(monkeypatch, ZeroDivisionError("bug"))
    text = "".join(traceback.format_tb(kept))
    assert "in fake_probe" in text and "in call" in text


class _Clock:
    """A clock each par_fill call advances by `per_call` seconds."""

    def __init__(self, per_call: float):
        self.t, self.per_call = 0.0, per_call

    def __call__(self) -> float:
        return self.t


def _recording_fill(monkeypatch, clock: _Clock):
    from rooflab.probe.cpu import kernels as K

    calls = []

    def fill(a, value):
        calls.append((a.shape, a.ctypes.data))
        a[...] = value
        clock.t += clock.per_call
        return a.shape[0]

    monkeypatch.setattr(K, "par_fill", fill)
    return calls


def test_first_touch_writes_a_large_row_in_4_mib_chunks(monkeypatch):
    # was: one par_fill over the whole (threads, cap) array: 5-15 s on a loaded VM, and
    # Python handles Ctrl-C only when the native call returns
    clock = _Clock(0.15)   # each call near TOUCH_CALL_S (0.1 s): the chunks stay 4 MiB
    calls = _recording_fill(monkeypatch, clock)
    rows = np.zeros((2, 18 * 2**20 // 8))          # 18 MiB a row
    assert bw.first_touch(rows, 3.0, clock=clock) is rows
    mi = 2**20 // 8                                 # elements in 1 MiB of float64
    assert [shape for shape, _ in calls] == [(2, 4 * mi)] * 4 + [(2, 2 * mi)]
    assert [ptr - rows.ctypes.data for _, ptr in calls] == [0, 4 * 2**20, 8 * 2**20,
                                                            12 * 2**20, 16 * 2**20]
    assert (rows == 3.0).all()
    calls.clear()
    small = np.zeros((2, 1000))
    bw.first_touch(small, 1.0, clock=clock)
    assert [shape for shape, _ in calls] == [(2, 1000)]   # one call, as before


def test_first_touch_calls_grow_where_quick_and_shrink_where_slow(monkeypatch):
    mi = 2**20 // 8
    # a quiet machine: a call under TOUCH_CALL_S / 2 doubles the next
    clock = _Clock(0.001)
    calls = _recording_fill(monkeypatch, clock)
    rows = np.zeros((1, 100 * mi))                  # 100 MiB: 4 + 8 + 16 + 32 + the last 40
    bw.first_touch(rows, 1.0, clock=clock)
    assert [shape[1] for shape, _ in calls] == [4 * mi, 8 * mi, 16 * mi, 32 * mi, 40 * mi]
    assert (rows == 1.0).all()
    # page faults at a crawl (0.5 s a call): halved down to 1 MiB, and no further
    clock = _Clock(0.5)
    calls = _recording_fill(monkeypatch, clock)
    rows = np.zeros((1, 10 * mi))                   # 4 + 2 + 1 + 1 + 1 + 1
    bw.first_touch(rows, 1.0, clock=clock)
    assert [shape[1] for shape, _ in calls] == [4 * mi, 2 * mi] + [mi] * 4
    assert (rows == 1.0).all()


def test_real_chunked_first_touch_fills_every_row(monkeypatch):
    # numba's par_fill on the column slices (a strided view): every element written,
    # the pool's rows as the kernels see them
    monkeypatch.setattr(bw, "TOUCH_CHUNK", 4096, raising=False)   # 512 elements first
    rows = bw.placed(3 * 1300, bw.slot_offset(1), None).reshape(3, 1300)
    rows[...] = np.nan
    bw.first_touch(rows, 2.5)
    assert (rows == 2.5).all()
    pool = bw.ArrayPool(3 * 8 * 1300)
    got = pool.rows(0, 3, 1300)
    assert got.shape == (3, bw.ROW_QUANTUM) and (got == 1.0).all()

"""`rooflab plot` reads its kernels with the cyclic collector paused, then draws and writes
the chart with them frozen out of its passes (report/frozen_heap.long_lived, as `report -o
x.html` builds its page), the same chart byte for byte (session 37, helper C: at 20 000
kernels the collector's time in `plot` was ~0.9 s CPU of ~7 s, 10 full passes, each
walking every kernel; now ~0.45 s, 7 passes)."""

from __future__ import annotations

import contextlib
import gc
import json

import pytest
from cli_inproc import run_cli


@pytest.fixture
def unfrozen():
    """A heap nothing froze, as a user's `rooflab plot` has (tests/conftest.py freezes this
    process's); frozen again afterwards, as conftest would."""
    if not gc.isenabled():
        pytest.skip("the collector is paused in this process")
    gc.unfreeze()
    try:
        yield
        assert gc.get_freeze_count() == 0 and gc.isenabled()
    finally:
        gc.freeze()


def _kernels(tmp_path, n: int = 40) -> str:
    """n kernels: kernel i of 1e9 * (i + 1) fp32 FLOP over 1e8 bytes, (i + 1) ms."""
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [
        {"name": f"k{i:02d}", "flop": {"fp32": 1e9 * (i + 1)}, "bytes": {"DRAM": 1e8},
         "seconds": 1e-3 * (i + 1)} for i in range(n)]}))
    return str(path)


def test_kernels_read_with_the_collector_paused_and_drawn_frozen(tmp_path, monkeypatch,
                                                                 unfrozen):
    """While the file is read the collector is paused; while the chart is worked out and
    drawn the kernels read are frozen: 40 Kernel objects and their dicts, so the frozen
    count is over 40 (every object alive as plot began is frozen too). After the verb
    nothing is frozen and the collector runs again; so too after a file the reader
    refuses inside the paused read (the one-line error, exit 2, as before)."""
    import rooflab.cli.plot as cp
    import rooflab.report.chart as chart

    seen = {}
    read, draw = cp.load_inputs, chart.plot_roofline

    def reading(*a, **kw):
        seen["reading"] = gc.isenabled()
        return read(*a, **kw)

    def drawing(roofs, kernels, **kw):
        seen["frozen"] = gc.get_freeze_count()
        seen["kernels"] = len(kernels)
        seen["drawing"] = gc.isenabled()
        return draw(roofs, kernels, **kw)

    monkeypatch.setattr(cp, "load_inputs", reading)
    monkeypatch.setattr(chart, "plot_roofline", drawing)
    done = run_cli("plot", _kernels(tmp_path), "--on", "T4", "-o", str(tmp_path / "c.png"))
    assert done.returncode == 0, done.stderr
    assert seen["reading"] is False and seen["drawing"] is True
    assert seen["kernels"] == 40 and seen["frozen"] > 40
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    seen.clear()
    done = run_cli("plot", str(bad), "--on", "T4", "-o", str(tmp_path / "c.png"))
    assert done.returncode == 2 and done.stderr.startswith("error: ")
    assert "Traceback" not in done.stderr and seen == {"reading": False}
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_same_chart_as_with_the_whole_heap_walked(tmp_path, monkeypatch, unfrozen):
    """The PNG with the heap frozen is the PNG drawn without (long_lived a no-op): the
    collector changes when memory is freed, never what is drawn."""
    import rooflab.report.frozen_heap as fh

    path = _kernels(tmp_path)
    now, old = tmp_path / "now.png", tmp_path / "old.png"
    assert run_cli("plot", path, "--on", "T4", "-o", str(now)).returncode == 0
    monkeypatch.setattr(fh, "long_lived",
                        lambda: contextlib.nullcontext(lambda fn, *a, **k: fn(*a, **k)))
    assert run_cli("plot", path, "--on", "T4", "-o", str(old)).returncode == 0
    assert now.read_bytes() == old.read_bytes()


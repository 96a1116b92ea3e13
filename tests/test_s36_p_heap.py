"""The HTML page is built with the objects alive as it starts (kernels, analysis,
diagnoses) kept out of the cyclic collector's passes (report/html._long_lived: gc.freeze,
then gc.unfreeze), the same page byte for byte (session 36, helper P: ~0.3-0.4 s CPU of
a 20 000-kernel page's ~7 s were the collector walking them, for no garbage)."""

from __future__ import annotations

import contextlib
import gc

import pytest

from rooflab.hardware.catalog import lookup_roof
from rooflab.model.analysis import analyze
from rooflab.model.kernel import Kernel


def _analysis(n: int = 30):
    roof = lookup_roof("T4")
    ks = [Kernel(name=f"k{i:03d}", flop={"fp32": 1e8 * (i + 1)},
                 bytes={"DRAM": 1e7 * (1 + i % 7)},
                 seconds=None if i % 6 == 0 else 1e-4 * (1 + i % 5)) for i in range(n)]
    return analyze(roof, ks)


@pytest.fixture
def unfrozen():
    """A heap nothing froze, as `rooflab report`'s: tests/conftest.py freezes this
    process's after collection and after each test file (where the page leaves a frozen
    heap as it is); frozen again afterwards, as conftest would."""
    if not gc.isenabled():
        pytest.skip("the collector is paused in this process")
    gc.unfreeze()
    try:
        yield
        assert gc.get_freeze_count() == 0
    finally:
        gc.freeze()


def test_heap_frozen_while_built_and_handed_back(monkeypatch, unfrozen):
    """While the page is built every object alive before it is frozen (the analysis's
    points among them: more than len(points) frozen), and after it none is: the caller's
    heap is as it was."""
    pytest.importorskip("plotly")
    import rooflab.report.html as rh

    a = _analysis()
    seen = []
    page = rh._page

    def spy(*args, **kw):
        seen.append(gc.get_freeze_count())
        return page(*args, **kw)

    monkeypatch.setattr(rh, "_page", spy)
    rh.html_report(a)
    assert len(seen) == 1 and seen[0] > len(a.points)
    assert gc.get_freeze_count() == 0


def test_same_page_as_with_the_whole_heap_walked(monkeypatch, unfrozen):
    """The page with the heap frozen is the page built without (the old way: _long_lived a
    no-op): the collector changes when memory is freed, never what is written."""
    pytest.importorskip("plotly")
    import rooflab.report.html as rh

    a = _analysis()
    now = rh.html_report(a)
    monkeypatch.setattr(rh, "_long_lived", contextlib.nullcontext)
    assert rh.html_report(a) == now


def test_collector_paused_by_the_caller_left_paused(unfrozen):
    """A caller that paused the collector keeps it paused and nothing frozen (the page
    does not enable it); one that froze its heap keeps it frozen (not unfrozen by the
    page, as tests/conftest.py's is)."""
    import rooflab.report.html as rh

    gc.disable()
    try:
        with rh._long_lived():
            assert gc.get_freeze_count() == 0
        assert not gc.isenabled()
    finally:
        gc.enable()
    gc.freeze()
    frozen = gc.get_freeze_count()
    with rh._long_lived():
        pass
    assert gc.get_freeze_count() == frozen > 0
    gc.unfreeze()

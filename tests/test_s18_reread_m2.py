"""s18 final reread mends (F3, F4, F6, F7, F8, F11): one definition of each rule, the
output unchanged."""

import rooflab.ingest.kernelfile_rows as kernelfile_rows
import rooflab.model.advice_nontemporal as advice_nontemporal
import rooflab.model.advice_stencil as advice_stencil
import rooflab.model.kernel as kernel_mod
import rooflab.model.retime as retime
import rooflab.model.weight_traffic as weight_traffic
from rooflab.model import Kernel


def _k(**kw) -> Kernel:
    return Kernel("k", flop={"fp64": 2e6}, bytes={"DRAM": 24e6}, **kw)


# F3: one test whether a count holds the write-allocate read
def test_holds_write_allocate_is_one_rule_in_byte_convention():
    from rooflab.model.byte_convention import holds_write_allocate, real_traffic_reason

    counted = _k(provenance={"flop": "counted", "bytes": "counted"})
    said = _k(meta={"byte_count": " Real Traffic "})
    plain = _k(meta={"byte_count": "stream"})
    assert holds_write_allocate(counted) and holds_write_allocate(said)
    assert not holds_write_allocate(plain)
    assert real_traffic_reason(said).startswith("its count is real traffic")
    assert not hasattr(advice_nontemporal, "_real_traffic")
    import rooflab.model.advice_sparse as advice_sparse
    assert not hasattr(advice_sparse, "_real_traffic")


# F4: one public meta_shape (weight_traffic's, None without a shape)
def test_one_meta_shape():
    for mod in (advice_nontemporal, advice_stencil):
        assert getattr(mod, "meta_shape", weight_traffic.meta_shape) is weight_traffic.meta_shape
    assert weight_traffic.meta_shape(_k()) is None
    assert advice_nontemporal.shape_of(_k()) == {}
    assert advice_nontemporal.shape_of(_k(meta={"shape": {"updated_points": 1e6}})) == {
        "updated_points": 1e6}


# F6: MEASURED_META is TIMING_META less three keys; PRECISION_ASSUMED defined once
def test_measured_meta_is_timing_meta_less_samples_plan_warmup():
    assert set(kernel_mod.TIMING_META) - set(retime.MEASURED_META) == {
        "raw_samples", "plan", "warmup_calls"}
    assert set(retime.MEASURED_META) <= set(kernel_mod.TIMING_META)
    assert isinstance(retime.MEASURED_META, frozenset)


def test_precision_assumed_is_one_constant():
    import inspect

    assert "PRECISION_ASSUMED =" not in inspect.getsource(kernelfile_rows)
    assert kernelfile_rows.PRECISION_ASSUMED is kernel_mod.PRECISION_ASSUMED
    assert kernel_mod.PRECISION_ASSUMED == "assumed"


# F11: one rule says the thread count once, for Analysis, plot and report
NOTED = "k: ran on 1 thread; judged by the 2-thread roof: the roof is 2x too high"
SAID = "profile p: kernel file's 'threads' (1) differs from the roof's rows"


def test_threads_said_once_by_notes_said_or_finding():
    from types import SimpleNamespace

    from rooflab.model.threads_note import threads_said_once

    other = "no L3 ceiling, so no L3 point"
    assert threads_said_once([NOTED, other]) == (NOTED, other)
    assert threads_said_once([NOTED, other, SAID]) == (other, SAID)
    assert threads_said_once([NOTED, other], said=[SAID]) == (other,)
    finding = SimpleNamespace(check="threads")
    assert threads_said_once([NOTED, other], findings=[finding]) == (other,)
    assert threads_said_once([NOTED], findings=[SimpleNamespace(check="ridge")]) == (NOTED,)


# F7: the ridge band is ridge x (C_lo/B_hi, C_hi/B_lo), one helper for every caller
def test_healthy_ridge_band_t4():
    import pytest

    from rooflab.hardware.resolve import load_roof
    from rooflab.model.datasheet_note import expected_measured_ridge, healthy_ridge_band
    from rooflab.report.record_table import _ridge_band

    # T4: 65 TFLOP/s fp16 tensor / 320 GB/s = 203 FLOP/B; x 0.70/0.90 and x 0.90/0.75
    lo, hi = healthy_ridge_band(65e12 / 320e9)
    assert (lo, hi) == pytest.approx((158.0, 243.75), rel=1e-3)
    t4 = load_roof("T4")
    assert expected_measured_ridge(t4) == pytest.approx((lo, hi))
    assert _ridge_band(t4, 65e12 / 320e9) == pytest.approx((lo, hi))
    # any precision's ridge scales by the same two factors: fp32 8.1 TFLOP/s -> 25.3 FLOP/B
    assert _ridge_band(t4, 8.1e12 / 320e9) == pytest.approx(
        (8.1e12 / 320e9 * 0.70 / 0.90, 8.1e12 / 320e9 * 0.90 / 0.75))
    assert _ridge_band(None, 203.0) is None and _ridge_band(t4, None) is None


# F8: `ai dot --on P` resolves --on once; the cache note is unchanged
def _cpu_profile(tmp_path) -> str:
    """A measured EPYC profile with cache sizes (32 KiB L1 at 40 GB/s): f2's."""
    from test_s18_f2_hpc_counts_advice import _profile

    return _profile(tmp_path)


def test_ai_dot_resolves_on_once(tmp_path, capsys, monkeypatch):
    import json

    import rooflab.cli.inputs as inputs
    from rooflab.cli.main import main

    calls = []
    real = inputs.resolve_on
    monkeypatch.setattr(inputs, "resolve_on", lambda spec: calls.append(spec) or real(spec))
    path = _cpu_profile(tmp_path)
    assert main(["ai", "dot", "1000", "--on", path, "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    fit = [n for n in notes if n.startswith("the operands (16 kB) fit in L1 (32 KiB")]
    assert fit and "its floor is 400 ns" in fit[0]                # 16e3 B / 40e9 B/s
    assert calls == [path]                                       # was [path, path]
    calls.clear()
    assert main(["ai", "dot", "1000", "--json"]) == 0            # no --on: no note
    assert not any("fit in" in n for n in json.loads(capsys.readouterr().out).get("notes", []))
    assert calls == []

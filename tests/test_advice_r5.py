"""Review r5 (advice tested against measured gains on a 2-vCPU Zen 4, one-thread row of a
loaded probe): fp64 59 GFLOP/s, fp32 118 GFLOP/s, DRAM 29.3 GB/s, dispatch floor 177 ns,
L3 32 MiB. Hand numbers:

- F1 o = x*2 (16 B/el), o += y (24), o *= z (24), n = 8e6 fp64, timed 4.7278, 4.1014,
  4.1984 ms = 13.0276 ms. Fused: x, y, z read, o written: 32 B/el = 256 MB (16 + 24 + 24 -
  2 x 2 x 8), not the largest member's 192 MB. Floors 128e6 + 2 x 192e6 B / 29.3 GB/s =
  17.474 ms > 13.03 ms measured: efficiency 1, fused 256e6 / 29.3e9 + 177 ns = 8.7374 ms,
  13.0276 / 8.7374 = 1.491x (measured 1.46x; 192 MB said 1.99x).
- F2 the fused kernels' line: measured 13 ms -> 8.74 ms predicted, saved 4.29 ms (was
  "17.5 ms -> 6.55 ms (2.67x; saved 10.9 ms)", floors above the members' real time).
- F3 1000 np.add calls on 64-el fp64 rows: 64,000 FLOP, 1,536,000 B, 633.2 us, calls 1000:
  633 ns a call, 3.6x the 177 ns floor; work floor 1.536e6 / 29.3e9 = 52.423 us, 52 ns a
  call < 177 ns: per-call cost. Merge: 633.2 - 999 x 0.177 = 456.38 us, 1.387x; up to
  633.2 / (52.423 + 0.177) = 12.04x. With the numpy ufunc floor 349 ns: 633.2 - 999 x 0.349
  = 284.55 us, 2.225x. fp32 keeps the per-call cost: 633.2 - 52.423 / 2 = 607 us, 1.04x
  (measured 1.01x; was 1.56x).
- F4 64-step Horner, fp64: 1.024e9 FLOP, 1.28e8 B (AI 8), 28.555 ms: a right count; fp32
  2.00x (measured 2.01x), no ai_high.
- F6a fp32/fp64 measured 118.04 / 59 = 2.0007x, nominal 2.00x: within 2 %, not capped.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from one_thread_roof import ONE_T, ONE_T_DICT

from rooflab.cli.main import main
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.advice import advise
from rooflab.model.diagnose import diagnose
from rooflab.model.machine import Machine
from rooflab.model.sanity import check_kernel
from rooflab.model.whatif import fuse
from rooflab.model.whatif_precision_cap import capped_roof

CPU = Machine(kind="cpu", caches={"L3": 33_554_432.0})
N = 8e6
EW = {"op": "elementwise"}


def _c1():
    return [Kernel("c1_scale", {"fp64": N}, {"DRAM": 16 * N}, seconds=4.7278e-3, meta=EW),
            Kernel("c1_add", {"fp64": N}, {"DRAM": 24 * N}, seconds=4.1014e-3, meta=EW),
            Kernel("c1_mul", {"fp64": N}, {"DRAM": 24 * N}, seconds=4.1984e-3, meta=EW)]


# --- F1: the fused chain reads every input once --------------------------------------------

def test_fused_chain_moves_the_union_of_its_inputs_and_output():
    w = fuse(ONE_T, _c1(), ["c1_scale", "c1_add", "c1_mul"])
    new = w.moves[0][1]
    assert new.bytes["DRAM"] == pytest.approx(32 * N)            # was 24 x N (192 MB)
    assert new.seconds == pytest.approx(32 * N / 29.3e9 + 177e-9, rel=1e-6)
    assert 13.0276e-3 / new.seconds == pytest.approx(1.491, abs=0.002)   # measured 1.46x
    assert "less one write and one re-read of each intermediate" in w.assumption
    assert "128 MB + 192 MB + 192 MB -> 256 MB" in w.assumption


def test_members_of_unknown_kind_keep_the_largest_member_as_a_floor():
    ks = [k.with_(meta={}) for k in _c1()]
    w = fuse(ONE_T, ks, ["c1_scale", "c1_add", "c1_mul"])
    assert w.moves[0][1].bytes["DRAM"] == pytest.approx(24 * N)
    assert "the gain is at most this" in w.assumption


# --- F2: the fused kernels' line says what they took ---------------------------------------

def test_fused_alone_line_saves_from_the_measured_time(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    ks = tmp_path / "k.json"
    ks.write_text(json.dumps({"kernels": [
        {"name": k.name, "flop": dict(k.flop), "bytes": dict(k.bytes), "seconds": k.seconds,
         "meta": dict(k.meta)} for k in _c1()]}))
    roof = tmp_path / "roof.json"
    roof.write_text(json.dumps(ONE_T_DICT))
    assert main(["whatif", str(ks), "--on", str(roof), "--fuse",
                 "c1_scale,c1_add,c1_mul"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("the fused kernels alone, with launches: 17.5 ms -> 8.74 ms (the members took "
            "13 ms, under their floor); measured 13 ms -> 8.74 ms predicted (1.49x; saved "
            "4.29 ms)") in out
    assert "2.00x; saved 8.7" not in out


# --- F3: many small calls -------------------------------------------------------------------

def _c6(**meta):
    return Kernel("c6_add64_x1000", {"fp64": 64_000.0}, {"DRAM": 1_536_000.0},
                  seconds=633.2e-6, calls=1000, meta={"op": "elementwise", **meta})


def test_many_small_calls_are_overhead_bound_and_merging_leads():
    k = _c6()
    (d,) = diagnose(analyze(ONE_T, [k]), CPU)
    assert d.bound == "overhead"                                   # was "latency"
    assert "per-call cost" in d.evidence and "633 ns" in d.evidence
    below = d.distances[0].words
    assert "Batching does not close it" not in below and "merging them" in below
    first = d.advice[0]
    assert first.action.startswith("merge the 1000 calls into one")
    assert first.speedup == pytest.approx(633.2 / (633.2 - 999 * 0.177), rel=1e-3)  # 1.387
    fast, slow = first.seconds_range
    assert 633.2e-6 / fast == pytest.approx(633.2 / (1_536_000 / 29.3e9 * 1e6 + 0.177),
                                            rel=1e-3)                          # 12.04x
    # 12.04 in 3 figures (units.fmt_times from 10), as the merge range's other end
    assert "1.39x with 1000 x 177 ns" in first.detail and "up to 12.0x where" in first.detail
    # fp32 keeps the per-call cost: 633.2 / (633.2 - 52.423 / 2) = 1.043x (was 1.56x)
    low = next(a for a in d.advice if a.action.startswith("use fp32"))
    assert low.speedup == pytest.approx(633.2 / (633.2 - 52.423 / 2), rel=1e-3)
    assert "the DRAM floor does not bind" in low.assumption
    assert all(a.speedup < 1.1 for a in d.advice[1:])


def test_the_numpy_call_floor_prices_a_numpy_loop():
    from rooflab.model.advice_calls import call_floor, many_calls

    floors = {"numba empty call": 177e-9, "numpy 1-element ufunc": 349e-9}
    m = SimpleNamespace(kind="cpu", call_floors=floors, caches={})
    assert call_floor(ONE_T, m, _c6())[0] == 349e-9
    numba = _c6(threads_from="numba function without parallel=True")
    assert call_floor(ONE_T, m, numba)[0] == 177e-9
    p = analyze(ONE_T, [_c6()]).points[0]
    cost = many_calls(p, ONE_T, m, _c6())
    assert cost is not None and cost.floor_s == 349e-9
    from rooflab.model.advice_calls import merge_calls_advice

    merged = merge_calls_advice(p, cost, Machine(kind="cpu"))
    assert merged.speedup == pytest.approx(633.2 / (633.2 - 999 * 0.349), rel=1e-3)  # 2.225
    # 633.2 - 999 x 0.349 = 284.55 us: 2.225x
    (first,) = [a for a in advise(p, ONE_T, _c6(), machine=Machine(kind="cpu"))
                if a.action.startswith("merge")]
    assert first.speedup == pytest.approx(1.387, abs=0.002)          # the roof's 177 ns


def test_one_big_call_is_not_many_calls():
    from rooflab.model.advice_calls import many_calls

    # the same work in one call: 633 us for 52 us of work is no per-call cost
    k = _c6().with_(calls=1)
    p = analyze(ONE_T, [k]).points[0]
    assert many_calls(p, ONE_T, CPU, k) is None


# --- F4: an elementwise function of many FLOP per element ----------------------------------

def test_a_counted_polynomial_keeps_its_fp32_lever():
    k = Kernel("c7_horner64_fp64", {"fp64": 1.024e9}, {"DRAM": 1.28e8}, seconds=28.555e-3,
               meta=EW)
    res = analyze(ONE_T, [k])
    checks = {f.check: f for f in check_kernel(res, k, CPU)}
    assert "ai_high" not in checks                                  # was flagged
    assert checks["flop_per_element"].severity == "info"
    assert "64 FLOP per 8-byte element moved" in checks["flop_per_element"].message
    (d,) = diagnose(res, CPU)
    assert not d.advice[0].action.startswith("recount")
    low = next(a for a in d.advice if a.action.startswith("use fp32"))
    assert low.speedup == pytest.approx(2.0, rel=1e-3)              # measured 2.01x
    # a named op at AI 8 (an add does 1 FLOP per element) is still a miscount
    add = k.with_(meta={"op": "add"})
    assert "ai_high" in {f.check for f in check_kernel(analyze(ONE_T, [add]), add, CPU)}


# --- F5: p.json@1t keeps the profile --------------------------------------------------------

def test_at_threads_suffix_keeps_the_profile(tmp_path):
    from rooflab.cli.inputs_roofs import _profile_of

    path = tmp_path / "p.json"
    path.write_text(json.dumps({"schema_version": 1,
                                "host": {"name": "box", "caches": {"L3": 33_554_432}},
                                "measured": ONE_T_DICT}))
    prof = _profile_of(f"{path}@1t")
    assert prof is not None and prof.host["caches"]["L3"] == 33_554_432


# --- F6 ------------------------------------------------------------------------------------

def test_precision_cap_has_a_tolerance():
    measured = Roof("m", kind="measured",
                    compute=(Ceiling(118.04e9, precision="fp32", unit="vector"),
                             Ceiling(59e9, precision="fp64", unit="vector")),
                    memory=(Ceiling(29.3e9, level="DRAM"),))
    nominal = Roof("n", compute=(Ceiling(236e9, precision="fp32", unit="vector"),
                                 Ceiling(118e9, precision="fp64", unit="vector")),
                   memory=(Ceiling(60e9, level="DRAM"),))
    assert capped_roof(measured, nominal, "fp64", "fp32") == (measured, ())
    far = Roof("m", kind="measured",
               compute=(Ceiling(130e9, precision="fp32", unit="vector"),
                        Ceiling(59e9, precision="fp64", unit="vector")),
               memory=(Ceiling(29.3e9, level="DRAM"),))
    capped, notes = capped_roof(far, nominal, "fp64", "fp32")
    assert capped.find_compute("fp32", "vector").value == pytest.approx(118e9) and notes


def test_latency_lever_words_do_not_contradict():
    # naive 512^3 matmul: 2.68e8 FLOP, 6.29 MB, 538 ms: 0.85 % of the 59 GFLOP/s roof
    k = Kernel("c4_mm512_naive", {"fp64": 268_435_456.0}, {"DRAM": 6_291_456.0},
               seconds=0.5382, meta={"op": "matmul"})
    (d,) = diagnose(analyze(ONE_T, [k]), CPU)
    low = next(a for a in d.advice if a.action.startswith("use fp32"))
    assert "then tracks its roof" not in low.assumption
    assert "at its current share of a higher roof" in low.assumption


def test_one_thread_roof_says_no_every_core():
    # sum over a[::4]: 8e6 FLOP, 64 MB, 8.68 ms on a one-thread roof
    k = Kernel("c5_sum_stride4", {"fp64": 8e6}, {"DRAM": 64e6}, seconds=8.677e-3,
               meta={"op": "reduction"})
    (d,) = diagnose(analyze(ONE_T, [k]), CPU)
    assert d.advice and not any("every core" in a.action for a in d.advice)
    assert any(a.action.startswith("stream with full-width SIMD loads (unit stride")
               for a in d.advice)


def test_top_table_shows_the_real_lever_beside_re_time():
    from rooflab.report.markdown import priority_rows

    k = Kernel("c5_sum_stride4", {"fp64": 8e6}, {"DRAM": 64e6}, seconds=8.677e-3,
               samples=(8.68e-3, 8.7e-3, 16.4e-3, 16.7e-3, 8.9e-3), meta={"op": "reduction"})
    (d,) = diagnose(analyze(ONE_T, [k]), CPU)
    assert d.advice[0].action.startswith("re-time")
    (row,) = priority_rows([d])
    assert row[6].startswith("re-time first, then: stream with full-width SIMD loads")
    assert row[7] == f"{d.advice[1].speedup:.2f}x" and d.advice[1].speedup > 2


# --- F7 and fused_bytes without ops ---------------------------------------------------------

def test_ai_low_names_the_low_roof_first():
    # np.add(o, y, out=o): 8e6 FLOP, 192 MB in 4.1 ms = 46.8 GB/s, 1.6x a 29.3 GB/s roof
    k = Kernel("c1_add", {"fp64": N}, {"DRAM": 24 * N}, seconds=4.1014e-3, meta=EW)
    f = {x.check: x for x in check_kernel(analyze(ONE_T, [k]), k, CPU)}["ai_low"]
    assert "either the DRAM roof is too low for it or the DRAM bytes are too many" in f.message
    assert f.causes[0].startswith("the measured DRAM roof is too low")


def test_hand_given_fused_bytes_without_ops_is_used():
    # three passes timed as one function: 64 B/el counted, 32 B/el in one pass: 2x bytes
    k = Kernel("c1_unfused3", {"fp64": 3 * N}, {"DRAM": 64 * N}, seconds=24.8e-3,
               meta={"op": "elementwise", "fused_bytes": 32 * N})
    (d,) = diagnose(analyze(ONE_T, [k]), CPU)
    a = next(a for a in d.advice if "one pass" in a.action)
    assert a.action == "fuse its several ops into one pass"
    assert a.new_ai == pytest.approx(3 * N / (32 * N))

"""Session 16 F3: a many-calls kernel's gain and its merge lever say how they relate, and
`whatif --fuse --json`'s `moved` block carries the fused kernels' measured and predicted
times.

Hand numbers (review r5's one-thread row: fp64 59 GFLOP/s, DRAM 29.3 GB/s, roof floor
177 ns = the numba no-op; the profile's numpy 1-element ufunc 349 ns):
- c6: 1000 x np.add on 64-el fp64 rows, 633.2 us, 1,536,000 B; work floor 1.536e6 / 29.3e9
  = 52.423 us. Numpy floor: gain 633.2 / (1000 x 0.349) = 633.2 / 349 = 1.814x ("1.8x"),
  merge 633.2 / (633.2 - 999 x 0.349) = 633.2 / 284.549 = 2.225x ("2.23x"). Roof floor:
  gain 633.2 / 177 = 3.577x ("3.6x"), merge 633.2 / (633.2 - 999 x 0.177) = 633.2 / 456.377
  = 1.387x ("1.39x"): the gain keeps the floor and drops the rest of each call, the merge's
  low end the other way round, so neither caps the other.
- c1 fused (o = x*2; o += y; o *= z, n = 8e6): members 4.7278 + 4.1014 + 4.1984 = 13.0276 ms
  measured; fused 32 B x 8e6 = 256 MB / 29.3e9 = 8.737201 ms + 177 ns = 8.737378 ms;
  13.0276 / 8.737378 = 1.49102x, saved 4.290222 ms. Beside a 10 ms kernel left alone: whole
  run 23.0276 ms -> 23.0276 - 13.0276 + 8.737378 = 18.737378 ms (1.22897x).
"""

from __future__ import annotations

import json

import pytest
from one_thread_roof import BARE, ONE_T, ONE_T_DICT, PROFILED

from rooflab.cli.main import main
from rooflab.model import Kernel, analyze
from rooflab.model.diagnose import diagnose, diagnosis_to_dict

EW = {"op": "elementwise"}


def _c6_diag(machine):
    k = Kernel("c6_add64_x1000", {"fp64": 64_000.0}, {"DRAM": 1_536_000.0},
               seconds=633.2e-6, calls=1000, meta=EW)
    (d,) = diagnose(analyze(ONE_T, [k]), machine)
    return d


def test_merge_advice_says_the_gain_keeps_the_floor_merging_removes():
    d = _c6_diag(PROFILED)
    assert d.gain_speedup == pytest.approx(633.2 / 349, rel=1e-9)          # 1.814x
    merge = d.advice[0]
    assert merge.speedup == pytest.approx(633.2 / 284.549, rel=1e-6)      # 2.225x
    link = ("its gain to the roof (1.81x) keeps the 1000 x 349 ns = 349 us per-call floor "
            "(and drops the rest of each call); merging the calls removes that floor")
    # the text's advice line prints the assumption; --json has detail and assumption
    assert link in merge.assumption and link in merge.detail
    (row,) = diagnosis_to_dict(d)["advice"][:1]
    assert link in row["assumption"] and link in row["detail"]
    assert row["speedup"] == pytest.approx(2.2253, abs=1e-4)


def test_on_the_roofs_floor_the_gain_is_above_the_merges_low_end_and_says_why():
    d = _c6_diag(BARE)
    assert d.gain_speedup == pytest.approx(633.2 / 177, rel=1e-9)          # 3.577x
    merge = d.advice[0]
    assert merge.speedup == pytest.approx(633.2 / 456.377, rel=1e-6)      # 1.387x
    # 3 figures, as the gain line says it (3.58x faster), not 3.6x
    assert ("its gain to the roof (3.58x) keeps the 1000 x 177 ns = 177 us per-call floor "
            "(and drops the rest of each call); merging the calls removes that floor"
            ) in merge.assumption
    # the roof's floor without a source is named once, not "(the roof's)" after it
    assert "1000 x 177 ns (the roof's dispatch floor) saved" in merge.detail
    assert "(the roof's)" not in merge.detail


def test_report_text_and_json_carry_the_link(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    ks = tmp_path / "k.json"
    ks.write_text(json.dumps({"kernels": [
        {"name": "c6_add64_x1000", "flop": {"fp64": 64000}, "bytes": {"DRAM": 1536000},
         "seconds": 633.2e-6, "calls": 1000, "meta": EW}]}))
    roof = tmp_path / "roof.json"
    roof.write_text(json.dumps(ONE_T_DICT))
    assert main(["report", str(ks), "--on", str(roof)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "(3.58x faster; the 1000 x 177 ns = 177 us per-call floor stays)" in out
    assert "merge the 1000 calls into one" in out and "1.39x predicted" in out
    assert ("its gain to the roof (3.58x) keeps the 1000 x 177 ns = 177 us per-call floor "
            "(and drops the rest of each call); merging the calls removes that floor") in out
    assert main(["report", str(ks), "--on", str(roof), "--json"]) == 0
    (d,) = json.loads(capsys.readouterr().out)["diagnosis"]
    assert d["gain_speedup"] == pytest.approx(3.5774, abs=1e-4)
    assert "its gain to the roof (3.58x) keeps" in d["advice"][0]["assumption"]


def _c1_file(tmp_path):
    n = 8e6
    ks = tmp_path / "c1.json"
    ks.write_text(json.dumps({"kernels": [
        {"name": "c1_scale", "flop": {"fp64": n}, "bytes": {"DRAM": 16 * n},
         "seconds": 4.7278e-3, "meta": EW},
        {"name": "c1_add", "flop": {"fp64": n}, "bytes": {"DRAM": 24 * n},
         "seconds": 4.1014e-3, "meta": EW},
        {"name": "c1_mul", "flop": {"fp64": n}, "bytes": {"DRAM": 24 * n},
         "seconds": 4.1984e-3, "meta": EW},
        {"name": "other", "flop": {"fp64": 1e8}, "bytes": {"DRAM": 1e8}, "seconds": 10e-3}]}))
    roof = tmp_path / "roof.json"
    roof.write_text(json.dumps(ONE_T_DICT))
    return ks, roof


def test_whatif_fuse_json_moved_has_measured_and_predicted_totals(tmp_path, capsys):
    ks, roof = _c1_file(tmp_path)
    assert main(["whatif", str(ks), "--on", str(roof), "--fuse", "c1_scale,c1_add,c1_mul",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    moved = doc["moved"]
    fused_s = 256e6 / 29.3e9 + 177e-9                                     # 8.737378 ms
    assert moved["before_s"] == pytest.approx(13.0276e-3, rel=1e-9)
    assert moved["after_s"] == pytest.approx(fused_s, rel=1e-9)
    assert moved["after_s"] == pytest.approx(8.737378e-3, rel=1e-6)
    assert moved["speedup"] == pytest.approx(1.49102, rel=1e-5)
    assert moved["saved_s"] == pytest.approx(4.290222e-3, rel=1e-6)
    assert moved["before_s_provenance"] == "measured"
    assert moved["after_s_provenance"] == "derived"
    # the floors stay: 2 x 192 MB + 128 MB over 29.3 GB/s -> 256 MB (2.00x)
    assert moved["before_with_launches_s"] == pytest.approx(512e6 / 29.3e9, rel=1e-9)
    assert moved["with_launches_speedup"] == pytest.approx(2.0, rel=1e-9)
    # a script gets the whole-run change from JSON alone, and it is the document's total
    whole = doc["total_before_s"] - moved["before_s"] + moved["after_s"]
    assert whole == pytest.approx(18.737378e-3, rel=1e-6)
    assert doc["total_after_s"] == pytest.approx(whole, rel=1e-12)
    assert doc["total_before_s"] / whole == pytest.approx(1.22897, rel=1e-5)
    # summing the moves' rows would count the fused kernel three times
    assert sum(r["after_s"] for r in doc["moves"]) == pytest.approx(3 * fused_s, rel=1e-9)


def test_whatif_fuse_text_line_keeps_its_numbers(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    ks, roof = _c1_file(tmp_path)
    assert main(["whatif", str(ks), "--on", str(roof), "--fuse",
                 "c1_scale,c1_add,c1_mul"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "total: 23 ms -> 18.7 ms (1.23x)" in out
    assert "measured 13 ms -> 8.74 ms predicted (1.49x; saved 4.29 ms)" in out


def test_untimed_members_give_null_times(tmp_path, capsys):
    ks, roof = _c1_file(tmp_path)
    data = json.loads(ks.read_text())
    del data["kernels"][1]["seconds"]
    ks.write_text(json.dumps(data))
    assert main(["whatif", str(ks), "--on", str(roof), "--fuse", "c1_scale,c1_add,c1_mul",
                 "--json"]) == 0
    moved = json.loads(capsys.readouterr().out)["moved"]
    assert moved["before_s"] is None and moved["speedup"] is None
    assert moved["saved_s"] is None and moved["before_s_provenance"] is None

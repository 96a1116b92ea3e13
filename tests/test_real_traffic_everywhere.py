"""The real-traffic DRAM ceiling everywhere a DRAM ceiling judges (task F3, review 17a).

Hand numbers:
- A profile probed at 4 threads (DRAM triad 40 GB/s) with a 1-thread row of `probe
  --threads 1,all` (DRAM triad 10 GB/s, samples 10 and 9 GB/s). The row's real-traffic
  ceiling is triad's x 4/3 (2 loads + 2 x 1 store over 2 + 1): 13.33 GB/s. A one-thread
  loop measured by perf at 12 GB/s of real traffic (1.2e10 B in 1 s, 1e9 FLOP) is
  12 / 13.33 = 90 % of that roof; against the counted 10 GB/s it read 120 %.
- A roof whose DRAM is STREAM-counted and has no real-traffic ceiling judges the same
  bytes against the counted 10 GB/s, and now says so.
- A linear layer 1024 x 1024 on 1024 tokens, bf16: 6 t k n = 6.442e9 FLOP; bytes 3 x 2 x
  (t k + t n) + 3 x 2 x k n = 12 582 912 + 6 291 456 = 18 874 368 B; on 10 GB/s counted
  DRAM its memory time is 1.887 ms (on the 13.33 GB/s real-traffic one it would be 1.416).
- A kernel of 1e9 FLOP with 1e9 B at DRAM (10 GB/s) and 1e9 B at L1 (1 TB/s) on a 100
  GFLOP/s roof, 0.125 s: DRAM attainable 10 GFLOP/s, achieved 8 = 80 % (memory); L1
  attainable 100 GFLOP/s, 8 % (< 10 %): its own class reads latency, the tables "not
  binding (DRAM binds)", and the JSON now "not binding" with binding_level "DRAM".
"""

from __future__ import annotations

import json

import pytest

from rooflab.hardware import resolve, thread_rows
from rooflab.hardware.profile import roof_at_threads
from rooflab.model import analysis as analysis_mod
from rooflab.model.analysis import analyze, memory_ceiling
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.diagnose_evidence import level_bounds
from rooflab.model.kernel import Kernel
from rooflab.model.parallel import layer_time, linear_layer
from rooflab.model.real_traffic import REAL_TRAFFIC, STREAM_SHAPES
from rooflab.model.schema import analysis_to_dict, points_to_dicts
from rooflab.probe.cpu import bandwidth as bw
from rooflab.probe.cpu.dram_ceiling import real_traffic

COUNTED = "STREAM triad (explicit loads + stores, no write-allocate (STREAM/likwid convention))"


def _level(value: float) -> dict:
    return {"bytes_per_s": value, "samples": [value, 0.9 * value]}


def _row(n: int, dram: float) -> dict:
    return {"threads": n, "L1": _level(1e11 * n) | {"ws_bytes_per_thread": 16384},
            "DRAM": _level(dram), "fp64": {"flop_per_s": 5e10 * n, "samples": [5e10 * n]}}


def _profile() -> dict:
    """probe --threads 1,all: measured at 4 threads, a 1-thread row with DRAM triad 10 GB/s."""
    memory = [{"level": "L1", "bytes_per_s": 4e11, "provenance": "measured"},
              {"level": "DRAM", "bytes_per_s": 4e10, "provenance": "measured",
               "method": COUNTED}]
    return {"schema_version": 1, "host": {"name": "box"},
            "measured": {"name": "box measured (4 threads)", "kind": "measured",
                         "compute": [{"precision": "fp64", "unit": "vector",
                                      "flop_per_s": 2e11, "provenance": "measured"}],
                         "memory": memory},
            "extras": {"threads": 4,
                       "scaling": {"counts": [1, 4], "reference_threads": 4, "method": "m",
                                   "by_threads": {"1": _row(1, 1e10), "4": _row(4, 4e10)}}}}


def _perf_loop() -> Kernel:
    """One thread, counter-measured DRAM bytes: 12 GB/s of real traffic for 1 s."""
    return Kernel(name="loop", flop={"fp64": 1e9}, bytes={"DRAM": 1.2e10}, seconds=1.0,
                  provenance={"flop": "measured", "bytes": "measured", "seconds": "measured"},
                  meta={"threads": 1})


# --- 1: thread rows carry their real-traffic ceiling ------------------------------------
def test_one_thread_row_has_a_real_traffic_ceiling_of_triad_x_4_3():
    roof = roof_at_threads(_profile(), 1)
    real = roof.find_memory(REAL_TRAFFIC)
    assert real is not None and real.provenance == "derived"
    assert real.value == pytest.approx(1e10 * 4 / 3)
    assert real.samples == pytest.approx((1e10 * 4 / 3, 0.9e10 * 4 / 3))
    assert "1 thread row" in real.method and "only triad" in real.method
    # the one derivation: the probe's function gives the same figure from the row's triad
    assert real.value == pytest.approx(real_traffic(roof.find_memory("DRAM"), {}).value)


def test_counter_bytes_on_the_one_thread_row_meet_real_traffic(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_profile()))
    roofs, _, _ = thread_rows.roofs_for_kernel_threads(str(path), 1)
    a = analyze(roofs[0], [_perf_loop()])
    (p,) = a.points
    assert p.bytes_per_s == pytest.approx(1e10 * 4 / 3)       # was the counted 10 GB/s
    assert p.percent_of_roof == pytest.approx(90.0)            # was 120 %
    assert any("judged against the DRAM (real traffic)" in n for n in a.notes)


def test_at_1t_suffix_gives_the_same_roof(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_profile()))
    (roof, *_) = resolve.load_roofs(f"{path}@1t")
    assert roof.find_memory(REAL_TRAFFIC).value == pytest.approx(1e10 * 4 / 3)


def test_a_counted_roof_without_real_traffic_says_so():
    roof = Roof(name="old probe", kind="measured",
                compute=(Ceiling(value=5e10, precision="fp64", unit="vector",
                                 provenance="measured"),),
                memory=(Ceiling(value=1e10, level="DRAM", provenance="measured",
                                method=COUNTED),))
    c, note = memory_ceiling(roof, _perf_loop(), "DRAM")
    assert c.value == 1e10
    assert "has no DRAM (real traffic) ceiling" in note and "4/3" in note
    a = analyze(roof, [_perf_loop()])
    assert a.points[0].percent_of_roof == pytest.approx(120.0)
    assert any("has no DRAM (real traffic) ceiling" in n for n in a.notes)


def test_a_datasheet_roof_stays_silent():
    # a catalog DRAM is no STREAM count: nothing to say about write-allocate
    roof = Roof(name="sheet", kind="nominal",
                compute=(Ceiling(value=5e10, precision="fp64", unit="vector",
                                 provenance="nominal"),),
                memory=(Ceiling(value=1e10, level="DRAM", provenance="nominal"),))
    assert memory_ceiling(roof, _perf_loop(), "DRAM")[1] == ""


def test_stream_shapes_are_the_probes_kernels():
    assert STREAM_SHAPES == {k: (s.loads, s.stores) for k, s in bw.STREAM.items()}


# --- 2: parallel.py's layers ask memory_ceiling -------------------------------------------
def _both_drams() -> Roof:
    return Roof(name="cpu", kind="measured",
                compute=(Ceiling(value=1e12, precision="bf16", unit="vector",
                                 provenance="measured"),),
                memory=(Ceiling(value=1e10, level="DRAM", provenance="measured",
                                method=COUNTED),
                        Ceiling(value=1e10 * 4 / 3, level=REAL_TRAFFIC,
                                provenance="derived")))


def test_a_linear_layer_is_judged_against_the_counted_dram():
    layer = linear_layer("fc", 1024, 1024, 1024)
    assert layer.bytes == 18_874_368 and layer.flop == 6 * 1024**3
    lt = layer_time(layer, _both_drams(), None, 1)
    assert lt.memory_s == pytest.approx(18_874_368 / 1e10)     # 1.887 ms: counted bytes


def test_layer_time_follows_memory_ceiling(monkeypatch):
    # the one rule decides: were a layer's bytes real traffic, the real ceiling would judge
    roof = _both_drams()
    monkeypatch.setattr(analysis_mod, "memory_ceiling",
                        lambda r, k, lv: (r.find_memory(REAL_TRAFFIC), "real"))
    lt = layer_time(linear_layer("fc", 1024, 1024, 1024), roof, None, 1)
    assert lt.memory_s == pytest.approx(18_874_368 / (1e10 * 4 / 3))   # 1.416 ms


# --- 3: the JSON's bound says what the tables say -----------------------------------------
def _two_levels():
    roof = Roof(name="r", kind="measured",
                compute=(Ceiling(value=1e11, precision="fp64", unit="vector",
                                 provenance="measured"),),
                memory=(Ceiling(value=1e12, level="L1", provenance="measured"),
                        Ceiling(value=1e10, level="DRAM", provenance="measured")))
    k = Kernel(name="stencil", flop={"fp64": 1e9}, bytes={"DRAM": 1e9, "L1": 1e9},
               seconds=0.125)
    return analyze(roof, [k])


def test_json_bound_of_a_level_under_another_levels_roof():
    a = _two_levels()
    by_level = {p.level: p for p in a.points}
    assert by_level["DRAM"].percent_of_roof == pytest.approx(80.0)
    assert by_level["L1"].percent_of_roof == pytest.approx(8.0)
    assert by_level["L1"].bound == "latency"                   # the point's own class
    tables = dict(zip((p.level for p in a.points), level_bounds(a), strict=True))
    assert tables == {"DRAM": "memory", "L1": "not binding (DRAM binds)"}
    got = {d["level"]: d for d in analysis_to_dict(a)["analysis"]}
    assert got["L1"]["bound"] == "not binding" and got["L1"]["binding_level"] == "DRAM"
    assert got["DRAM"]["bound"] == "memory" and "binding_level" not in got["DRAM"]
    assert points_to_dicts(a.points) == analysis_to_dict(a)["analysis"]


def test_plot_and_report_json_carry_the_same_bound(tmp_path, capsys, monkeypatch):
    from rooflab.cli.main import main

    monkeypatch.chdir(tmp_path)
    kfile = tmp_path / "k.json"
    kfile.write_text(json.dumps([{"name": "stencil", "flop": {"fp64": 1e9},
                                  "bytes": {"DRAM": 1e9, "L1": 1e9}, "seconds": 0.125}]))
    rfile = tmp_path / "r.json"
    rfile.write_text(json.dumps({"name": "r", "kind": "measured",
                                 "compute": [{"precision": "fp64", "unit": "vector",
                                              "flop_per_s": 1e11, "provenance": "measured"}],
                                 "memory": [{"level": "L1", "bytes_per_s": 1e12,
                                             "provenance": "measured"},
                                            {"level": "DRAM", "bytes_per_s": 1e10,
                                             "provenance": "measured"}]}))
    for verb in ("plot", "report"):
        capsys.readouterr()
        assert main([verb, str(kfile), "--on", str(rfile), "--json"]) in (0, None)
        got = {d["level"]: d for d in json.loads(capsys.readouterr().out)["analysis"]}
        assert (got["L1"]["bound"], got["L1"]["binding_level"]) == ("not binding", "DRAM")
        assert got["DRAM"]["bound"] == "memory"


def test_profiler_tables_and_csv_say_not_binding_too():
    # ncu/perf/likwid's terminal table and -o x.csv rows (cli/profiled.py)
    from rooflab.cli.profiled import csv_table, table_rows

    a = _two_levels()
    for rows in (table_rows(a), csv_table(a)[0]):
        got = {r["level"]: r["bound"] for r in rows}
        assert got == {"DRAM": "memory", "L1": "not binding (DRAM binds)"}

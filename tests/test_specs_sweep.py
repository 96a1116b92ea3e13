"""`rooflab specs show me.json --sweep` (the bandwidth-vs-working-set staircase kept in a
probe's extras) and `--threads N` (a scaling profile's roof at N threads), on recorded
numbers: no measurement."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.hardware.profile import MachineProfile, profile_to_dict
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.report.sweep_chart import (
    marker_line,
    plot_sweep,
    sweep_table,
    sweep_to_json,
    table_rows,
)

KiB, MiB = 2**10, 2**20


def cpu_point(ws: float, best: float, median: float, samples=None) -> dict:
    return {"ws_bytes_per_thread": ws, "ws_bytes_total": 2 * ws, "bytes_per_s": best,
            "median_bytes_per_s": median, "spread": None, "calibrated": True,
            "samples": samples or [median, best]}


# Two threads sharing one SMT core's 32 KiB L1d and 1 MiB L2; a 32 MiB L3.
CPU_SWEEP = {
    "kernel": "triad", "threads": 2, "byte_model": "b",
    "points": [cpu_point(4 * KiB, 600e9, 580e9), cpu_point(8 * KiB, 610e9, 590e9),
               cpu_point(64 * KiB, 230e9, 220e9), cpu_point(256 * KiB, 240e9, 200e9),
               cpu_point(64 * MiB, 40e9, 38e9), cpu_point(128 * MiB, 41e9, 39e9)],
    "plateaus": [{"level": "L1", "first_bytes_per_thread": 4 * KiB,
                  "last_bytes_per_thread": 8 * KiB, "bytes_per_s": 605e9,
                  "chosen_bytes_per_thread": 8 * KiB},
                 {"level": "L2", "first_bytes_per_thread": 64 * KiB,
                  "last_bytes_per_thread": 256 * KiB, "bytes_per_s": 235e9,
                  "chosen_bytes_per_thread": 256 * KiB},
                 {"level": "DRAM", "first_bytes_per_thread": 64 * MiB,
                  "last_bytes_per_thread": 128 * MiB, "bytes_per_s": 40.5e9,
                  "chosen_bytes_per_thread": 128 * MiB}],
    "reported_caches": {"L1d": 32 * KiB, "L2": MiB, "L3": 32 * MiB, "source": "sysfs"},
    "notes": ["L3: no plateau"],
}
CPU_HOST = {"name": "box", "caches": {"l1d": 32 * KiB, "l2": MiB, "l3": 32 * MiB,
                                      "l3_instances": 1, "l1d_sharing": 2, "l2_sharing": 2}}


def cpu_profile() -> dict:
    measured = Roof("box measured (2 threads)", kind="measured",
                    compute=(Ceiling(1e11, precision="fp64", unit="vector",
                                     provenance="measured"),),
                    memory=(Ceiling(41e9, level="DRAM", provenance="measured"),))
    return profile_to_dict(MachineProfile(host=CPU_HOST, measured=measured,
                                          extras={"threads": 2,
                                                  "bandwidth_sweep": CPU_SWEEP}))


def test_cpu_table_rows_plateaus_and_chosen_points():
    t = sweep_table(cpu_profile())
    assert t.axis == "per thread" and t.threads == 2 and t.source == "extras.bandwidth_sweep"
    assert [r.level for r in t.rows] == ["L1", "L1", "L2", "L2", "DRAM", "DRAM"]
    assert [r.chosen for r in t.rows] == [False, True, False, True, False, True]
    r = t.rows[3]
    assert (r.best, r.median, r.ws_bytes_total) == (240e9, 200e9, 512 * KiB)
    assert r.spread == pytest.approx((240e9 - 200e9) / 200e9)   # from the samples
    # markers per thread: L1d 32 KiB / 2 SMT threads, L2 1 MiB / 2, L3 32 MiB / 2 threads
    assert [(m.name, m.bytes_) for m in t.markers] == [("L1d", 16 * KiB), ("L2", 512 * KiB),
                                                       ("L3", 16 * MiB)]
    assert "L1d 32 KiB per core / 2 SMT threads" in marker_line(t)


def test_marker_rows_sit_where_the_working_set_passes_a_cache():
    rows = table_rows(sweep_table(cpu_profile()))
    firsts = [r[0] for r in rows]
    # 8 KiB < L1d share 16 KiB < 64 KiB; 256 KiB < L2 share 512 KiB < L3 share 16 MiB < 64 MiB
    assert firsts == ["4 KiB", "8 KiB", "16 KiB", "64 KiB", "256 KiB", "512 KiB", "16 MiB",
                      "64 MiB", "128 MiB"]
    assert rows[2][-1] == "<- L1d size" and rows[1][-1] == "L1 *"
    assert rows[4][2:] == ["240", "200", "20 %", "L2 *"]


def test_gpu_sweep_has_another_shape_and_reads_the_same_table():
    """The GPU probe keeps the median as bytes_per_s and plateaus by name (probe/gpu/sweep.py
    sweep_to_dict): best is the largest sample, no point is 'chosen'."""
    gpu = {"points": [{"working_set_bytes": 4 * MiB, "bytes_per_call": 1e9,
                       "bytes_per_s": 9e12, "samples": [8e12, 9e12, 10e12]},
                      {"working_set_bytes": 512 * MiB, "bytes_per_call": 1e9,
                       "bytes_per_s": 4e12, "samples": [3.9e12, 4e12, 4.1e12]}],
           "plateaus": {"L2": {"first_bytes": 4 * MiB, "last_bytes": 4 * MiB,
                               "bytes_per_s": 9e12, "points": 1}}}
    d = {"measured": {}, "host": {"caches": {"L2": 50 * MiB, "L1": 256 * KiB}},
         "extras": {"gpu": {"sweep": {"main": gpu}}}}
    t = sweep_table(d)
    assert t.axis == "device total" and t.source == "extras.gpu.sweep.main"
    assert (t.rows[0].best, t.rows[0].median) == (10e12, 9e12)
    assert t.rows[0].spread == pytest.approx(2e12 / 9e12)
    assert [r.level for r in t.rows] == ["L2", None]
    assert [(m.name, m.bytes_) for m in t.markers] == [("L1", 256 * KiB), ("L2", 50 * MiB)]
    # one working-set column (the device's total), the L1 marker row before 4 MiB
    assert table_rows(t) == [["256 KiB", "", "", "", "<- L1 size"],
                             ["4 MiB", "10000", "9000", "22 %", "L2"],
                             ["50 MiB", "", "", "", "<- L2 size"],
                             ["512 MiB", "4100", "4000", "5 %", ""]]


def test_no_sweep_is_a_clear_error():
    with pytest.raises(InputError, match="me.json: no working-set sweep"):
        sweep_table({"measured": {}, "extras": {}}, "me.json")


def test_chart_draws_the_tables_numbers():
    t = sweep_table(cpu_profile())
    disp = plot_sweep(t)
    ax = disp.ax_
    assert ax.get_xscale() == "log"
    assert list(disp.lines_["best"].get_ydata()) == [600, 610, 230, 240, 40, 41]
    assert list(disp.lines_["median"].get_ydata()) == [580, 590, 220, 200, 38, 39]
    assert list(disp.lines_["chosen"].get_xdata()) == [8 * KiB, 256 * KiB, 128 * MiB]
    dashed = [ln for ln in ax.lines if ln.get_linestyle() == "--" and len(ln.get_xdata()) == 2]
    assert sorted(ln.get_xdata()[0] for ln in dashed) == [16 * KiB, 512 * KiB, 16 * MiB]
    assert len(ax.patches) == 3   # one shaded window per plateau


def test_json_table():
    j = sweep_to_json(sweep_table(cpu_profile()))
    assert j["points"][1] == {"ws_bytes": 8 * KiB, "ws_bytes_total": 16 * KiB,
                              "best_bytes_per_s": 610e9, "median_bytes_per_s": 590e9,
                              "spread": pytest.approx(20e9 / 590e9), "plateau": "L1",
                              "chosen": True, "samples": 2, "calibrated": True}
    assert [p["level"] for p in j["plateaus"]] == ["L1", "L2", "DRAM"]


# --- the verb -------------------------------------------------------------------------------
@pytest.fixture
def profile_file(tmp_path):
    path = tmp_path / "me.json"
    path.write_text(json.dumps(cpu_profile()))
    return str(path)


def test_cli_sweep_table_json_and_chart(profile_file, tmp_path, capsys):
    assert main(["specs", "show", profile_file, "--sweep"]) == 0
    out = capsys.readouterr().out
    assert "bandwidth vs working set" in out and "<- L2 size" in out and "L2 *" in out
    assert "note: L3: no plateau" in out
    assert main(["specs", "show", profile_file, "--sweep", "--json"]) == 0
    j = json.loads(capsys.readouterr().out)
    assert j["sweep"]["axis"] == "per thread" and len(j["sweep"]["points"]) == 6
    png = tmp_path / "ws.png"
    assert main(["specs", "show", profile_file, "--sweep", "-o", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {png}" in capsys.readouterr().err   # stderr (s22 r3 F7)


@pytest.mark.parametrize("args,msg", [
    (["h200", "--sweep"], "--sweep reads a probed profile"),
    (["h200", "--threads", "1"], "--threads reads a probed profile"),
    (["{p}", "--sweep", "-o", "ws.txt"], "must end in .png or .svg"),
    (["{p}", "--sweep", "-o", "ws.png", "--threads", "1"], "drop --threads"),
    (["{p}", "-o", "ws.png"], "-o writes the working-set chart of --sweep; add --sweep"),
    (["{p}", "--threads", "4"], "no roof for 4 threads (thread counts in this profile: 2)"),
])
def test_cli_errors(args, msg, profile_file, capsys):
    args = [a.replace("{p}", profile_file) for a in args]
    assert main(["specs", "show", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and msg in err


def test_cli_threads_shows_the_one_thread_roof(tmp_path, capsys):
    d = cpu_profile()
    d["extras"]["scaling"] = {
        "counts": [1, 2], "reference_threads": 2,
        "by_threads": {"1": {"threads": 1, "DRAM": {"bytes_per_s": 25e9, "samples": [25e9]},
                             "fp64": {"flop_per_s": 5e10, "samples": [5e10]}},
                       "2": {"threads": 2}}}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(d))
    assert main(["specs", "show", str(path), "--threads", "1", "--json"]) == 0
    roof = json.loads(capsys.readouterr().out)["roof"]
    assert roof["name"] == "box measured (1 thread)"
    # the 1-thread DRAM triad, and its real-traffic ceiling: triad x 4/3 (write-allocate
    # read of the store counted too), derived from the same row
    assert [(c["level"], c["bytes_per_s"]) for c in roof["memory"]] == [
        ("DRAM", 25e9), ("DRAM (real traffic)", pytest.approx(25e9 * 4 / 3))]
    assert main(["specs", "show", str(path), "--threads", "1"]) == 0
    out = capsys.readouterr().out
    # ridge at one thread: 50 GFLOP/s / 25 GB/s = 2
    assert "measured (1 thread)" in out and "50 GFLOP/s" in out and "│            2 │" in out

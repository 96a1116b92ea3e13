"""Review 12a #2, #5, #7, #8, #12 and review 12d E, F, L1-L3, L5: `rooflab ai` names the floor
that decides (launch or work), `whatif` carries efficiencies like for like and gives the time
per token over the kernels that moved, `choose` prices FLOP/J at the time with launches.

Hand numbers come from the reviews (seed 004's T4: nominal 65 TFLOP/s fp16 tensor and
320 GB/s, measured 50 TFLOP/s and 270 GB/s, 5 us per launch).
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.units import fmt_seconds

T4_PROFILE = {
    "schema_version": 1, "host": {"name": "colab T4"},
    "nominal": {"name": "T4", "kind": "nominal", "overhead_s": 5e-6,
                "compute": [{"precision": "fp16", "unit": "tensor", "flop_per_s": 6.5e13}],
                "memory": [{"level": "DRAM", "bytes_per_s": 3.2e11}]},
    "measured": {"name": "T4", "kind": "measured", "overhead_s": 5e-6,
                 "compute": [{"precision": "fp16", "unit": "tensor", "flop_per_s": 5e13,
                              "provenance": "measured"}],
                 "memory": [{"level": "DRAM", "bytes_per_s": 2.7e11,
                             "provenance": "measured"}]},
}
MM = 2 * 4096**3   # seed 004's matmul 4096 (FLOP)
# seed 004's three POINTS (004:135): the decode step, matmul 4096 at 50 TFLOP/s, y = x + 1
POINTS = {"schema_version": 1, "kernels": [
    {"name": "decode b=1", "flop": {"fp16": 2.2e9}, "bytes": {"DRAM": 2.2e9}, "seconds": 0.015},
    {"name": "matmul 4096", "flop": {"fp16": MM}, "bytes": {"DRAM": 6 * 4096**2},
     "seconds": MM / 50e12},
    {"name": "x + 1", "flop": {"fp16": 1e8}, "bytes": {"DRAM": 4e8}, "seconds": 4e8 / 270e9}]}


@pytest.fixture
def files(tmp_path):
    prof, pts = tmp_path / "t4prof.json", tmp_path / "pts.json"
    prof.write_text(json.dumps(T4_PROFILE))
    pts.write_text(json.dumps(POINTS))
    only = dict(T4_PROFILE)
    del only["nominal"]
    measured_only = tmp_path / "t4measured.json"
    measured_only.write_text(json.dumps(only))
    return str(prof), str(pts), str(measured_only)


def _run(capsys, argv):
    code = main(argv)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _json(capsys, argv):
    code, out, _ = _run(capsys, argv)
    assert code == 0
    return json.loads(out)


# --- 12a #8 / 12d E: the launch floor that decides "overhead" is printed -----------------

def test_overhead_names_the_launch_floor_seed004_n256(capsys):
    # 3 x 256² x 2 B = 393 kB / 320 GB/s = 1.23 us of work (33.6 MFLOP / 65 T = 0.52 us) <
    # one 5 us launch: overhead-bound, memory-bound on the roof (AI 85.3 < 203).
    code, out, _ = _run(capsys, ["ai", "matmul", "256", "256", "256", "--on", "T4"])
    assert code == 0
    assert ("bound       overhead: one launch (5 us, nominal) > the 1.23 us work floor; on the "
            "roof it is memory-bound (AI 85.3 < ridge 203)") in out
    assert "time floor  5 us (launch); work floor 1.23 us" in out
    # what the launch leaves: 33.6 MFLOP / 5 us = 6.71 TFLOP/s
    assert "6.71 TFLOP/s with the launch" in out
    d = _json(capsys, ["ai", "matmul", "256", "256", "256", "--on", "T4", "--json"])
    assert d["bound"] == "overhead" and d["floor_binding"] == "launch"
    assert d["time_floor_s"] == pytest.approx(5e-6)
    assert d["work_floor_s"] == pytest.approx(3 * 256**2 * 2 / 320e9)
    assert d["launch_floor_s"] == pytest.approx(5e-6) and d["calls"] == 1
    assert d["launch_floor_provenance"] == "nominal" and d["roof_side"] == "memory"
    assert d["analysis"][0]["overhead_floor_s"] == pytest.approx(5e-6)   # kept


def test_overhead_decode_attention_on_h100(capsys):
    # 12d E: bytes 4096 + 512000 + 4096 = 520192 B / 3.35e12 = 155 ns < 5 us.
    d = _json(capsys, ["ai", "attention", "--heads", "32", "--kv-heads", "4", "--q-len", "1",
                       "--kv-len", "500", "--head-dim", "64", "--on", "h100", "--json"])
    assert d["work_floor_s"] == pytest.approx(520192 / 3.35e12)
    assert d["time_floor_s"] == pytest.approx(5e-6)
    code, out, _ = _run(capsys, ["ai", "attention", "--heads", "32", "--kv-heads", "4",
                                 "--q-len", "1", "--kv-len", "500", "--head-dim", "64",
                                 "--on", "h100"])
    assert "overhead: one launch (5 us, nominal) > the 155 ns work floor" in out
    assert "time floor  5 us (launch); work floor 155 ns" in out


def test_work_floor_binds_says_the_launch_is_below(capsys, files):
    # gemv 2048² on the measured T4: 8.4 MB / 270 GB/s = 31.1 us > 5 us (measured launch)
    prof, _, _ = files
    d = _json(capsys, ["ai", "gemv", "2048", "2048", "--on", prof, "--json"])
    assert d["floor_binding"] == "work" and d["bound"] == "memory"
    assert d["time_floor_s"] == pytest.approx(d["bytes"] / 270e9)
    assert d["launch_floor_provenance"] == "measured"
    code, out, _ = _run(capsys, ["ai", "gemv", "2048", "2048", "--on", prof])
    assert "time floor  31.1 us  max(FLOP/P, bytes/B); one launch (5 us, measured) is below" in out


def test_cpu_roof_has_no_launch_floor(capsys):
    d = _json(capsys, ["ai", "matmul", "64", "64", "64", "--on", "EPYC 9654", "--json"])
    assert d["launch_floor_s"] is None and d["floor_binding"] == "work"
    assert d["time_floor_s"] == d["work_floor_s"]


# --- 12a #7: the ridge band on a two-roof profile --------------------------------------

def test_ridge_band_note_on_two_roof_profile(capsys, files):
    prof, _, measured_only = files
    # matmul 570³ fp16: AI 570/3 = 190, between the measured ridge 185 and the nominal 203
    d = _json(capsys, ["ai", "matmul", "570", "570", "570", "--on", prof, "--json"])
    assert d["ai"] == pytest.approx(190) and d["bound"] == "compute"
    (band,) = [n for n in d["notes"] if n.startswith("near ridge")]
    assert "185 on this one, 203 nominal" in band and "compute-side" in band
    assert "memory-side" in band and "seed 004" in band
    code, out, _ = _run(capsys, ["ai", "matmul", "570", "570", "570", "--on", prof])
    assert "note: near ridge" in out
    # AI 182 (546/3) is memory-side on both roofs; a measured-only profile has no band
    d = _json(capsys, ["ai", "matmul", "546", "546", "546", "--on", prof, "--json"])
    assert not [n for n in d["notes"] if "near ridge" in n]
    d = _json(capsys, ["ai", "matmul", "570", "570", "570", "--on", measured_only, "--json"])
    assert not [n for n in d["notes"] if "near ridge" in n]


# --- 12d F, s26: fp4 has its own ceiling on Blackwell, fp8's elsewhere, and says so ------

def test_fp4_note_on_b200(capsys):
    d = _json(capsys, ["ai", "matmul", "4096", "4096", "4096", "--dtype", "fp4", "--on",
                       "b200", "--json"])
    assert d["dtype"] == "fp4" and d["precision"] == "fp4"
    assert d["bytes"] == pytest.approx(3 * 4096**2 * 0.5)          # 25.2 MB: fp4's bytes
    assert d["compute_ceiling"] == "fp4 tensor"
    assert d["time_floor_s"] == pytest.approx(MM / 9e15)            # 15.3 us at fp4
    (note,) = [n for n in d["notes"] if "fp4" in n]
    assert note.startswith("fp4 bytes at 0.5 B per element, block scales not counted")
    code, out, _ = _run(capsys, ["ai", "matmul", "4096", "4096", "4096", "--dtype", "fp4",
                                 "--on", "b200"])
    assert "(matmul, fp4, tensor)" in out and "binding ceiling: fp4 tensor" in out
    d = _json(capsys, ["ai", "matmul", "4096", "4096", "4096", "--dtype", "fp4", "--on",
                       "h100 sxm", "--json"])                        # no fp4 math: fp8's
    assert d["compute_ceiling"] == "fp8 tensor"
    assert d["time_floor_s"] == pytest.approx(MM / 1979e12)
    assert any("has no fp4 ceiling; using fp8 tensor" in n for n in d["notes"])
    d = _json(capsys, ["ai", "matmul", "64", "64", "64", "--dtype", "fp4", "--json"])
    assert any("block scales not counted" in n for n in d["notes"])  # without --on too


# --- 12d L1, L2, L3, L5 ---------------------------------------------------------------

def test_zero_flop_op_prints_no_compute_ceiling(capsys):
    code, out, _ = _run(capsys, ["ai", "embedding", "8", "2048", "--on", "h100"])
    assert code == 0
    roof_part = out.split("on NVIDIA H100 SXM")[1]
    assert "no FLOP: memory and launch only" in roof_part
    assert "tensor" not in roof_part and "ridge       " not in roof_part
    assert "ceilings    DRAM 3.35 TB/s" in roof_part
    d = _json(capsys, ["ai", "embedding", "8", "2048", "--on", "h100", "--json"])
    assert d["roof_side"] is None and d["bound"] == "overhead"
    assert d["work_floor_s"] == pytest.approx(65600 / 3.35e12)       # 19.6 ns


def test_fmt_seconds_picoseconds(capsys):
    assert fmt_seconds(1.19e-12) == "1.19 ps"
    assert fmt_seconds(4 / 3.35e12) == "1.19 ps"
    assert fmt_seconds(155e-9) == "155 ns" and fmt_seconds(0.0) == "0 ns"
    assert fmt_seconds(9.9996e-10) == "1 ns"                        # rounds up, no '1e+03 ps'
    # a one-element reduction on an H100: 4 B / 3.35 TB/s = 1.19 ps (was '0.00119 ns')
    code, out, _ = _run(capsys, ["ai", "reduction", "1", "--on", "h100"])
    assert "work floor 1.19 ps" in out and "0.00119" not in out


def test_int8_vector_op_rate_in_the_ceilings_unit(capsys):
    # int8 layernorm on an H100 is held to fp16 vector math (134 TFLOP/s): FLOP/s, not TOP/s
    code, out, _ = _run(capsys, ["ai", "layernorm", "8192", "8192", "--dtype", "int8",
                                 "--on", "h100"])
    assert "ceilings    fp16 vector 134 TFLOP/s" in out and "TOP/s" not in out
    # an int8 tensor ceiling keeps OP/s (A100's 624 TOPS)
    code, out, _ = _run(capsys, ["ai", "matmul", "4096", "4096", "4096", "--dtype", "int8",
                                 "--on", "A100"])
    assert "int8 tensor 624 TOP/s" in out


@pytest.mark.parametrize("value", ["inf", "nan", "-1"])
def test_flop_per_element_error_names_the_option(capsys, value):
    code, out, err = _run(capsys, ["ai", "elementwise", "100", "--flop-per-element", value])
    # inf and nan are refused as typed since s34 F (cli/finite_options.py), -1 by ai's check
    assert code == 2 and "--flop-per-element must be a finite number" in err
    assert "Traceback" not in err and "flop[fp16]" not in err


# --- 12a #2: per token over the kernels the batch moved ---------------------------------

def test_per_token_over_the_batched_kernels_only(capsys, files):
    prof, pts, _ = files
    code, out, _ = _run(capsys, ["whatif", pts, "--on", prof, "--batch", "64", "--only",
                                 "decode b=1"])
    assert code == 0
    # 15 ms / 64 = 234 us (the matmul and x + 1 are not batched): not 19.2 ms -> 300 us
    line = next(ln for ln in out.splitlines() if ln.startswith("per token"))
    assert "15 ms -> 234 us, 64.0x the tokens/s" in line       # 3 figures from 10
    assert "over decode b=1 only" in line and "not batched" in line
    assert "19.2 ms -> 300 us" not in out


# --- 12a #5: whatif --hardware takes the efficiency like for like ----------------------

def test_hardware_move_like_for_like(capsys, files):
    prof, pts, measured_only = files
    d = _json(capsys, ["whatif", pts, "--on", prof, "--hardware", "H100", "--json"])
    rows = {r["kernel"]: r for r in d["moves"]}
    # matmul 4096 at 50 of 65 TFLOP/s: e = (MM / 65e12) / (MM / 50e12 - 5 us) = 0.771 of the
    # datasheet roof; on the H100's 989.5: 5 us + MM / 989.5e12 / e = 185 us (was 144 us)
    e = (MM / 65e12) / (MM / 50e12 - 5e-6)
    assert rows["matmul 4096"]["after_s"] == pytest.approx(5e-6 + MM / 989.5e12 / e)
    assert rows["matmul 4096"]["after_s"] == pytest.approx(185e-6, rel=0.005)
    # decode: e = 6.875 ms / (15 ms - 5 us); 5 us + 2.2e9 / 3.35e12 / e = 1.44 ms (was 1.21)
    e = (2.2e9 / 320e9) / (0.015 - 5e-6)
    assert rows["decode b=1"]["after_s"] == pytest.approx(5e-6 + 2.2e9 / 3.35e12 / e)
    assert d["efficiency_basis"] == {"name": "T4", "kind": "nominal", "target_kind": "nominal"}
    assert "like for like" in d["assumption"]
    # the same as from the catalog T4 (review: 185 us, 1.44 ms, total 1.77 ms)
    c = _json(capsys, ["whatif", pts, "--on", "T4", "--hardware", "H100", "--json"])
    assert d["total_after_s"] == pytest.approx(c["total_after_s"], rel=1e-9)
    assert d["total_after_s"] == pytest.approx(1.77e-3, rel=0.005)
    # a measured roof alone: carried onto the datasheet, and said so
    m = _json(capsys, ["whatif", pts, "--on", measured_only, "--hardware", "H100", "--json"])
    assert m["efficiency_basis"]["kind"] == "measured"
    assert "not like for like" in m["assumption"] and "optimistic" in m["assumption"]
    mrows = {r["kernel"]: r for r in m["moves"]}
    # timed at exactly the measured 50 TFLOP/s roof, its time holds no room for the 5 us
    # launch (review s21 r3 F1: the launches take at most the time above the work floor):
    # ratio 1 and none of its launch floor held (retime_launch.launch_share 0), so the
    # prediction adds none back either (review s21 x2 F1: adding the full 5 us made an
    # unchanged kernel slower): MM / 989.5e12 = 138.9 us (143.9 us with 5 us added; 143.6
    # us before r3 F1, a work ratio of 1.0018 above the roof)
    assert mrows["matmul 4096"]["after_s"] == pytest.approx(MM / 989.5e12)
    code, out, _ = _run(capsys, ["whatif", pts, "--on", prof, "--hardware", "H100"])
    assert "efficiency taken against T4 (nominal)" in " ".join(out.split())


# --- 12a #12: choose prices FLOP/J at the time with launches ---------------------------

def test_choose_flop_per_joule_with_launches(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")   # the table whole, as in the review
    doc = tmp_path / "d.json"
    code, out, _ = _run(capsys, ["llm", "tinyllama-1.1b", "--on", "T4", "--context", "500",
                                 "--phase", "decode", "--json"])
    assert code == 0
    doc.write_text(out)
    d = _json(capsys, ["choose", str(doc), "--among", "T4,L4,A100,H100,jetson-orin-nano",
                       "--json"])
    rows = {r["name"]: r for r in d["devices"]}
    h100, t4 = rows["NVIDIA H100 SXM"], rows["NVIDIA T4"]
    # H100: 2.16 GFLOP / (1.71 ms x 700 W) = 1.80 GFLOP/J (the work floor's 622 us gave 4.96)
    assert h100["with_launches_s"] == pytest.approx(1.71e-3, rel=0.01)
    assert h100["flop_per_joule"] == pytest.approx(1.80e9, rel=0.01)
    assert h100["work_floor_flop_per_joule"] == pytest.approx(4.96e9, rel=0.01)
    assert h100["energy_j"] == pytest.approx(700 * h100["with_launches_s"])
    assert h100["work_floor_energy_j"] == pytest.approx(700 * h100["work_floor_s"])
    # T4: 2.16 G / (7.33 ms x 70 W) = 4.21 GFLOP/J: more per joule than the H100 at TDP
    assert t4["flop_per_joule"] == pytest.approx(4.21e9, rel=0.01)
    assert t4["flop_per_joule"] > h100["flop_per_joule"]
    code, out, _ = _run(capsys, ["choose", str(doc), "--among", "T4,H100"])
    assert "1.8 GFLOP/J" in out and "4.96 GFLOP/J" not in out

"""s26 r3 F1: a what-if prediction jumped ~9x as the measured time crossed calls x the launch
floor, and a --hardware round trip did not return the measured time (retime_launch).

The reviewer's kernel: 100 calls, 1e8 fp16 FLOP and 1e8 B of DRAM. On the nominal H200
(4.8 TB/s, 5 us a launch) its work floor is 1e8 / 4.8e12 = 20.83 us and its launch floor
L = 100 x 5 us = 500 us; on the T4 (320 GB/s) the work floor is 312.5 us, 15x (r = 15), the
launch floor the same 500 us. Timed at 490 us it was read as all work (4.25 % of the roof:
7.35 ms on the T4), at 510 us as all launches (802 us). Now the launches held rise one for
one across [L/2, 3L/2] = [250, 750] us: at 490 us, 490 - 250 = 240 us of launches (share
0.48), work 250 us at 20.83 / 250 of the roof; on the T4 240 + 15 x 250 = 3990 us. At 510
us, 260 + 15 x 250 = 4010 us. --batch 8 (no op: all activations, bytes and FLOP x 8, r =
8): 240 + 8 x 250 = 2240 us and 260 + 2000 = 2260 us.
"""

from __future__ import annotations

import json
import math

import pytest

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.model import Kernel
from rooflab.model.retime_launch import LAUNCH_RANGE_META, LAUNCH_SHARE_META, band_line
from rooflab.model.whatif import change_batch, change_precision, move_hardware, scale_bytes

H200, T4 = load_roof("h200"), load_roof("T4")


def small(seconds: float, calls: int = 100, nbytes: float = 1e8, **meta) -> Kernel:
    return Kernel("small", {"fp16": 1e8}, {"DRAM": nbytes}, seconds=seconds, calls=calls,
                  meta=meta)


def on_t4(k: Kernel) -> Kernel:
    return move_hardware(H200, [k], T4).moves[0][1]


def batch8(k: Kernel) -> Kernel:
    return change_batch(H200, [k.with_(meta={**k.meta, "batch": 1})], 8).moves[0][1]


def test_reviewers_pair_reads_alike_either_side_of_the_floor():
    # old: 7.35 ms and 802 us (9.2x apart); 3.92 ms and 656 us under --batch 8
    assert on_t4(small(490e-6)).seconds == pytest.approx(3990e-6, rel=1e-9)
    assert on_t4(small(510e-6)).seconds == pytest.approx(4010e-6, rel=1e-9)
    assert batch8(small(490e-6)).seconds == pytest.approx(2240e-6, rel=1e-9)
    assert batch8(small(510e-6)).seconds == pytest.approx(2260e-6, rel=1e-9)


def to_h200(k: Kernel) -> Kernel:
    return move_hardware(T4, [k], H200).moves[0][1]


@pytest.mark.parametrize("change,nbytes", [
    (on_t4, 1e8), (batch8, 1e8), (to_h200, 1e7),
    (lambda k: scale_bytes(H200, [k], 0.5).moves[0][1], 1e8),
    (lambda k: change_precision(H200, [k], "fp8").moves[0][1], 1e8)])
def test_prediction_rises_with_the_measured_time(change, nbytes):
    # 50 us to 1.5 ms in 5 us steps, through the band [250, 750] us: never a faster
    # prediction for a slower kernel, and no step of 5 us moves it more than r x 5 us.
    # On the T4 1e7 B take 31.25 us, so the times are all above the work floor (within
    # L under it a slower time may read a little faster: retime_launch.launch_held_s)
    times = [50e-6 + 5e-6 * i for i in range(291)]
    pred = [change(small(t, nbytes=nbytes)).seconds for t in times]
    for a, b in zip(pred[:-1], pred[1:], strict=True):
        assert b >= a * (1 - 1e-12)
        assert b - a <= 15 * 5e-6 * (1 + 1e-9)


def test_far_from_the_floor_the_reading_is_reports():
    # below L/2 all work (review r1 F6's GPU-side reading): 200 us -> 15 x 200 us = 3 ms
    assert on_t4(small(200e-6)).seconds == pytest.approx(3e-3, rel=1e-9)
    # above 3L/2 all of L held: 2 ms -> 500 us + 15 x 1.5 ms = 23 ms
    assert on_t4(small(2e-3)).seconds == pytest.approx(23e-3, rel=1e-9)
    # a GPU-side (ncu) time holds none at any length: 2 ms -> 15 x 2 ms = 30 ms
    assert on_t4(small(2e-3, source="ncu")).seconds == pytest.approx(30e-3, rel=1e-9)


@pytest.mark.parametrize("seconds,calls", [(1e-6, 1), (490e-6, 100), (510e-6, 100),
                                           (2e-3, 100), (4e-6, 3), (30e-6, 1)])
def test_hardware_round_trip_returns_the_measured_time(seconds, calls):
    # the reviewer's minimal case: 1 call, 1000 FLOP, 1000 B, 1 us: 1 us -> 15 us -> 5.67 us
    k = (Kernel("one", {"fp16": 1e3}, {"DRAM": 1e3}, seconds=seconds, calls=calls)
         if calls != 100 else small(seconds))
    there = move_hardware(H200, [k], T4).moves[0][1]
    back = move_hardware(T4, [there], H200).moves[0][1]
    assert back.seconds == pytest.approx(seconds, rel=1e-9)
    assert 0.0 <= there.meta[LAUNCH_SHARE_META] <= 1.0


def test_minimal_case_numbers():
    # work floors 1000 / 4.8e12 and 1000 / 320e9: r = 15; 1 us is below L/2 = 2.5 us, so
    # no launch held: 15 us on the T4, which carries share 0 and reads back as 1 us
    k = Kernel("one", {"fp16": 1e3}, {"DRAM": 1e3}, seconds=1e-6)
    there = move_hardware(H200, [k], T4).moves[0][1]
    assert there.seconds == pytest.approx(15e-6, rel=1e-9)
    assert there.meta[LAUNCH_SHARE_META] == 0.0


@pytest.mark.parametrize("bad", ["0.5", 2.0, -0.1, True, float("nan"), [0.5]])
def test_a_hand_edited_share_is_passed_over(bad):
    # not a number in [0, 1]: the time is read by the band, as if the key were absent
    assert (on_t4(small(490e-6, **{LAUNCH_SHARE_META: bad})).seconds
            == pytest.approx(3990e-6, rel=1e-9))


def test_round_trip_through_whatif_files(tmp_path, capsys):
    src = tmp_path / "one.json"
    src.write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": "one", "flop": {"fp16": 1e3}, "bytes": {"DRAM": 1e3}, "seconds": 1e-6,
         "calls": 1}]}))
    out = tmp_path / "t4.json"
    assert main(["whatif", str(src), "--on", "h200", "--hardware", "t4", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["whatif", str(out), "--on", "t4", "--hardware", "h200", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (move,) = doc["moves"]
    assert move["before_s"] == pytest.approx(15e-6, rel=1e-9)
    assert math.isclose(move["after_s"], 1e-6, rel_tol=1e-9)   # old: 5.67 us


def test_no_jump_at_the_work_floor():
    # 1 call of 3.2 MB on the T4 (work floor 10 us, L = 5 us) onto the H200 (r = 1/15):
    # efficiency_of's split held 5 us of launch at 9.9 us and 0.1 us at 10.1 us, so the
    # H200 read 5 + 4.9 / 15 = 5.33 us and 0.1 + 10 / 15 = 0.77 us. Now the launches held
    # under the floor are capped at the distance to it: 0.1 us either side
    near = [to_h200(Kernel("k", {"fp16": 1.0}, {"DRAM": 3.2e6}, seconds=t)).seconds
            for t in (9.9e-6, 10.1e-6)]
    assert near[0] == pytest.approx(0.1e-6 + 9.8e-6 / 15, rel=1e-9)
    assert near[1] == pytest.approx(0.1e-6 + 10e-6 / 15, rel=1e-9)


def test_a_time_in_the_band_carries_both_readings_as_a_range():
    # 490 us: none held, 15 x 490 us = 7.35 ms; all it has room for (490 - 20.83 us held,
    # the work at the roof), 469.17 us + 312.5 us = 781.7 us: the two old answers either
    # side of L, with the prediction between them
    new = on_t4(small(490e-6))
    lo, hi = new.meta[LAUNCH_RANGE_META]
    assert lo == pytest.approx(490e-6 - 1e8 / 4.8e12 + 312.5e-6, rel=1e-9)
    assert hi == pytest.approx(7.35e-3, rel=1e-9)
    assert lo < new.seconds < hi
    # far from the floor there is one reading, and a chained prediction reads its own share:
    # no range, and none left over from the first step
    assert LAUNCH_RANGE_META not in on_t4(small(2e-3)).meta
    back = move_hardware(T4, [new], H200).moves[0][1]
    assert LAUNCH_RANGE_META not in back.meta
    assert back.meta[LAUNCH_SHARE_META] == pytest.approx(0.48, rel=1e-9)


def test_band_line_names_the_kernel_and_its_range():
    # for whatif_warnings: the 490 us kernel's line gives both readings' times; a kernel
    # far from the floor gets none
    w = move_hardware(H200, [small(490e-6)], T4)
    line = band_line(w.moves, H200.overhead_s)
    assert line.startswith("small (490 us over 100 calls: 782 us-7.35 ms): measured within "
                           "half of calls x the 5 us launch floor")
    assert band_line(move_hardware(H200, [small(2e-3)], T4).moves, 5e-6) == ""

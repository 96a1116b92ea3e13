"""The gain of an overhead-bound kernel is taken against the floor it can reach: the larger
of its work floor and its launch floor (seed 004: RMSNorm on a T4 is launch-bound).

Hand numbers, T4 (fp16 tensor 65 TFLOP/s, fp16 vector 16.2, DRAM 320 GB/s, 5 us launch):
an RMSNorm of 4096 fp16 values, 8192 FLOP over 12288 B, one call of 6 us.
  work floor  = max(8192 / 16.2e12, 12288 / 320e9) = 38.4 ns
  launch floor = 1 x 5 us = 5 us -> reachable = max(38.4 ns, 5 us) = 5 us
  saved = 6 - 5 = 1 us (1/6 = 17 % of the total), speed-up 6 / 5 = 1.2x
(the work floor alone says 6 us / 38.4 ns = 156x: that stays the point's headroom).
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup_roof
from rooflab.model import Kernel, analyze
from rooflab.model.diagnose import diagnose

RMS = {"name": "rmsnorm", "flop": {"fp16": 8192}, "bytes": {"DRAM": 12288},
       "seconds": 6e-6, "meta": {"op": "rmsnorm"}}


def _diagnosis(**kw):
    k = Kernel(RMS["name"], RMS["flop"], RMS["bytes"], seconds=kw.get("seconds", 6e-6),
               calls=kw.get("calls", 1), meta=RMS["meta"])
    (d,) = diagnose(analyze(lookup_roof("T4"), [k]))
    return d


def test_overhead_bound_gain_uses_the_launch_floor():
    d = _diagnosis()
    assert d.bound == "overhead"
    assert d.point.floor_s == pytest.approx(38.4e-9)
    assert d.reachable_s == pytest.approx(5e-6)
    assert d.gain_s == pytest.approx(1e-6)
    assert d.headroom == pytest.approx(156.25)       # the point's height, unchanged
    assert d.gain_words == ("1 us saved (16.7 % of the total) if it reached its roof "
                            "(1.20x faster; the 5 us launch/dispatch floor stays)")


def test_many_calls_gain():
    # 22 calls (seed 004's 22 layers) in 154 us: launch floor 110 us, 154 / 110 = 1.4x,
    # 44 us saved (44 / 154 = 28.6 % of the total, one decimal as the table's cell)
    d = _diagnosis(seconds=154e-6, calls=22)
    assert d.reachable_s == pytest.approx(110e-6)
    assert "44 us saved (28.6 % of the total)" in d.gain_words
    assert "(1.40x faster; the 110 us launch/dispatch floor stays)" in d.gain_words


def test_work_bound_gain_keeps_the_work_floor():
    # seed 004 decode b=1: 2.2e9 B / 320e9 = 6.875 ms floor > 5 us launch: 15 / 6.875 = 2.18x
    k = Kernel("decode b=1", {"fp16": 2.2e9}, {"DRAM": 2.2e9}, seconds=0.015,
               meta={"op": "decode"})
    (d,) = diagnose(analyze(lookup_roof("T4"), [k]))
    assert d.reachable_s == pytest.approx(6.875e-3)
    assert d.gain_words == ("8.12 ms saved (54.2 % of the total) if it reached its roof "
                            "(2.18x faster)")


def test_report_prints_the_floored_gain(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    path = tmp_path / "rms.json"
    path.write_text(json.dumps({"kernels": [RMS]}))
    assert main(["report", str(path), "--on", "T4"]) == 0
    out = capsys.readouterr().out
    assert "gain: 1 us saved (16.7 % of the total) if it reached its roof (1.20x faster" in out
    assert "156" not in out.split("gain:")[1].splitlines()[0]

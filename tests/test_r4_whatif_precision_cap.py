"""Review r4 (CPU, numba) F4: `whatif --precision fp32` on an fp64 compute-bound matmul
multiplied through whatever fp32/fp64 ratio the probe measured: 13.18x on a profile whose
fp64 read 17.8 GFLOP/s (15 % of nominal), 0.86x on one whose fp32 read 101 < fp64 118; the
kernel measured 1.31x, and Zen 4's nominal ratio is 2x (236/118 GFLOP/s). With the nominal
roof given, the gain is capped at the nominal ratio and the assumption says why."""

from __future__ import annotations

import pytest

from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel
from rooflab.model.whatif import change_precision

G = 1e9
NOMINAL = Roof("zen4", "nominal", compute=(Ceiling(118 * G, "fp64", "vector"),
                                           Ceiling(236 * G, "fp32", "vector")),
               memory=(Ceiling(60 * G, level="DRAM"),))


def _measured(fp64: float, fp32: float) -> Roof:
    return Roof("zen4", "measured",
                compute=(Ceiling(fp64, "fp64", "vector", provenance="measured"),
                         Ceiling(fp32, "fp32", "vector", provenance="measured")),
                memory=(Ceiling(10 * G, level="DRAM", provenance="measured"),))


# the naive 512^3 fp64 matmul: 2 x 512^3 = 268435456 FLOP, 3 x 512^2 x 8 = 6291456 B,
# AI 42.7 FLOP/B (compute-bound: ridge 17.8 / 10 = 1.78), 394 ms measured
MM = Kernel("mm_512", flop={"fp64": 268435456}, bytes={"DRAM": 6291456}, seconds=0.394)
# an fp32 kernel not moved (--only mm_512): must keep its measured time
OTHER = Kernel("saxpy", flop={"fp32": 2e6}, bytes={"DRAM": 12e6}, seconds=0.002)


def _speedup(w, name="mm_512"):
    old, new = next((o, n) for o, n in w.moves if o.name == name)
    return old.seconds / new.seconds


def test_measured_ratio_past_nominal_is_capped():
    roof = _measured(17.8 * G, 234 * G)           # q.json: 234 / 17.8 = 13.15x measured
    assert _speedup(change_precision(roof, [MM], "fp32")) == pytest.approx(234 / 17.8)
    w = change_precision(roof, [MM], "fp32", nominal=NOMINAL)
    # efficiency e = (268435456 / 0.394) / 17.8e9; fp32 ceiling capped at 2 x 17.8 = 35.6
    # GFLOP/s: new time = 268435456 / 35.6e9 / e = 0.394 / 2 = 0.197 s (memory 3.1 MB /
    # 10 GB/s = 0.31 ms is below it): 2.00x, not 13.15x
    assert _speedup(w) == pytest.approx(2.0)
    assert "measured fp32/fp64 vector = 13.1x" in w.assumption   # 13.146: 3 figures
    assert "nominal 2.00x" in w.assumption and "35.6 GFLOP/s" in w.assumption
    assert w.after.roof.find_compute("fp32", "vector").provenance == "derived"


def test_fp32_measured_slower_uses_the_nominal_ratio():
    roof = _measured(117.7 * G, 100.8 * G)        # t.json: 100.8 / 117.7 = 0.86x
    assert _speedup(change_precision(roof, [MM], "fp32")) == pytest.approx(100.8 / 117.7)
    w = change_precision(roof, [MM], "fp32", nominal=NOMINAL)
    assert _speedup(w) == pytest.approx(2.0)      # 236 / 118: the nominal ratio
    assert "the probe measured fp32 slower than fp64" in w.assumption


def test_ratio_within_nominal_is_untouched_and_others_keep_their_time():
    roof = _measured(69.2 * G, 100 * G)           # 1.45x <= 2x: the measured ratio stands
    w = change_precision(roof, [MM, OTHER], "fp32", nominal=NOMINAL)
    assert _speedup(w) == pytest.approx(100 / 69.2)
    assert "nominal" not in w.assumption
    capped = change_precision(_measured(17.8 * G, 234 * G), [MM, OTHER], "fp32",
                              names=["mm_512"], nominal=NOMINAL)
    assert [o.name for o, _ in capped.moves] == ["mm_512"]
    kept = next(k for k in capped.after.kernels if k.name == "saxpy")
    assert kept.seconds == 0.002                  # not retimed on the capped roof


def test_the_cli_caps_the_gain_with_the_profiles_nominal_roof(tmp_path, capsys):
    """`rooflab whatif all.json --on q.json --precision fp32` (the review's command): the
    profile holds the measured roof (fp32/fp64 13.15x) and the nominal one (2x)."""
    import json

    from rooflab.cli.main import main

    doc = {"schema_version": 1, "host": {"name": "zen4 vm"}}
    for kind, (fp64, fp32, dram) in (("nominal", (118 * G, 236 * G, 60 * G)),
                                     ("measured", (17.8 * G, 234 * G, 10 * G))):
        doc[kind] = {"name": "zen4", "kind": kind, "compute": [
            {"precision": p, "unit": "vector", "flop_per_s": v, "kind": kind}
            for p, v in (("fp64", fp64), ("fp32", fp32))],
            "memory": [{"level": "DRAM", "bytes_per_s": dram, "kind": kind}]}
    prof = tmp_path / "q.json"
    prof.write_text(json.dumps(doc))
    pts = tmp_path / "all.json"
    pts.write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": "mm_512", "flop": {"fp64": 268435456}, "bytes": {"DRAM": 6291456},
         "seconds": 0.394}]}))
    assert main(["-q", "whatif", str(pts), "--on", str(prof), "--precision", "fp32",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # 0.394 s -> 0.197 s: the nominal 236 / 118 = 2x, not the probe's 234 / 17.8 = 13.15x
    assert data["speedup"] == pytest.approx(2.0)

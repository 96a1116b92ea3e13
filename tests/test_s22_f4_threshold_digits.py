"""Session 22 f4, review r4 F3: a number printed beside the line that classed it keeps
its side of that line.

On a toy roof (fp64 1 TFLOP/s, DRAM 100 GB/s: ridge 10) a kernel at 9.996 % of its roof is
latency-bound (< 10 %) and read '10 %' / 'only 10 % (< 10 %)'; an AI of 9.996 under the ridge
read 'AI 10 FLOP/B < ridge 10 (1x left of it)'; a kernel at 49.95 % (headroom 2.002)
'2.00x (>2x)'; the CI gate at 10 % failed on 'p9_996 (10.0 %)', and at 99.96 % on a kernel
built at exactly 99.96 % whose 100 / headroom came out at 99.95999999 ('(100.0 %)').
"""

from __future__ import annotations

import json

from rooflab.cli.main import main
from rooflab.files import write_json
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.diagnose import diagnose
from rooflab.model.display import analysis_text
from rooflab.model.display_results import diagnosis_text
from rooflab.model.kernel import Kernel
from rooflab.model.roof_schema import roof_to_dict

ROOF = Roof(name="toy", compute=(Ceiling(1e12, precision="fp64"),),
            memory=(Ceiling(1e11, level="DRAM"),))
PROV = {"flop": "counted", "bytes": "counted", "seconds": "measured"}


def _k(name: str, flop: float, nbytes: float, seconds: float) -> Kernel:
    return Kernel(name=name, flop={"fp64": flop}, bytes={"DRAM": nbytes}, seconds=seconds,
                  provenance=PROV)


# AI 100 (compute side), 9.996 % of 1 TFLOP/s: 100 GFLOP/s achieved over 0.1 s
P9_996 = _k("p9_996", 1e10, 1e8, 1e10 / (0.09996 * 1e12))
# AI 100, 49.95 %: headroom 1 / 0.4995 = 2.002
P49_95 = _k("p49_95", 1e10, 1e8, 1e10 / (0.4995 * 1e12))
# AI 9.996 (memory side of the ridge 10) at 99.96 % of its 999.6 GFLOP/s attainable
RIDGE_MINUS = _k("ridge_minus", 1e10, 1e10 / 9.996, 1e10 / (0.9996 * 9.996 * 1e11))


def _diag(*kernels: Kernel) -> dict:
    return {d.kernel: d for d in diagnose(analyze(ROOF, list(kernels)))}


def test_latency_evidence_shows_the_percent_under_the_ten_percent_line():
    d = _diag(P9_996)["p9_996"]
    assert d.bound == "latency"
    # old: 'achieved 100 GFLOP/s is only 10% (< 10%) of the 1 TFLOP/s attainable'
    assert "achieved 100 GFLOP/s is only 9.996 % (< 10 %) of the 1 TFLOP/s" in d.evidence
    # the notebook rows (old: '10.0% of roof' in the analysis, '10% of roof' here)
    assert "100 GFLOP/s of 1 TFLOP/s  9.996 % of roof  latency-bound" in analysis_text(
        analyze(ROOF, [P9_996]))
    assert "latency-bound (fp64), 9.996 % of roof" in diagnosis_text(d)


def test_ai_beside_the_ridge_it_is_left_of():
    d = _diag(RIDGE_MINUS)["ridge_minus"]
    assert d.bound == "memory"
    # old: 'AI 10 FLOP/B < ridge 10 (1x left of it)'; 10 / 9.996 = 1.0004
    assert d.evidence.startswith("AI 9.996 FLOP/B < ridge 10 (1.0004x left of it)")


def test_headroom_beside_the_two_x_flag():
    d = _diag(P49_95)["p49_95"]
    assert d.flagged and abs(d.headroom - 1 / 0.4995) < 1e-12
    # old: 'headroom 2.00x (>2x)' and '50% of roof'
    text = diagnosis_text(d)
    assert "headroom 2.002x (>2x)" in text
    assert "49.95 % of roof" in text


def test_percent_text_adds_digits_only_at_a_class_line():
    from rooflab.sides import pct_text

    # units.fmt_pct's rounding elsewhere (whole percents, two figures under 10 %: 9.4 %,
    # review s33 J1); at the
    # 10 % latency line, the 50 % (>2x) flag and the 105 % above-roof tolerance, the digits
    # that keep the side
    assert [pct_text(x) for x in (9.996, 10.004, 10.0, 49.95, 104.96, 9.4, 99.51, 0.07)] == [
        "9.996 %", "10.004 %", "10 %", "49.95 %", "104.96 %", "9.4 %", "100 %", "0.07 %"]
    assert pct_text(49.95, space=True) == "49.95 %"


def _files(tmp_path) -> tuple[str, str]:
    roof = tmp_path / "toy.json"
    write_json(roof, {"roof": roof_to_dict(ROOF)})
    kernels = tmp_path / "edge.json"
    kernels.write_text(json.dumps({"schema_version": 2, "kernels": [
        {"name": k.name, "flop": dict(k.flop), "bytes": dict(k.bytes), "seconds": k.seconds,
         "provenance": PROV} for k in (P9_996, P49_95, RIDGE_MINUS)]}))
    return str(kernels), str(roof)


def test_gate_line_keeps_the_kernel_under_the_line(tmp_path, capsys):
    kernels, roof = _files(tmp_path)
    assert main(["report", kernels, "--on", roof, "--fail-below", "10"]) == 1
    err = capsys.readouterr().err
    # old: 'below 10 % of the roof: p9_996 (10.0 %)'
    assert "below 10 % of the roof: p9_996 (9.996 %)" in err
    assert main(["report", kernels, "--on", roof, "--fail-below", "50"]) == 1
    assert "p49_95 (49.95 %)" in capsys.readouterr().err   # old: '(50.0 %)'


def test_gate_passes_a_kernel_at_the_line_within_float_error(tmp_path, capsys):
    kernels, roof = _files(tmp_path)
    # ridge_minus runs at 99.96 % (100 / headroom = 99.95999999...): at the line, not under
    assert main(["report", kernels, "--on", roof, "--fail-below", "99.96", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [b["kernel"] for b in doc["below"]] == ["p9_996", "p49_95"]

"""Review s33 H: `rooflab llm --ttft-ms` places a measured prefill (time to first token) on
the roof as --tpot-ms places a decode step: % of the roof, x the floor, MFU and MBU.

Hand calculation, TinyLlama-1.1B on a T4 (fp16 tensor 65 TFLOP/s, DRAM 320 GB/s, ridge
203 FLOP/B), --prompt 436, batch 1, fp16:
  matrix weights per layer: q 2048 x 2048 + k, v 2 x 2048 x 256 + o 2048 x 2048
    + gate/up/down 3 x 2048 x 5632 = 44,040,192; x 22 layers = 968,884,224 (N without
    the embedding, a lookup, and lm_head, which a prefill runs on the last position only)
  FLOP ~ 2 x N x 436 = 2 x 968,884,224 x 436 = 844.87 G
    + attention (causal, both matmuls) 2 x 2 x 32 heads x 64 x (436 x 437 / 2) = 780.5 M
      a layer, x 22 = 17.17 G
    + lm_head 2 x 2048 x 32000 = 0.131 G + rope/norm/residual/act_mul ~0.43 G
    = 862.6 G (the table's step row: 863 G)
  floor (the printed prefill table's floor column, each kernel max(FLOP/P, bytes/B)):
    q, o 1.24 ms each + gate, up, down 3.4 ms each (compute-bound: 10.06 G / 65 T =
    155 us a call) + k, v 210 us each + rope 276 + attention 276 + residual 737 + norm 492
    + act_mul 1010 + lm_head 410 + embedding, final norm 11.2 each = 16.33 ms
    (the matmuls' FLOP alone at 65 TFLOP/s: 844.87 G / 65 T = 13.0 ms)
  bytes: weights 2.07 GB + activations 1.57 GB + KV 19.6 MB = 3.658 GB; AI 862.6 / 3.658
    = 236 > 203: compute-bound
A measured TTFT of 40 ms:
  achieved 862.6 G / 0.040 s = 21.6 TFLOP/s; MFU = 21.6 T / 65 T = 0.332 (33 %), the %
    of the roof (compute-bound)
  MBU = 3.658 GB / 0.040 s = 91.4 GB/s over 320 GB/s = 0.286 (29 %)
  x the floor = 40 / 16.33 = 2.45
"""

from __future__ import annotations

import ast
import inspect
import json
import textwrap

import pytest

from rooflab.cli.main import main

PREFILL = ["llm", "tinyllama-1.1b", "--on", "T4", "--prompt", "436", "--ttft-ms", "40"]
LINE = ("measured TTFT 40 ms: 21.6 TFLOP/s at AI 236 = 33 % of the roof, 2.45x the floor; "
        "MFU 33 % (of fp16 tensor 65 TFLOP/s), MBU 29 % (91.4 GB/s of DRAM 320 GB/s)")


def test_the_json_places_the_prefill_by_hand(capsys):
    assert main([*PREFILL, "--phase", "prefill", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    pre, m = data["llm"]["prefill"], data["llm"]["measured"]["prefill"]
    n = 22 * (2 * 2048 * 2048 + 2 * 2048 * 256 + 3 * 2048 * 5632)
    assert n == 968_884_224
    attention = 22 * 2 * 2 * 32 * 64 * (436 * 437 // 2)
    assert pre["flop"] == pytest.approx(2 * n * 436 + attention + 2 * 2048 * 32000,
                                        rel=0.001)                      # 862.6 G
    assert pre["floor_s"] == pytest.approx(16.33e-3, rel=0.002)
    assert m["ttft_s"] == 0.04
    assert m["achieved_flop_per_s"] == pytest.approx(pre["flop"] / 0.04)
    assert m["mfu"] == pytest.approx(pre["flop"] / 0.04 / 65e12)
    assert m["mfu"] == pytest.approx(0.332, abs=0.001)
    assert m["mbu"] == pytest.approx(pre["bytes"] / 0.04 / 320e9)
    assert m["mbu"] == pytest.approx(0.286, abs=0.001)
    assert m["achieved_bytes_per_s"] == pytest.approx(91.4e9, rel=0.001)
    assert m["floor_ratio"] == pytest.approx(0.04 / pre["floor_s"])
    assert m["floor_ratio"] == pytest.approx(2.45, abs=0.005)
    assert m["gap_s"] == pytest.approx(0.04 - pre["floor_s"])
    # compute-bound: MFU is the percent of the roof
    assert 100 * m["mfu"] == pytest.approx(m["percent_of_roof"], rel=1e-6)
    # beside the prefill's kernels, as --tpot-ms's step beside the decode step's
    step = data["kernels"][-1]
    assert step["name"] == "prefill b=1 x 436 (measured)"
    assert step["meta"]["op"] == "prefill_step" and step["seconds"] == 0.04
    assert step["provenance"]["seconds"] == "measured"


def test_the_line_is_printed_under_every_phase(capsys):
    for phase in ("prefill", "decode", "both"):
        assert main([*PREFILL, "--phase", phase]) == 0
        assert LINE in capsys.readouterr().out, phase


def test_with_tpot_both_points_keep_their_places(capsys):
    # --tpot-ms's fields stay where they were (test_s33_e_mbu_mfu); the prefill beside them
    assert main([*PREFILL, "--context", "500", "--tpot-ms", "15", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    m = data["llm"]["measured"]
    assert m["tpot_s"] == 0.015 and m["mbu"] == pytest.approx(0.434, abs=0.001)
    assert m["prefill"]["ttft_s"] == 0.04
    assert m["prefill"]["mfu"] == pytest.approx(0.332, abs=0.001)
    # --phase both: the vocabulary's kernels are the decode step's, and each measured step
    # beside them (s35 E: the prefill point was dropped from the file but under --phase
    # prefill; report and choose tell it from the decode step's work by its FLOP)
    names = [k["name"] for k in data["kernels"]]
    assert "decode step b=1 (measured)" in names
    assert [n for n in names if n.startswith("prefill")] == ["prefill b=1 x 436 (measured)"]


@pytest.mark.parametrize("value", ["0", "-3", "nan", "inf"])
def test_a_time_that_is_not_positive_and_finite_is_refused(capsys, value):
    assert main([*PREFILL[:-1], value]) == 2
    err = capsys.readouterr().err
    # nan and inf in the verb's own words, as typed, since s35 B (finite_options.OWN_RANGE)
    words = f"must be a positive, finite time in milliseconds (e.g. 40); got {float(value):g}"
    assert f"--ttft-ms {words}" in err
    assert "Traceback" not in err


def test_whatif_reads_the_prefill_step_as_a_comparison_point(tmp_path, capsys):
    # The measured prefill is the same work as its 15 kernels: `rooflab whatif` moves it on
    # its own line and leaves it out of the totals (model.choose.WHOLE_STEP_OPS). Counted
    # as one more kernel, the total would be 16.3 + 40 = 56.3 ms.
    out = tmp_path / "prefill.json"
    assert main([*PREFILL, "--phase", "prefill", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["whatif", str(out), "--quantize", "int4"]) == 0
    text = capsys.readouterr().out
    assert "with launches: 16.3 ms -> " in text
    assert "prefill b=1 x 436 (measured): 40 ms -> 40 ms predicted" in text
    from rooflab.ingest.kernelfile import load_kernels
    from rooflab.model.choose import split_whole_steps

    work, steps = split_whole_steps(load_kernels(str(out)))
    assert [k.name for k in steps] == ["prefill b=1 x 436 (measured)"] and len(work) == 15


def test_the_prefill_chart_draws_the_measured_point(tmp_path, monkeypatch):
    from rooflab.report import chart

    seen = {}
    real = chart.plot_roofline

    def spy(roofs, kernels=(), **kw):
        seen["kernels"] = [k.name for k in kernels]
        return real(roofs, kernels, **kw)

    monkeypatch.setattr(chart, "plot_roofline", spy)
    args = [*PREFILL, "--tpot-ms", "15", "-o", str(tmp_path / "c.svg")]
    assert main([*args, "--phase", "prefill"]) == 0
    assert "prefill b=1 x 436 (measured)" in seen["kernels"]
    assert "decode step b=1 (measured)" not in seen["kernels"]
    assert main([*args, "--phase", "decode"]) == 0
    assert "decode step b=1 (measured)" in seen["kernels"]
    assert "prefill b=1 x 436 (measured)" not in seen["kernels"]


def test_the_study_takes_a_ttft_from_python():
    from rooflab.hardware.resolve import load_roof
    from rooflab.workloads.llm import Request, Settings, load_config
    from rooflab.workloads.llm.study import Study, run_study

    run = run_study(Study(load_config("tinyllama-1.1b"), load_roof("T4"), Settings(),
                          Request(prompt=436), ttft_s=0.04))
    m = run.measured_prefill[0]
    assert m.mfu == pytest.approx(0.332, abs=0.001) and run.measured == ()


def test_analyze_llm_is_split_into_short_pieces():
    # It was 81 lines (STYLE.md: 60 at most); the split keeps its results (the llm tests).
    from rooflab.workloads.llm import analysis

    node = ast.parse(textwrap.dedent(inspect.getsource(analysis.analyze_llm))).body[0]
    assert node.end_lineno - node.lineno + 1 <= 60


def test_the_docs_block_is_todays_output(capsys, monkeypatch):
    from pathlib import Path

    monkeypatch.setenv("COLUMNS", "200")
    doc = (Path(__file__).resolve().parents[1] / "docs" / "llm.md").read_text(encoding="utf-8")
    command = "$ rooflab llm tinyllama-1.1b --on T4 --prompt 436 --phase prefill --ttft-ms 40"
    start = doc.index(command)
    shown = [x for x in doc[start:doc.index("```", start)].splitlines()[1:] if x != "..."]
    assert main(command.split()[2:]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(shown) == 3 and LINE in shown
    assert all(line in out for line in shown), [x for x in shown if x not in out]

"""Audit 8 of `rooflab llm`: the chart follows --phase, --link-latency on TP all-reduces,
and the weight-byte fields of the JSON are documented.

Hand numbers (llama-3-70b: hidden 8192, 80 layers; H200 NVLink 900 GB/s both directions,
450 GB/s per direction): one decode all-reduce at batch 16 carries 16 x 8192 x 2 B =
262,144 B; the ring moves 2(8-1)/8 of it, 458,752 B, in 1.019 µs at 450 GB/s; with 10 µs
of latency each, 160 all-reduces (2 per layer) take 160 x 11.019 µs = 1.763 ms.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm import Request, Settings, analyze_llm, load_config

DOCS = Path(__file__).resolve().parents[1] / "docs" / "llm.md"
BW_TERM = 2 * 7 / 8 * (16 * 8192 * 2) / 450e9      # 1.0194 µs per all-reduce


def _capture_chart(monkeypatch):
    """Record what save_chart hands to plot_roofline (the chart itself is still drawn)."""
    from rooflab.report import chart

    seen = {}
    real = chart.plot_roofline

    def spy(roofs, kernels=(), **kw):
        seen["kernels"], seen["title"] = list(kernels), kw.get("title")
        return real(roofs, kernels, **kw)

    monkeypatch.setattr(chart, "plot_roofline", spy)
    return seen


@pytest.fixture(scope="module")
def tiny():
    return analyze_llm(load_config("tinyllama-1.1b"), load_roof("T4"), Settings(),
                       Request(batches=(1,)))


def test_prefill_chart_draws_the_prefill_kernels(tmp_path, monkeypatch, tiny):
    # Before: -o chart.png with --phase prefill drew the decode step's kernels (gate_proj
    # at 0.508 GFLOP, one token) under a "decode" title.
    seen = _capture_chart(monkeypatch)
    out = tmp_path / "pre.svg"
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "--phase", "prefill",
                 "-o", str(out), "--json"]) == 0
    assert out.stat().st_size > 0
    assert "prefill" in seen["title"] and "decode" not in seen["title"]
    prefill = {k.name: k.total_flop for k in tiny.prefill.analysis.kernels}
    g = next(k for k in seen["kernels"] if k.name == "gate_proj")
    # 22 layers x 512 tokens x 2048 x 5632 x 2 FLOP = 260 GFLOP (decode: 0.508 GFLOP)
    assert g.total_flop == pytest.approx(22 * 512 * 2048 * 5632 * 2) == prefill["gate_proj"]
    assert all(k.total_flop == prefill[k.name] for k in seen["kernels"])


def test_both_and_decode_charts_draw_the_decode_step(tmp_path, monkeypatch, tiny):
    seen = _capture_chart(monkeypatch)
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "-o", str(tmp_path / "c.svg"),
                 "--json"]) == 0
    g = next(k for k in seen["kernels"] if k.name == "gate_proj")
    assert g.total_flop == pytest.approx(22 * 2048 * 5632 * 2)
    assert "decode" in seen["title"]


def _tp_json(capsys, *extra):
    assert main(["llm", "llama-3-70b", "--on", "H200", "--tp", "8", "--batch", "16",
                 *extra, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["llm"]


def test_link_latency_is_added_to_each_allreduce(capsys):
    # Before: no --link-latency; TPOT = compute + 160 x 1.02 µs, latency never counted.
    base = _tp_json(capsys)["parallel"]
    assert base["comm_s"] == pytest.approx(160 * BW_TERM)          # 163 µs, as before
    assert base["link_latency_s"] == 0
    llm = _tp_json(capsys, "--link-latency", "10")
    par = llm["parallel"]
    assert par["link_latency_s"] == pytest.approx(10e-6)
    assert par["comm_s"] == pytest.approx(160 * (BW_TERM + 10e-6))  # 1.763 ms
    assert par["comm_s"] == pytest.approx(1.7631e-3, rel=1e-4)
    # + the logits gather (review 18d E): 16 x 128,256 x 2 B = 4.10 MB, 7 hops of
    # 10 / 14 us = 5 us and 7/8 x 4.10 MB / 450 GB/s = 7.98 us: 12.98 us
    gather = 7 * 10e-6 / 14 + 7 / 8 * 16 * 128_256 * 2 / 450e9
    assert par["logits_gather_s"] == pytest.approx(gather)
    # + the vocab-parallel embedding's one all-reduce (H1), the same payload as each of
    # the 160: 10 us + 1.02 us = 11.02 us
    assert par["embedding_allreduce_s"] == pytest.approx(BW_TERM + 10e-6)
    assert par["tpot_s"] == pytest.approx(
        par["compute_s"] + 161 * (BW_TERM + 10e-6) + gather)
    assert llm["totals"]["tpot_s"] == pytest.approx(par["tpot_s"])
    assert par["compute_s"] == pytest.approx(base["compute_s"])
    note = " ".join(llm["notes"])
    assert "10 us of latency per all-reduce" in note and "bandwidth only" not in note
    assert "bandwidth only" in " ".join(_tp_json(capsys)["notes"])


def test_link_latency_in_the_tp_line(capsys):
    assert main(["llm", "llama-3-70b", "--on", "H200", "--tp", "8", "--batch", "16",
                 "--link-latency", "10"]) == 0
    text = capsys.readouterr().out
    line = next(ln for ln in text.splitlines() if ln.startswith("tensor parallel x8"))
    # 1.763 ms of all-reduces + the 11 us embedding all-reduce (H1) + the 13 us logits
    # gather = 1.787 ms (1.776 ms before the embedding's)
    assert ("+ 10 us latency each + the embedding's all-reduce of 262 kB (vocab-parallel, "
            "11 us) + a logits gather of 4.1 MB (batch x vocab, 13 us): communication "
            "1.79 ms") in line


@pytest.mark.parametrize("args, says", [
    (["--tp", "8", "--link-latency", "-3"], ">= 0 and finite, in microseconds"),
    (["--link-latency", "10"], "add --tp N"),
])
def test_link_latency_bad_input_is_an_error(capsys, args, says):
    assert main(["llm", "llama-3-70b", "--on", "H200", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and says in err and "Traceback" not in err


def _weight_keys(node, path=""):
    """Every key of the JSON that names weight bytes, with where it is."""
    if isinstance(node, dict):
        for k, v in node.items():
            if re.fullmatch(r"weights?(_bytes)?", k) and isinstance(v, float | int):
                yield k
            yield from _weight_keys(v, f"{path}.{k}")
    elif isinstance(node, list):
        for v in node:
            yield from _weight_keys(v, path)


def test_docs_name_every_weight_bytes_field(capsys):
    # Before: docs/llm.md named none of weights (bytes_split), weights_bytes, weight_bytes.
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "--batch", "1,16", "--whatif",
                 "--json"]) == 0
    keys = set(_weight_keys(json.loads(capsys.readouterr().out)))
    assert keys == {"weights", "weights_bytes", "weight_bytes"}
    doc = DOCS.read_text()
    section = doc[doc.index("### Weight bytes"):]
    section = section[:section.index("\n## ")]
    for spelled in ("bytes_split.weights", "footprint.weights_bytes",
                    "sweep.points[].weight_bytes", "whatif[].weights_bytes", "weights_bytes"):
        assert f"`{spelled}`" in section or f"`llm.{spelled}`" in section, spelled
    # the numbers it quotes are the run's: read 2.07 GB per step, store 2.20 GB
    assert "2.07 GB" in section and "2.20 GB" in section and "131 MB" in section

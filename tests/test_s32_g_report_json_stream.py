"""`rooflab report --json` and `-o x.json` hand their writer Streamed arrays (kernels,
points, diagnoses: each dict made as it is written, json_stream), not lists: at 100,000
kernels the dicts were ~half of the 1093 MB peak (session 32, helper G). The text is the
one the lists gave (the old tree's, byte for byte, on examples/ and 10k kernels:
benchmarks/RESULTS.md), and the -o file is stdout's.

Two kernels on the A100 80GB SXM (fp32 19.5 TFLOP/s, HBM 2.039 TB/s), 2 ms each:
  gemm: 1.95e10 FLOP / 2e-3 s = 9.75e12 FLOP/s = 50 % of 19.5e12 (AI 1.95e10 / 1e6 =
        19,500 FLOP/byte, past the ridge 19.5e12 / 2.039e12 = 9.56: compute-bound)
  copy: 2.039e9 B / 2e-3 s = 1.0195e12 B/s = 50 % of 2.039e12 (AI 1e6 / 2.039e9: memory)
  each at its roof would take 1 ms: gain 1 ms, headroom 2.0x, half of the 4 ms total.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_inproc import run_cli

from rooflab.json_stream import Streamed

SEEDS = Path(__file__).resolve().parents[1] / "examples" / "seeds"
CSV = "name,flop,bytes,seconds,precision\ngemm,1.95e10,1e6,2e-3,fp32\ncopy,1e6,2.039e9,2e-3,fp32\n"
STREAMED = ("kernels", "analysis", "diagnosis")


@pytest.fixture
def handed(monkeypatch):
    """The documents report gives emit_json and files.write_json, by writer."""
    import rooflab.cli.common as common
    import rooflab.files as files

    got: dict[str, dict] = {}
    emit, write = common.emit_json, files.write_json

    def emit_json(obj):
        got["stdout"] = obj
        return emit(obj)

    def write_json(path, obj):
        got["file"] = obj
        return write(path, obj)

    monkeypatch.setattr(common, "emit_json", emit_json)
    monkeypatch.setattr(files, "write_json", write_json)
    return got


def test_stdout_and_file_are_streamed_and_the_same(tmp_path, handed):
    csv = tmp_path / "k.csv"
    csv.write_text(CSV)
    out = tmp_path / "r.json"
    r = run_cli("report", str(csv), "--on", "A100 80GB SXM", "--json", "-o", str(out))
    assert r.returncode == 0, r.stderr
    for writer in ("stdout", "file"):
        for key in STREAMED:
            assert isinstance(handed[writer][key], Streamed), (writer, key)
    assert out.read_text() == r.stdout
    doc = json.loads(r.stdout)
    pts = {p["kernel"]: p for p in doc["analysis"]}
    assert pts["gemm"]["achieved_flop_per_s"] == pytest.approx(9.75e12)
    assert pts["gemm"]["percent_of_roof"] == pytest.approx(50.0)
    assert pts["gemm"]["ai"] == pytest.approx(19500.0)
    assert pts["gemm"]["bound"] == "compute"
    assert pts["copy"]["achieved_bytes_per_s"] == pytest.approx(1.0195e12)
    assert pts["copy"]["bound"] == "memory"
    assert [k["name"] for k in doc["kernels"]] == ["gemm", "copy"]
    diags = {d["kernel"]: d for d in doc["diagnosis"]}
    assert sorted(d["rank"] for d in doc["diagnosis"]) == [1, 2]
    for name in ("gemm", "copy"):
        assert diags[name]["gain_s"] == pytest.approx(1e-3)
        assert diags[name]["reachable_s"] == pytest.approx(1e-3)
        assert diags[name]["headroom"] == pytest.approx(2.0)
        assert diags[name]["time_share"] == pytest.approx(0.5)


def test_envelope_roof_words_the_streamed_points(handed):
    """No --on: seed 000's timed ncu export on its own envelope (test_s19_charts_envelope
    _json): sgemm (2.15 GFLOP in 1.1 ms) and copyKernel set the ceilings, "no roof"; the
    points, Streamed, are worded as they are written."""
    r = run_cli("report", str(SEEDS / "seed000_ncu_timed.csv"), "--json")
    assert r.returncode == 0, r.stderr
    assert isinstance(handed["stdout"]["analysis"], Streamed)
    pts = {p["kernel"]: p for p in json.loads(r.stdout)["analysis"]}
    assert pts["sgemm"]["percent_of_roof"] == 100.0
    assert pts["sgemm"]["bound"] == "no roof"
    assert pts["copyKernel"]["bound"] == "no roof"
    assert "relative" not in pts["sgemm"]


def test_report_dict_lists_by_default_same_text():
    """report_dict() without streamed keeps lists (callers that index it); streamed=True
    writes the same text. The two kernels above, on the catalog's A100."""
    from rooflab.cli.report import report_dict
    from rooflab.files import json_pieces
    from rooflab.hardware.catalog import lookup_roof
    from rooflab.model import Kernel, analyze

    a = analyze(lookup_roof("A100 80GB SXM"), [
        Kernel("gemm", flop={"fp32": 1.95e10}, bytes={"DRAM": 1e6}, seconds=2e-3),
        Kernel("copy", flop={"fp32": 1e6}, bytes={"DRAM": 2.039e9}, seconds=2e-3)])
    listed, streamed = report_dict(a), report_dict(a, streamed=True)
    assert all(isinstance(listed[k], list) for k in STREAMED)
    assert all(isinstance(streamed[k], Streamed) for k in STREAMED)
    text = "".join(json_pieces(listed))
    assert "".join(json_pieces(streamed)) == text
    gemm = json.loads(text)["analysis"][0]
    assert gemm["kernel"] == "gemm" and gemm["percent_of_roof"] == pytest.approx(50.0)

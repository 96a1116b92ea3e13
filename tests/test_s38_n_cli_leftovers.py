"""s38 N: `rooflab scale --on -` / `--link-from -` said "unknown hardware '-'" and "-: file
not found" (scale was not among the verbs whose file arguments read standard input); once
read, the link's source named the temporary copy ("--on /tmp/rooflab-stdin-.../stdin.json",
gone when the command ends), as `llm --link-from -` did. `rooflab plot -o newdir/` said
"the chart must be a .png or .svg file" of a folder."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from cli_inproc import json_of, one_line_error
from test_scale_measured_link import ARGS, COMPUTE_S, GRAD_BYTES, cluster


def _stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


@pytest.mark.parametrize("given", [["--on", "-"], ["--on", "H100 SXM", "--link-from", "-"]])
def test_scale_reads_the_cluster_profile_from_standard_input(tmp_path, monkeypatch, capsys,
                                                             given):
    """The profile's all-reduce fit (alpha 600 us, beta 1 GB/s over 2 ranks) gives a ring
    link of bus 1 GB/s and 300 us a hop (alpha / 2(n0-1)); at 2 ranks 4 all-reduces of
    the 12 x 1024^2 fp32 gradients (50,331,648 B): 4 x 2 x 300 us + 50.33 MB / 1 GB/s =
    52.73 ms. Its source says <stdin>."""
    path = cluster(tmp_path / "comm.json", ar=(600e-6, 1e9))
    _stdin(monkeypatch, Path(path).read_bytes())
    doc = json_of(capsys, ["scale", *given, *ARGS])
    intra = doc["links"]["intra"]
    assert intra["bus_bytes_per_s"] == pytest.approx(1e9, rel=1e-9)
    assert intra["hop_latency_s"] == pytest.approx(300e-6, rel=1e-9)
    assert f"{given[-2]} <stdin>" in intra["source"]
    assert "rooflab-stdin" not in json.dumps(doc)
    pts = {p["gpus"]: p for p in doc["points"]}
    assert pts[2]["comm_s"] == pytest.approx(4 * 2 * 300e-6 + GRAD_BYTES / 1e9, rel=1e-9)
    if given[1] == "-":   # the profile is the roof too: 100 GFLOP/s fp32
        assert pts[2]["compute_s"] == pytest.approx(COMPUTE_S, rel=1e-9)


def test_llm_link_from_stdin_names_stdin_not_the_copy(tmp_path, monkeypatch, capsys):
    """`llm --link-from -`: the link's file is '<stdin>' in the text and the JSON."""
    path = cluster(tmp_path / "comm.json", ar=(600e-6, 1e9))
    _stdin(monkeypatch, Path(path).read_bytes())
    d = json_of(capsys, ["llm", "tinyllama-1.1b", "--on", "H100 SXM", "--link-from", "-",
                         "--tp", "2", "--phase", "decode", "--json"])
    assert d["llm"]["parallel"]["link_provenance"]["file"] == "<stdin>"
    assert "rooflab-stdin" not in json.dumps(d)


def test_scale_reads_standard_input_once(tmp_path, monkeypatch, capsys):
    path = cluster(tmp_path / "comm.json")
    _stdin(monkeypatch, Path(path).read_bytes())
    assert one_line_error(capsys, ["scale", "--on", "-", "--link-from", "-"]) == (
        "error: - given twice: standard input can be read once; save one of the inputs to "
        "a file and pass its path")


def test_plot_to_a_folder_asks_for_a_file_name(tmp_path, capsys):
    k = tmp_path / "k.json"
    k.write_text(json.dumps({"kernels": [{"name": "g", "flop": {"fp32": 1e9},
                                          "bytes": {"DRAM": 1e8}, "seconds": 1e-3}]}))
    out = f"{tmp_path / 'newdir'}/"
    assert one_line_error(capsys, ["plot", str(k), "--on", "T4", "-o", out]) == (
        f"error: -o {out}: names a directory (it ends in '/'); give a file name such as "
        f"{tmp_path / 'newdir' / 'roofline.png'}")
    assert one_line_error(capsys, ["plot", str(k), "--on", "T4", "-o", str(tmp_path)]) == (
        f"error: -o {tmp_path}: is a directory; give a file name such as "
        f"{tmp_path / 'roofline.png'}")
    assert not (tmp_path / "newdir").exists()

"""`rooflab llm` through the CLI entry point: tables, JSON, sweep, chart, bad input."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main


def run(capsys, *args):
    code = main(["llm", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_acceptance_sweep_json(capsys):
    code, out, _ = run(capsys, "tinyllama-1.1b", "--on", "T4", "--batch", "1,4,16,64,128",
                       "--context", "500", "--json")
    assert code == 0
    d = json.loads(out)
    pts = d["llm"]["sweep"]["points"]
    assert [p["batch"] for p in pts] == [1, 4, 16, 64, 128]
    assert pts[0]["ai"] == pytest.approx(1.0, abs=0.1)
    assert pts[-1]["ai"] < 0.6 * 128
    assert d["roof"]["memory"][0]["bytes_per_s"] == 320e9
    assert d["llm"]["footprint"]["device_bytes"] == 16e9
    assert d["llm"]["footprint"]["weights_bytes"] == pytest.approx(2.2e9, rel=0.01)
    assert d["analysis"][0]["kernel"] == "embedding"


def test_tables_and_measured_point(capsys):
    code, out, _ = run(capsys, "tinyllama-1.1b", "--on", "T4", "--context", "500",
                       "--tpot-ms", "15", "--whatif")
    assert code == 0
    for text in ("decode step", "prefill", "q_proj", "lm_head", "TPOT floor", "TTFT floor",
                 "launch overhead: 311 kernels", "largest batch that fits", "weights int4",
                 "measured TPOT 15 ms"):
        assert text in out, text


def test_list(capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0
    assert "tinyllama-1.1b" in out and "mixtral-8x7b" in out and "46.7 G" in out


def test_bad_inputs_exit_2(capsys, tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text(json.dumps({"num_hidden_layers": 2, "num_attention_heads": 4,
                               "vocab_size": 100}))
    code, _, err = run(capsys, str(bad), "--on", "T4")
    assert code == 2 and "hidden_size" in err and "Traceback" not in err
    code, _, err = run(capsys, "gpt2", "--on", "T4", "--batch", "0")
    assert code == 2 and "--batch" in err
    code, _, err = run(capsys, "gpt2", "--on", "T4", "--kv", "fp7")
    assert code == 2 and "fp7" in err
    code, _, err = run(capsys, "gpt2", "--on", "T4", "--phase", "both2")
    assert code == 2 and "--phase" in err


def test_context_too_long_is_a_warning(capsys):
    # RoPE past max_position_embeddings (2048) is context extension: a warning. GPT-2's
    # learned table past 1024 is an error (tests/test_s33_e_llm_inputs.py)
    code, out, err = run(capsys, "tinyllama-1.1b", "--on", "T4", "--context", "4000", "--json")
    assert code == 0
    assert "warning:" in err and "max_position_embeddings" in err
    assert json.loads(out)["llm"]["request"]["context"] == 4000


def test_tensor_parallel_uses_catalog_link(capsys):
    code, out, _ = run(capsys, "llama-2-70b", "--on", "H200", "--tp", "4", "--json")
    assert code == 0
    par = json.loads(out)["llm"]["parallel"]
    assert par["allreduces_per_step"] == 160 and par["link_bytes_per_s"] > 0


def test_chart_and_csv(capsys, tmp_path):
    png = tmp_path / "llm.png"
    code, _, _ = run(capsys, "tinyllama-1.1b", "--on", "T4", "--batch", "1,16,128",
                     "-o", str(png))
    assert code == 0 and png.read_bytes()[:4] == b"\x89PNG"
    csv = tmp_path / "llm.csv"
    assert run(capsys, "tinyllama-1.1b", "--on", "T4", "-o", str(csv))[0] == 0
    rows = csv.read_text().splitlines()
    assert rows[0].startswith("phase,kernel") and any(",lm_head," in r for r in rows)

"""-o naming one of the verb's own inputs is refused before any work, for every verb that
reads files and writes -o (compare had it; report, whatif, choose, llm, ncu/torch did
not: `rooflab report k.json -o k.json` replaced the kernels with the report)."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

KERNELS = [{"name": "triad", "flop": {"fp64": 2.0e6}, "bytes": {"DRAM": 2.4e7},
            "seconds": 1.0e-3}]


@pytest.mark.parametrize("verb", [["report"], ["whatif", "--precision", "fp32"],
                                  ["choose", "--among", "T4,A100"]])
def test_kernel_file_verbs_refuse_their_input_as_output(verb, tmp_path, capsys):
    k = tmp_path / "k.json"
    k.write_text(json.dumps(KERNELS))
    before = k.read_bytes()
    args = [verb[0], str(k), *(["--on", "T4"] if verb[0] != "choose" else []), *verb[1:],
            "-o", str(k)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"-o {k}: is also an input ({k})" in err
    assert k.read_bytes() == before


def test_llm_refuses_its_config_as_output(tmp_path, capsys):
    from pathlib import Path

    import rooflab.workloads

    bundled = Path(rooflab.workloads.__file__).parent / "configs" / "tinyllama-1.1b.json"
    cfg = tmp_path / "config.json"
    cfg.write_bytes(bundled.read_bytes())
    assert main(["llm", str(cfg), "--on", "T4", "-o", str(cfg)]) == 2
    assert "is also an input" in capsys.readouterr().err


def test_torch_refuses_its_trace_as_output(tmp_path, capsys):
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps({"traceEvents": []}))
    assert main(["torch", str(trace), "-o", str(trace)]) == 2
    assert "is also an input" in capsys.readouterr().err
    assert json.loads(trace.read_text()) == {"traceEvents": []}


def test_plot_json_says_where_the_chart_went_on_stderr(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["plot", "--on", "T4", "--json", "-o", "roofline.png"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)
    assert "wrote roofline.png: 1 roof(s)" in err
    assert (tmp_path / "roofline.png").is_file()
    # --json alone is stdout only: no image silently written over ./roofline.png
    (tmp_path / "roofline.png").unlink()
    assert main(["plot", "--on", "T4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["chart"] is None
    assert not (tmp_path / "roofline.png").exists()


def test_other_verbs_documents_given_as_kernels_are_named(tmp_path, capsys):
    """A `choose` ranking is named as one; a `scale` or `specs show` document carries a
    roof and is pointed to --on (both were 'expected a list of kernels')."""
    rank = tmp_path / "rank.json"
    rank.write_text(json.dumps({"schema_version": 1, "devices": [{"rank": 1, "name": "T4"}]}))
    assert main(["report", str(rank), "--on", "T4"]) == 2
    assert "this is a hardware ranking (`rooflab choose` output)" in capsys.readouterr().err
    assert main(["specs", "show", "T4", "--json"]) == 0
    spec = tmp_path / "t4.json"
    spec.write_text(capsys.readouterr().out)
    assert main(["compare", str(spec), str(spec)]) == 2
    assert f"pass it as the roof, e.g. `--on {spec}`" in capsys.readouterr().err

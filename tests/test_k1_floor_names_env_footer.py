"""Task K1, the rest of review r1_json F1, F4 and F8 in the files J2 did not own.

F8: the bandwidth a kernel without FLOP reaches has one rule (model/bandwidth_reached.py);
    report/tables.py keeps no copy.
F4: a command whose roof came from ROOFLAB_ON prints its re-run line in the .md/.html
    footer with the variable in front (files_generator.command_line), set through a public setter.
F1: `llm` names its work floor `work_floor_s` and `ai` its floor with launches
    `with_launches_s`, as every other document does (docs/json.md "Floor keys").
"""

from __future__ import annotations

import json

import pytest

from rooflab import files_generator
from rooflab.cli.main import main
from rooflab.files import write_json

# --- F8: one copy of the bandwidth rule -----------------------------------------------

def test_tables_bandwidth_of_is_the_model_rule():
    from rooflab.model import bandwidth_reached
    from rooflab.report import tables

    # old: a second copy in tables; then a re-export nothing imported (review r1 F4)
    assert not hasattr(tables, "bandwidth_of")
    assert bandwidth_reached.bandwidth_of.__module__ == "rooflab.model.bandwidth_reached"


def test_report_json_copy_percent_of_bandwidth(tmp_path, capsys):
    # t4's DRAM is 320 GB/s (docs/json.md's worked example); a copy moving 1.6e8 B in
    # 1e-3 s moves 1.6e8 / 1e-3 = 1.6e11 B/s = 100 x 1.6e11 / 3.2e11 = 50 % of it
    k = tmp_path / "k.json"
    write_json(k, {"kernels": [{"name": "copy", "bytes": {"DRAM": 1.6e8}, "seconds": 1e-3}]})
    assert main(["report", str(k), "--on", "t4", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["analysis"]
    assert row["achieved_bytes_per_s"] == pytest.approx(1.6e11)
    assert row["percent_of_bandwidth"] == pytest.approx(50.0)


# --- F4: the footer re-runs as written ------------------------------------------------

def test_command_line_puts_the_environment_in_front():
    gen = {"command": ["rooflab", "report", "k.json"], "env": {"ROOFLAB_ON": "H200"}}
    assert files_generator.command_line(gen) == "ROOFLAB_ON=H200 rooflab report k.json"
    # a profile path with a space is quoted as the arguments are
    gen = {"command": ["rooflab", "report", "k.json"], "env": {"ROOFLAB_ON": "my roof.json"}}
    assert files_generator.command_line(gen) == "ROOFLAB_ON='my roof.json' rooflab report k.json"
    assert files_generator.command_line({"command": ["rooflab", "ai", "a b"]}) == "rooflab ai 'a b'"


def test_add_generator_env_only_while_a_command_runs():
    try:
        files_generator.set_generator(["report", "k.json"])
        files_generator.add_generator_env("ROOFLAB_ON", "T4")
        assert files_generator.generator()["env"] == {"ROOFLAB_ON": "T4"}
        files_generator.set_generator(None)
        files_generator.add_generator_env("ROOFLAB_ON", "T4")   # library use: nothing to stamp
        assert files_generator.generator() is None
    finally:
        files_generator.set_generator(None)


@pytest.mark.parametrize("suffix", ["md", "html"])
def test_footer_names_rooflab_on(suffix, tmp_path, monkeypatch, capsys):
    if suffix == "html":
        pytest.importorskip("plotly", reason="an HTML report needs plotly (the [html] extra)")
    k = tmp_path / "k.json"
    write_json(k, {"kernels": [{"name": "copy", "bytes": {"DRAM": 1.6e8}, "seconds": 1e-3}]})
    out = tmp_path / f"r.{suffix}"
    monkeypatch.setenv("ROOFLAB_ON", "t4")
    assert main(["report", str(k), "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    # old: 'rooflab report k.json -o r.md', which re-runs without the roof
    assert f"ROOFLAB_ON=t4 rooflab report {k} -o {out}" in text
    monkeypatch.delenv("ROOFLAB_ON")
    assert main(["report", str(k), "--on", "t4", "-o", str(out)]) == 0
    assert "ROOFLAB_ON" not in out.read_text(encoding="utf-8")


# --- F1: llm and ai use the floor names -----------------------------------------------

def test_ai_with_launches_s_by_hand(capsys):
    # docs/json.md: `ai matmul 256 256 256 --on t4`: work 393216 B / 320 GB/s = 1.2288e-06 s,
    # launch 1 x 5e-06 s, with launches max(1.2288e-06, 5e-06) = 5e-06 s
    assert main(["ai", "matmul", "256", "256", "256", "--on", "t4", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["work_floor_s"] == pytest.approx(393216 / 320e9)
    assert d["launch_floor_s"] == pytest.approx(5e-6)
    assert d["with_launches_s"] == pytest.approx(5e-6)          # old: no such key
    assert d["with_launches_s"] == d["time_floor_s"]


def test_llm_work_floor_s_is_the_sum_of_kernel_work_floors(capsys):
    assert main(["llm", "tinyllama", "--on", "A100", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    dram = next(m["bytes_per_s"] for m in doc["roof"]["memory"] if m["level"] == "DRAM")
    for phase in ("decode", "prefill"):
        step = doc["llm"][phase]
        ks = step["kernels"]
        assert step["work_floor_s"] == step["floor_s"]               # old: no such key
        # the step's work floor: its kernels' floors one after another
        assert step["work_floor_s"] == pytest.approx(sum(k["work_floor_s"] for k in ks))
        assert all(k["work_floor_s"] == k["floor_s"] for k in ks)
        # a memory-bound kernel's work floor is its bytes over the DRAM bandwidth
        mem = [k for k in ks if k["bound"] == "memory"]
        assert mem, phase
        for k in mem:
            assert k["work_floor_s"] == pytest.approx(k["bytes"] / dram), k["name"]
        # with launches is never under the work floor
        assert step["with_launches_s"] >= step["work_floor_s"]

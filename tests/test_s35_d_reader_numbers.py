"""Review s35 D: numbers past what a reader checked, in an ERT roofline.json and a GPT-2
config.json.

- ERT: a gflops figure of Infinity (Python's json reads the bare token) passed the
  "[name, positive number]" check and failed later as "ceiling fp64 vector must be between
  1 and 1e+21 FLOP/s; got inf", naming no file. Now the reader refuses it with the file
  and the pair, as it refuses 0, -1 or "288". The control: ERT_P100's 288.33 GFLOP/s is
  read as 2.8833e11 FLOP/s.
- GPT-2 (learned positions): n_positions null (or absent) was a TypeError in
  workloads/llm/kernel_ops.embedding (min(tokens, None)), exit 70. Now exit 2 naming the
  file and the field. The control: gpt2's own n_positions 1024 caps the position rows a
  prefill of 2048 tokens gathers at 1024.
"""

from __future__ import annotations

import copy
import json
import math
from importlib.resources import files

from test_roof_import import ERT_P100

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm.config import load_config


def test_ert_infinity_names_the_file_and_the_pair(tmp_path, capsys):
    doc = copy.deepcopy(ERT_P100)
    doc["empirical"]["gflops"]["data"][0][1] = math.inf
    path = tmp_path / "roofline.json"
    path.write_text(json.dumps(doc))                       # writes the bare token Infinity
    assert main(["specs", "show", str(path)]) == 2
    err = capsys.readouterr().err
    assert (f"error: {path}: empirical.gflops.data[0]: expected [name, positive number] "
            f"such as [\"DRAM\", 83.0]; got ['GFLOPs', inf]") in err
    good = tmp_path / "good.json"
    good.write_text(json.dumps(ERT_P100))
    assert max(c.value for c in load_roof(str(good)).compute) == 288.33e9


def _gpt2(tmp_path, **changes) -> str:
    doc = json.loads(files("rooflab.workloads.configs").joinpath("gpt2.json").read_text())
    doc.update(changes)
    doc = {k: v for k, v in doc.items() if v != "DROP"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(doc, indent=2))
    return str(path)


def test_gpt2_without_its_position_table_size_is_refused(tmp_path, capsys):
    for value, line in ((None, True), ("DROP", False)):
        path = _gpt2(tmp_path, n_positions=value)
        assert main(["llm", path, "--on", "H100 SXM", "--json"]) == 2
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err
        assert "missing field n_positions (or max_position_embeddings): a gpt2 model " \
               "learns a position table" in captured.err
        doc = json.loads(captured.out)["error"]
        assert (doc["path"], doc["field"]) == (path, "n_positions")
        assert (doc["line"] is not None) == line      # null's own line; absent: none


def test_gpt2_as_published_still_reads(tmp_path):
    assert load_config(_gpt2(tmp_path)).max_positions == 1024

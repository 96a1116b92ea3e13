"""What --tp counts on an MI250X, said by both verbs (session 32, helper E item 2).

An MI250X package is two GCDs, each a device to ROCm. `rooflab llm --on MI250X` keeps the
package's roof (3.2768 TB/s, 128 GB), so its --tp counts packages; `rooflab choose` ranks
one die (1.6384 TB/s, 64 GB), so the --tp of the document it reads counts dies. Each verb
now says its unit and the other's equal group.

By hand, llama-2-70b fp16 decode at batch 1 (about 137.6 GB of weights read per step):
  llm --tp 4 (4 packages = 8 dies): 137.6 / 4 = 34.4 GB / 3.2768 TB/s = 10.50 ms
  choose on the --tp 8 document (8 dies): 137.6 / 8 = 17.2 GB / 1.6384 TB/s = 10.50 ms
the same 8 dies, the same work floor. The all-reduces run on the same ring of 8 dies
(session 33 B: llm's ring was over its 4 packages, 2(4-1)/4 = 78.6 us): 160 x 16384 x
2(8-1)/8 / 50e9 = 91.75 us in both, + the embedding's 0.57 us + the logits gather 64000 x
7/8 / 50e9 = 1.12 us = 93.4 us.
"""

import json

import pytest

from rooflab.cli.main import main

ARGS = ["llama-2-70b", "--on", "MI250X", "--batch", "1", "--phase", "decode"]


def _llm_json(capsys, tp):
    assert main(["-q", "llm", *ARGS, "--tp", str(tp), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_llm_says_its_tp_counts_packages(capsys):
    assert main(["llm", *ARGS, "--tp", "4"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert ("each of the 4 devices here is a whole package (8 dies): --tp counts packages "
            "here, while ROCm and `rooflab choose` count dies (this --tp 4 is their --tp 8)"
            ) in text
    par = _llm_json(capsys, 4)["llm"]["parallel"]
    assert par["compute_s"] == pytest.approx(34.4e9 / 3.2768e12, rel=0.01)
    assert par["comm_s"] == pytest.approx(160 * 16384 * 1.75 / 50e9)   # 8 dies' ring


def test_choose_says_its_tp_counts_dies_and_the_floor_is_the_same_8_dies(capsys, tmp_path):
    doc = tmp_path / "l70.json"
    doc.write_text(json.dumps(_llm_json(capsys, 8)))
    assert main(["choose", str(doc), "--among", "MI250X"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert ('AMD Instinct MI250X (--tp 8 counts dies here, 4 packages; `rooflab llm --on '
            '"AMD Instinct MI250X" --tp 4` counts packages: the same 8 dies): + 93.4 us on '
            '50 GB/s') in text
    assert main(["-q", "choose", str(doc), "--among", "MI250X", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["devices"][0]
    assert (row["tp"], row["software_devices"]) == (8, 2)
    assert row["seconds"] == pytest.approx(17.2e9 / 1.6384e12, rel=0.01)
    assert row["tp_link_s"] == pytest.approx((160 * 16384 * 1.75 + 16384 * 1.75
                                              + 64000 * 7 / 8) / 50e9)
    # the same 8 dies: llm's --tp 4 work floor equals this row's
    assert row["seconds"] == pytest.approx(_llm_json(capsys, 4)["llm"]["parallel"]
                                           ["compute_s"], rel=0.002)

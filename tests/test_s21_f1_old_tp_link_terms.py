"""An `rooflab llm --tp N --json` file from before rooflab counted the embedding's all-reduce
and the logits gather (63adea3, schema_version 1: its parallel block has neither key):
whatif and choose count them from the file's model (hidden, vocab) as `rooflab llm` does
today and say the file predates them; where the file has no model to count from, they say
its link time leaves them out and do not claim them (review s21 r1 F3: "+ 400 ns", the
per-layer all-reduces alone, under a line naming all three).

Hand numbers, TinyLlama-1.1B (hidden 2048, vocab 32000, 22 layers) at batch 1, --tp 2 on
H100 SXM's NVLink 4 (450 GB/s a direction), 16-bit: one all-reduce of 1 x 2048 x 2 =
4096 B sends 2(2-1)/2 x 4096 = 4096 B: 9.10 ns; 44 of them 400.5 ns; the embedding's one
more 9.10 ns; the logits gather 1/2 x (1 x 32000 x 2 B) = 32000 B: 71.1 ns. Link time
400.5 + 9.1 + 71.1 = 480.7 ns (today's file: 480.7 ns).
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

ONE = 4096 / 450e9
OLD_LINK_S = 44 * ONE                         # 400.5 ns
TODAY_LINK_S = 45 * ONE + 32000 / 450e9       # 480.7 ns
# the parallel block's keys in 63adea3's file
OLD_KEYS = ("tp", "allreduce_bytes", "allreduces_per_step", "comm_s", "prefill_comm_s",
            "compute_s", "tpot_s", "link_bytes_per_s", "link")


@pytest.fixture()
def docs(tmp_path, capsys):
    """(today's file, the old file cut from it, the old file without its model block)."""
    assert main(["llm", "tinyllama-1.1b", "--on", "H100 SXM", "--tp", "2", "--json"]) == 0
    today = json.loads(capsys.readouterr().out)
    par = today["llm"]["parallel"]
    assert par["embedding_allreduce_bytes"] == 4096 and par["logits_gather_bytes"] == 32000 * 2
    old = json.loads(json.dumps(today))
    old["schema_version"] = 1
    old["llm"]["parallel"] = {k: par[k] for k in OLD_KEYS}
    old["llm"]["parallel"]["tpot_s"] = par["compute_s"] + par["comm_s"]
    bare = json.loads(json.dumps(old))
    del bare["llm"]["model"]
    paths = []
    for name, doc in (("today", today), ("old", old), ("bare", bare)):
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(doc))
        paths.append(str(p))
    return paths


def _choose(path: str, capsys, json_out: bool):
    argv = ["choose", path, "--among", "h100 sxm,h200 sxm"] + (["--json"] if json_out else [])
    assert main(argv) == 0
    out = capsys.readouterr().out
    return json.loads(out) if json_out else out


def test_choose_counts_them_from_the_old_files_model(docs, capsys):
    today, old, bare = docs
    for path in (today, old):
        rows = _choose(path, capsys, True)["devices"]
        assert [r["tp_link_s"] for r in rows] == pytest.approx([TODAY_LINK_S] * 2, rel=1e-9)
    text = _choose(old, capsys, False)
    assert "+ 481 ns on 450 GB/s" in text and "+ 400 ns" not in text
    assert ("note: this file, written by an older rooflab, has no embedding all-reduce or "
            "logits gather: counted here from its model (hidden 2048, vocab 32000)") in text
    assert "`rooflab llm tinyllama-1.1b --tp 2 --json`" in text
    assert "older rooflab" not in _choose(today, capsys, False)


def test_choose_without_a_model_says_what_it_leaves_out(docs, capsys):
    bare = docs[2]
    rows = _choose(bare, capsys, True)["devices"]
    assert [r["tp_link_s"] for r in rows] == pytest.approx([OLD_LINK_S] * 2, rel=1e-9)
    text = _choose(bare, capsys, False)
    assert "with --tp 2's per-layer all-reduces on each device's catalog link" in text
    assert "logits gather on each" not in text
    assert ("has no embedding all-reduce or logits gather, so its TP link time leaves them "
            "out; `rooflab llm CONFIG --tp 2 --json`") in text


def _whatif(path: str, capsys, json_out: bool):
    argv = ["whatif", path, "--on", "H100 SXM", "--precision", "fp8"]
    assert main(argv + (["--json"] if json_out else [])) == 0
    out = capsys.readouterr().out
    return json.loads(out) if json_out else out


def test_whatif_counts_them_and_says_so(docs, capsys):
    today, old, bare = docs
    assert _whatif(today, capsys, True)["parallel"]["comm_before_s"] == pytest.approx(
        TODAY_LINK_S, rel=1e-9)
    got = _whatif(old, capsys, True)["parallel"]
    assert got["comm_before_s"] == pytest.approx(TODAY_LINK_S, rel=1e-9)
    assert got["note"].startswith("this file, written by an older rooflab")
    text = _whatif(old, capsys, False)
    assert ("with the 44 all-reduces, the embedding's all-reduce and the logits gather of "
            "--tp 2: 481 ns -> 481 ns") in text
    assert "note: this file, written by an older rooflab" in text
    # no model to count from: the line names the per-layer all-reduces alone
    got = _whatif(bare, capsys, True)["parallel"]
    assert got["comm_before_s"] == pytest.approx(OLD_LINK_S, rel=1e-9)
    text = _whatif(bare, capsys, False)
    assert "with the 44 all-reduces of --tp 2: 400 ns -> 400 ns" in text
    assert "so its TP link time leaves them out" in text

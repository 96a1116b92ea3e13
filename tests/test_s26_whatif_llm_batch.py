"""`rooflab whatif --batch` on an `rooflab llm` step lands on llm's own step at that batch
(review s26 r3 F2, F5): the meta's bytes_split and shape rows follow the batch, so a chained
what-if reads the new weight share, and the embedding's gathered rows grow per token."""

from __future__ import annotations

import json

import pytest
from tests.cli_inproc import run_cli

from rooflab.hardware.resolve import load_roof
from rooflab.model.whatif_batch import change_batch
from rooflab.workloads.llm import Settings, decode_step, load_config

TINY = "tinyllama-1.1b"


def _llm(path, *args) -> dict:
    r = run_cli("llm", TINY, "--on", "a100", "--context", "512", "-q", "-o", str(path), *args)
    assert r.returncode == 0, r.stderr
    return json.loads(path.read_text())


def _whatif(path, *args) -> dict:
    r = run_cli("whatif", str(path), "--on", "a100", "-q", *args)
    assert r.returncode == 0, r.stderr
    return r


def test_batch_1_to_64_and_back_gives_the_batch_1_step(tmp_path):
    # r3 F2: batch 1 -> 64 -> 1 came back at 1.076 ms, not llm's 1.022 ms: the batch-64
    # file kept the batch-1 split (gate_proj 99.93 % weights) and read its 21 MB of
    # activations as weights on the way back; the norms were 14.8x off
    t1 = _llm(tmp_path / "t1.json", "--batch", "1")
    _whatif(tmp_path / "t1.json", "--batch", "64", "-o", str(tmp_path / "w64.json"))
    doc = json.loads((tmp_path / "w64.json").read_text())
    w64 = {k["name"]: k for k in doc["after"]["kernels"]}
    gate = w64["gate_proj"]["meta"]
    # 22 layers x 2048 x 5632 fp16 weights = 507,510,784 B, read once for the batch;
    # activations 22 x 64 x (2048 + 5632) x 2 B = 21,626,880 B
    assert gate["bytes_split"]["weights"] == pytest.approx(22 * 2048 * 5632 * 2, rel=1e-12)
    assert gate["bytes_split"]["activations"] == pytest.approx(21_626_880, rel=1e-12)
    assert gate["shape"]["m"] == 64 and gate["batch"] == 64
    back = json.loads(_whatif(tmp_path / "w64.json", "--batch", "1", "--json").stdout)
    want = {k["name"]: k["work_floor_s"] for k in t1["llm"]["decode"]["kernels"]}
    for m in back["moves"]:
        assert m["after_work_floor_s"] == pytest.approx(want[m["kernel"]], rel=1e-9), m["kernel"]
    assert back["total_after_work_floor_s"] == pytest.approx(
        t1["llm"]["decode"]["work_floor_s"], rel=1e-9)          # 1.022 ms


def _by_name(kernels):
    return {k.name: k for k in kernels}


def test_embedding_rows_grow_with_the_batch():
    # r3 F5: batch 1 -> 16 held the gathered rows at one (4 kB), llm gathers 16: 16 x 2048 x
    # 2 B = 65,536 B of rows + 16 x 8 B ids + 16 x 2048 x 2 B output = 131,200 B
    cfg, roof = load_config(TINY), load_roof("a100")
    w = change_batch(roof, decode_step(cfg, Settings(), 1, 512).kernels(), 16)
    after = _by_name(new for _, new in w.moves)
    want = _by_name(decode_step(cfg, Settings(), 16, 512).kernels())
    assert want["embedding"].bytes["DRAM"] == 65_536 + 16 * 8 + 65_536
    for name, k in want.items():
        assert after[name].bytes["DRAM"] == pytest.approx(k.bytes["DRAM"], rel=1e-12), name
        assert after[name].total_flop == pytest.approx(k.total_flop, rel=1e-12), name
    assert after["embedding"].meta["bytes_split"]["weights"] == 65_536
    assert after["embedding"].meta["shape"]["tokens"] == 16


def test_embedding_rows_stop_at_the_table():
    # each distinct row is read once: 40,000 tokens of TinyLlama's 32,000-row table gather
    # at most the table, 32,000 x 2048 x 2 B = 131,072,000 B (llm counts the same)
    cfg, roof = load_config(TINY), load_roof("a100")
    w = change_batch(roof, decode_step(cfg, Settings(), 4, 512).kernels(), 40_000,
                     names=["embedding"])
    (_, emb), = w.moves
    assert emb.meta["bytes_split"]["weights"] == 32_000 * 2048 * 2
    want = _by_name(decode_step(cfg, Settings(), 40_000, 512).kernels())["embedding"]
    assert emb.bytes["DRAM"] == pytest.approx(want.bytes["DRAM"], rel=1e-12)


def test_learned_positions_gather_up_to_max_positions():
    # GPT-2: token rows (50,257-row table) and position rows (1024) per token; batch 1 ->
    # 2000 gathers 2000 token rows and all 1024 position rows: 3024 x 768 x 2 B
    cfg, roof = load_config("gpt2"), load_roof("a100")
    w = change_batch(roof, decode_step(cfg, Settings(), 1, 512).kernels(), 2000,
                     names=["embedding"])
    (_, emb), = w.moves
    assert emb.meta["bytes_split"]["weights"] == (2000 + 1024) * 768 * 2
    want = _by_name(decode_step(cfg, Settings(), 2000, 512).kernels())["embedding"]
    assert emb.bytes["DRAM"] == pytest.approx(want.bytes["DRAM"], rel=1e-12)


def test_moe_chain_keeps_the_experts_touched():
    # a routed-expert kernel's shape m (tokens x top-k) follows the batch, so a second
    # what-if counts the experts from the new tokens: 1 -> 8 -> 32 is llm's batch 32
    cfg, roof = load_config("mixtral-8x7b"), load_roof("a100")
    w8 = change_batch(roof, decode_step(cfg, Settings(), 1, 512).kernels(), 8)
    w32 = change_batch(roof, [new for _, new in w8.moves], 32)
    after = _by_name(new for _, new in w32.moves)
    for name, k in _by_name(decode_step(cfg, Settings(), 32, 512).kernels()).items():
        assert after[name].bytes["DRAM"] == pytest.approx(k.bytes["DRAM"], rel=1e-9), name

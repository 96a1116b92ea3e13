"""`rooflab train` files read by the other verbs (review s27 v3): the CSV keeps each
kernel's precision, batch and weights split (F1); whatif --precision leaves the fp32
optimizer (F3); whatif --batch keeps the optimizer and says per sequence (F6); whatif
--quantize leaves the weight-gradient writes (F7); the does-not-fit line gives the fewest
ZeRO-3 devices at a smaller activation footprint (F8). TinyLlama-1.1B, batch 8 x 2048 on
an H100 SXM, checked by hand."""

from __future__ import annotations

import csv
import json

import pytest

from rooflab.cli.main import main

PARAMS = 1_100_048_384            # TinyLlama-1.1B's parameters (test_s27_train.py)
ADAMW_BYTES = 28 * PARAMS         # reads p, g, m, v 16 B, writes p, m, v 12 B
ADAMW_FLOP = 15 * PARAMS
TINY = ("tinyllama-1.1b", "--on", "H100 SXM", "--batch", "8", "--seq", "2048", "-q")
# q_proj at 8 x 2048 tokens: weights 2048 x 2048 bf16 = 8,388,608 B x 22 layers, and
# activations (x read, y written: 2 x 16384 x 2048 x 2 B) x 22
Q_WEIGHTS = 2048 * 2048 * 2 * 22
Q_BYTES = Q_WEIGHTS + 2 * 16384 * 2048 * 2 * 22


def _main(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out, err


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("train_files")
    paths = {}
    for key, extra, suffix in (("bf16", (), "json"), ("fp32", ("--dtype", "fp32"), "json"),
                               ("csv", (), "csv"), ("b16", ("--batch", "16"), "json")):
        paths[key] = str(d / f"{key}.{suffix}")
        assert main(["train", *TINY, *extra, "-o", paths[key]]) == 0
    return paths


def _after(doc: dict, name: str) -> dict:
    return next(k for k in doc["after"]["kernels"] if k["name"] == name)


def _floor(path: str) -> float:
    return json.load(open(path))["train"]["floor_s"]


def test_F1_csv_keeps_precision_batch_and_weights(files, capsys):
    rows = {r["name"]: r for r in csv.DictReader(open(files["csv"]))}
    assert rows["q_proj"]["precision"] == "bf16" and rows["q_proj"]["unit"] == "tensor"
    assert rows["q_proj"]["batch"] == "8"
    assert float(rows["q_proj"]["weight_bytes"]) == Q_WEIGHTS
    assert float(rows["q_proj"]["bytes"]) == Q_BYTES
    opt = rows["optimizer.adamw"]
    assert opt["precision"] == "fp32" and opt["train_part"] == "optimizer"
    assert float(opt["weight_bytes"]) == float(opt["bytes"]) == ADAMW_BYTES
    # read back, the step is the bf16 step train timed (146 ms), not fp32's 1.71 s, and
    # --batch 16 gives train --batch 16's floor (283 ms), not 16x the weights' bytes
    out, err = _main(capsys, "whatif", files["csv"], "--on", "H100 SXM", "--batch", "16",
                     "--json")
    assert "precision not given" not in err
    doc = json.loads(out)
    assert doc["total_before_work_floor_s"] == pytest.approx(_floor(files["bf16"]), rel=1e-9)
    # within 0.03 %: the CSV has no shape, so the embedding's gathered rows (one per token,
    # up to the 32000-row table) are held as read once (57 us of 283 ms)
    assert doc["total_after_work_floor_s"] == pytest.approx(_floor(files["b16"]), rel=3e-4)


def test_F3_precision_bf16_leaves_the_fp32_optimizer(files, capsys):
    out, _ = _main(capsys, "whatif", files["fp32"], "--precision", "bf16", "--json")
    doc = json.loads(out)
    opt = _after(doc, "optimizer.adamw")
    assert opt["bytes"]["DRAM"] == ADAMW_BYTES            # not halved to 14 B/param
    assert opt["flop"] == {"fp32": ADAMW_FLOP}
    assert "optimizer.adamw held" in doc["assumption"]
    # the matmuls still move: q_proj's 4 B elements -> 2 B
    assert _after(doc, "q_proj")["bytes"]["DRAM"] == pytest.approx(Q_BYTES)


def test_F6_batch_keeps_the_optimizer_and_words_a_training_step(files, capsys):
    out, _ = _main(capsys, "whatif", files["bf16"], "--batch", "16", "--json")
    doc = json.loads(out)
    opt = _after(doc, "optimizer.adamw")
    assert opt["flop"] == {"fp32": ADAMW_FLOP} and opt["bytes"]["DRAM"] == ADAMW_BYTES
    assert doc["total_after_work_floor_s"] == pytest.approx(_floor(files["b16"]), rel=1e-9)
    assert "training step" in doc["assumption"] and "decode" not in doc["assumption"]
    text, _ = _main(capsys, "whatif", files["bf16"], "--batch", "16")
    flat = " ".join(text.split())
    assert "per sequence on the work floor (batch 8 -> 16" in flat
    assert "per token" not in flat


def test_F7_quantize_leaves_the_weight_gradient_writes(files, capsys):
    out, _ = _main(capsys, "whatif", files["bf16"], "--quantize", "int4", "--json")
    doc = json.loads(out)
    before = {k["name"]: k for k in json.load(open(files["bf16"]))["kernels"]}
    for name in ("q_proj.bwd_dw", "lm_head.bwd_dw", "embedding.bwd", "optimizer.adamw"):
        assert _after(doc, name)["bytes"] == before[name]["bytes"], name
    # the forward and dX read the weights at 0.5 B: q_proj's weights 4x smaller
    small = Q_BYTES - Q_WEIGHTS * 3 / 4
    assert _after(doc, "q_proj")["bytes"]["DRAM"] == pytest.approx(small)
    assert _after(doc, "q_proj.bwd_dx")["bytes"]["DRAM"] == pytest.approx(small)
    assert "QLoRA" in doc["assumption"]


def test_F8_fewest_zero3_devices_at_a_smaller_footprint(capsys):
    args = ("train", "llama-2-7b", "--on", "H100 SXM", "--batch", "4", "--seq", "4096")
    out, _ = _main(capsys, *args, "--json")
    mem = json.loads(out)["train"]["memory"]
    # 108 GB of states; activations 75.6 GB at batch 4 leave 4.4 GB a device: 25; under
    # --recompute full (13 GB) two devices hold 53.9 GB of state each
    assert mem["zero3_devices"] == 25
    assert mem["zero3_fewest"]["devices"] == 2
    assert mem["zero3_fewest"]["with"] == "--recompute full"
    assert mem["zero3_fewest"]["state_bytes_each"] == pytest.approx(mem["states_bytes"] / 2)
    text, _ = _main(capsys, *args)
    flat = " ".join(text.split())
    assert "25 devices at this micro-batch" in flat
    assert "; 2 with --recompute full, 53.9 GB of state each" in flat
    # already under --recompute full the fewest is the count given: no second figure
    text, _ = _main(capsys, *args, "--recompute", "full")
    assert "2 devices at this micro-batch" in " ".join(text.split())
    assert " with --recompute full," not in " ".join(text.split())

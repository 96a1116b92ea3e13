"""rooflab train's --dp/--zero and --loss/--clip-grad leftovers (s28 fF): compare's setup
keys, the --dp note, link options without --dp, the ZeRO stage that fits at --dp N, the
report's advice for the collectives and the clip passes, the "does not fit" figures,
MI250X's package, and --dp with --clip-grad and --loss fused together."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.compare_train import train_move
from rooflab.cli.main import main
from rooflab.model.advice import advise
from rooflab.model.analysis import analyze
from rooflab.model.roof_schema import roof_from_dict
from rooflab.model.schema import kernel_from_dict

TINY = 1_100_048_384           # TinyLlama-1.1B parameters (count_params)
ROOT = 2 * 32000 * 2048 + 2048  # its FSDP root unit: embedding, untied lm_head, final norm
LLAMA2_7B = 6_738_415_616      # Llama-2-7B parameters
BASE = ("tinyllama-1.1b", "--on", "H100 SXM", "--batch", "1", "--seq", "512")


def run(capsys, *args):
    code = main(["train", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_names_loss_and_clip_grad_and_reads_old_files_as_eager(capsys, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert run(capsys, *BASE, "-o", str(a))[0] == 0
    assert run(capsys, *BASE, "--loss", "fused", "--clip-grad", "-o", str(b))[0] == 0
    assert train_move(str(a), str(b))["setup"] == {"loss": ["eager", "fused"],
                                                   "clip_grad": [False, True]}
    # a file from before --loss/--clip-grad: no keys, read as the defaults
    doc = json.loads(b.read_text())
    old = json.loads(a.read_text())
    for key in ("loss", "clip_grad"):
        del old["train"]["setup"][key]
    a.write_text(json.dumps(old))
    assert train_move(str(a), str(b))["setup"] == {"loss": ["eager", "fused"],
                                                   "clip_grad": [False, True]}
    doc["train"]["setup"]["loss"], doc["train"]["setup"]["clip_grad"] = "eager", False
    b.write_text(json.dumps(doc))
    assert train_move(str(a), str(b))["setup"] == {}


def test_dp_note_no_longer_says_no_clipping(capsys):
    _, out, _ = run(capsys, *BASE, "--dp", "8", "--clip-grad", "--json")
    notes = json.loads(out)["train"]["notes"]
    assert not any("no gradient clipping" in n for n in notes)
    assert sum("clip_grad_norm_" in n for n in notes) == 1


@pytest.mark.parametrize("args,flag", [(("--link-bw", "450GB/s"), "--link-bw"),
                                       (("--no-overlap",), "--no-overlap"),
                                       (("--overlap",), "--overlap"),
                                       (("--dp", "1", "--link-bw", "450GB/s"), "--link-bw")])
def test_link_options_without_dp_exit_2(capsys, args, flag):
    code, out, err = run(capsys, *BASE, *args)
    assert code == 2 and "Traceback" not in out + err
    assert f"{flag}: only with data parallelism" in err and "add --dp N" in err


def test_link_options_with_dp_still_run(capsys):
    code, out, _ = run(capsys, *BASE, "--dp", "2", "--link-bw", "100GB/s", "--no-overlap",
                       "--json")
    dp = json.loads(out)["train"]["dp"]
    assert code == 0 and dp["overlap"] is False and dp["link"]["bus_bytes_per_s"] == 100e9


def test_dp_zero0_that_does_not_fit_names_the_zero_stage_that_does(capsys):
    # Llama-2-7B, 1 x 4096 on H100 SXM (80 GB): 13.48 + 13.48 GB bf16 weights and grads,
    # 80.86 GB AdamW state, 18.9 GB activations. At --dp 8, ZeRO-1: 26.95 + 80.86 / 8 +
    # 18.9 = 56.0 GB fits; at --dp 2 ZeRO-1 is 86.3 GB, ZeRO-2 13.48 + 94.34 / 2 + 18.9 =
    # 79.5 GB fits.
    args = ("llama-2-7b", "--on", "H100 SXM", "--batch", "1", "--seq", "4096")
    _, out, _ = run(capsys, *args, "--dp", "8")
    line = next(x for x in out.splitlines() if x.startswith("memory:"))
    assert "at --dp 8, --zero 1 holds it: 56 GB per device" in line
    assert "ZeRO-3 / FSDP: 2 devices" not in line
    _, out, _ = run(capsys, *args, "--dp", "2", "--json")
    fit = json.loads(out)["train"]["memory"]["zero_fit"]
    assert fit["dp"] == 2 and fit["zero"] == 2
    w = 2 * LLAMA2_7B
    assert fit["bytes_per_device"] == pytest.approx(w + (w + 12 * LLAMA2_7B) / 2
                                                    + 18.9e9, rel=2e-3)
    # no stage holds 16 sequences: the activations alone exceed the device
    _, out, _ = run(capsys, *args, "--dp", "2", "--batch", "16")
    assert "no ZeRO stage holds it at any --dp" in out
    # one device: the ZeRO-3 count, as before
    _, out, _ = run(capsys, *args)
    assert "ZeRO-3 / FSDP: 2 devices" in out


def test_does_not_fit_figures_tell_apart(capsys):
    # review s28 R2 F5: 572 kB over read "needs 16.8 GB, the device has 16.8 GB"
    code, out, err = run(capsys, "gpt2", "--on", "A100", "--batch", "16", "--seq", "1024",
                         "--memory", "16763000000")
    assert code == 0
    assert "it needs 16.764 GB, the device has 16.763 GB" in err
    assert "= 16.764 GB of 16.763 GB on the device" in out
    _, _, err = run(capsys, "llama-3-70b", "--on", "H100", "--batch", "8", "--seq", "4096",
                    "--json")
    assert "it needs 1.9 TB, the device has 80 GB" in err


def _advice(path, name):
    doc = json.loads(path.read_text())
    roof = roof_from_dict(doc["roof"])
    kernels = [kernel_from_dict(k) for k in doc["kernels"]]
    a = analyze(roof, kernels)
    k = next(k for k in kernels if k.name == name)
    p = next(p for p in a.points if p.kernel == name)
    return advise(p, roof, k)


def test_report_gives_the_collectives_link_advice(capsys, tmp_path):
    f = tmp_path / "dp.json"
    assert run(capsys, *BASE, "--dp", "8", "--no-overlap", "--dtype", "fp32",
               "-o", str(f))[0] == 0
    doc = json.loads(f.read_text())
    meta = next(k["meta"] for k in doc["kernels"] if k["name"] == "comm.allreduce")
    items = _advice(f, "comm.allreduce")
    actions = [a.action for a in items]
    assert not any("fuse with the neighbouring pass" in x or "narrower type" in x
                   for x in actions)
    overlap = next(a for a in items if a.action.startswith("overlap it with the backward"))
    # priced at the exposed part under overlap, which --no-overlap's meta keeps
    assert overlap.new_seconds == pytest.approx(meta["exposed_overlap_s"], rel=1e-3)
    assert overlap.new_seconds < meta["comm_s"]
    bf16 = next(a for a in items if "bf16_compress_hook" in a.action)
    assert bf16.speedup == pytest.approx(2.0, rel=1e-3)     # fp32 gradients, half the bytes
    # 4.4 GB of fp32 gradients, ring all-reduce on 8: 2 x 7/8 x 4.4 GB = 7.7 GB per device
    assert meta["by_zero"]["0"]["bytes"] == pytest.approx(2 * 7 / 8 * 4 * TINY)
    # ZeRO-3 less the root unit's backward all-gather (FSDP does not reshard the root
    # after the forward, s36 H): 2 x 32000 x 2048 + 2048 = 131,074,048 parameters
    assert meta["by_zero"]["3"]["bytes"] == pytest.approx(7 / 8 * 4 * (3 * TINY - ROOT))


def test_report_prices_a_zero3_move_and_words_the_clip(capsys, tmp_path):
    f = tmp_path / "z3.json"
    assert run(capsys, *BASE, "--dp", "8", "--zero", "3", "--clip-grad", "-o", str(f))[0] == 0
    items = _advice(f, "comm.zero3")
    to0 = next(a for a in items if a.action == "--zero 0 instead of --zero 3")
    # (3 Psi - root) (N-1)/N against 2 (N-1)/N Psi (s36 H: the root is not gathered in
    # the backward): 1.4404, 1.5 before
    assert to0.speedup == pytest.approx((3 * TINY - ROOT) / (2 * TINY), rel=1e-3)
    for name in ("optimizer.clip_grad.norm", "optimizer.clip_grad.scale"):
        actions = [a.action for a in _advice(f, name)]
        assert not any("shard its state" in x for x in actions)
        # s29 gA: a --zero file's passes are one device's shard already: not advised
        assert not any("each its 1/8 of the gradients" in x for x in actions)
    scale = [a.action for a in _advice(f, "optimizer.clip_grad.scale")]
    norm = [a.action for a in _advice(f, "optimizer.clip_grad.norm")]
    assert "apply the clip coefficient inside the optimizer's update" in scale
    assert "apply the clip coefficient inside the optimizer's update" not in norm
    # s29 gA: nor is the optimizer told to shard what --zero 3 shards already
    assert not any("(ZeRO-1)" in a.action for a in _advice(f, "optimizer.adamw"))


def test_mi250x_says_the_roof_is_the_package(capsys):
    _, out, _ = run(capsys, "llama-3-8b", "--on", "MI250X", "--batch", "1", "--seq", "4096",
                    "--json")
    notes = json.loads(out)["train"]["notes"]
    assert any("is 2 devices to software" in n and "A training process (one rank) runs on "
               "one die" in n for n in notes)
    _, out, _ = run(capsys, *BASE, "--json")
    assert not any("devices to software" in n for n in json.loads(out)["train"]["notes"])


def test_dp_with_clip_and_fused_loss_shards_the_clip_and_says_the_norm_allreduce(capsys):
    code, out, _ = run(capsys, "tinyllama-1.1b", "--on", "H100 SXM", "--batch", "1", "--seq",
                       "1024", "--dp", "8", "--zero", "2", "--clip-grad", "--loss", "fused",
                       "--json")
    assert code == 0
    train = json.loads(out)["train"]
    rows = {k["name"]: k for k in train["kernels"]}
    shard = -(-TINY // 8)
    assert rows["optimizer.clip_grad.norm"]["bytes"] == 2 * shard       # read once, bf16
    assert rows["optimizer.clip_grad.scale"]["bytes"] == 4 * shard      # read and written
    assert "lm_head_loss.fused" in rows and "loss" not in rows
    # ZeRO-2: reduce-scatter + all-gather, each 7/8 of the 2.2 GB of bf16 gradients
    assert rows["comm.zero2"]["bytes"] == pytest.approx(2 * 7 / 8 * 2 * TINY)
    note = next(n for n in train["notes"] if n.startswith("ZeRO-2: --clip-grad"))
    assert "1/8 shard" in note and "partial sums of squares all-reduced" in note
    # under DDP each rank clips all the gradients: no such note
    _, out, _ = run(capsys, *BASE, "--dp", "8", "--clip-grad", "--json")
    assert not any("partial sums" in n for n in json.loads(out)["train"]["notes"])

"""`rooflab train --dp N`: the exposed-communication gaps session 35 left (s36 C).

Hand figures: llama-2-7b (P = 6,738,415,616 parameters, vocab 32000, hidden 4096, untied
lm_head) on H100 SXM, --batch 1 --seq 4096, bf16; catalog NVLink 450 GB/s bus bandwidth.

* FSDP (--zero 3): the root unit (what no block's unit wraps: embedding + lm_head + final
  norm) is 2 x 32000 x 4096 + 4096 = 262,148,096 parameters, 524,296,192 B in bf16. Its
  weights are all-gathered before the forward's first kernel (PyTorch's FSDP notes: "the
  1st all-gather will not be able to overlap with anything") and its gradients
  reduce-scattered after the backward's last: at --dp 4 each 3/4 x 524,296,192 / 450e9 =
  873.83 us, exposed. The rest of each collective is in one unit per transformer block (s36
  H: 32 of them; 25 MB pieces in s36 C) under its window (forward 66 ms, backward 130 ms,
  longer than the link's 22.5 / 44.9 ms), leaving its last unit: forward (22.4614 -
  0.8738) ms / 32 = 674.63 us; the backward gathers the blocks only (the root is not
  resharded after the forward, s36 H), 3/4 x (GRAD - ROOT) / 450e9 + 22.4614 ms = 44.0490
  ms, (44.0490 - 0.8738) ms / 32 = 1349.23 us. Exposed 2 x 873.83 + 674.63 + 1349.23 =
  3.7715 ms (s36 C: 1.8349 ms with 25 MB pieces; s35: 524 us).
* Hop latency per bucket (--dp 4 --hop-latency-us 10, DDP): each of the 226 buckets (s37
  B, filled tensor by tensor: lm_head's, each layer's 7 matrices one a bucket, the
  embedding's 262 MB; 506 by bytes before, 30.36 ms) is an all-reduce of its own and pays
  2(4-1) = 6 hops x 10 us: 226 x 60 us = 13.56 ms on top of 2 x 3/4 x 13,476,831,232 /
  450e9 = 44.9228 ms: 58.4828 ms (s35: 44.9828 ms, the hops paid once).
* ZeRO-2 under --accumulate 4 (DeepSpeed reduces every micro-batch): the reduce-scatter
  runs 4 times, each 3/4 x 13,476,831,232 / 450e9 = 22.4614 ms + 14 buckets (DeepSpeed's
  reduce_bucket_size, 5e8 elements = 1e9 B of bf16: s36 H; 506 of 25 MiB in s36 C) x 3
  hops x 10 us = 0.42 ms; the all-gather after the optimizer step once, in 14 buckets of
  allgather_bucket_size, 22.4614 + 0.42 ms: 5 x 22.8814 = 114.407 ms. Its exposed part
  is every micro-batch's last bucket, the embedding's 262 MB inside it: 4 x 22.8814 / 14
  = 4 x 1.63438 ms + 22.8814 ms = 29.4189 ms.
"""

from __future__ import annotations

import json

import pytest
from cli_inproc import json_of

from rooflab.cli.main import main

NVLINK = 450e9
GRAD = 2 * 6_738_415_616
ROOT = 2 * (2 * 32000 * 4096 + 4096)
STEP = ["train", "llama-2-7b", "--on", "H100 SXM", "--batch", "1", "--seq", "4096"]


@pytest.fixture(scope="module")
def fsdp4(tmp_path_factory):
    path = tmp_path_factory.mktemp("s36c") / "z3.json"
    assert main([*STEP, "--dp", "4", "--zero", "3", "-q", "-o", str(path)]) == 0
    return path


def test_fsdp_root_unit_all_gather_and_reduce_scatter_are_exposed(fsdp4):
    """The root unit's all-gather before the forward and its reduce-scatter after the
    backward: 873.83 us each, 1.8349 ms exposed in all (module docstring)."""
    dp = json.loads(fsdp4.read_text())["train"]["dp"]
    fwd, bwd = dp["collectives"]
    root_s = 3 / 4 * ROOT / NVLINK
    assert root_s * 1e6 == pytest.approx(873.83, abs=0.01)
    for c in (fwd, bwd):
        assert c["last_bucket_bytes"] == ROOT
        assert c["last_bucket_s_each"] == pytest.approx(root_s, rel=1e-9)
    ag = 3 / 4 * GRAD / NVLINK
    bwd_s = 3 / 4 * (GRAD - ROOT) / NVLINK + ag      # the root not gathered again (s36 H)
    assert fwd["exposed_s_each"] == pytest.approx(root_s + (ag - root_s) / 32, rel=1e-9)
    assert bwd["exposed_s_each"] == pytest.approx(root_s + (bwd_s - root_s) / 32, rel=1e-9)
    assert dp["exposed_s"] * 1e3 == pytest.approx(3.7715, abs=1e-4)


def test_fsdp_file_verbs_time_the_root_unit_again(fsdp4, capsys):
    """whatif --bytes-scale 1 re-times the row from its meta collectives: the same
    3.7715 ms the train step counts (the root's piece sits in last_bucket_s_each)."""
    doc = json_of(capsys, ["whatif", str(fsdp4), "--bytes-scale", "1", "--json"])
    move = next(m for m in doc["moves"] if m["kernel"] == "comm.zero3")
    assert move["after_exposed_s"] * 1e3 == pytest.approx(3.7715, abs=1e-4)


def test_fsdp_note_names_the_root_unit(capsys):
    """The note says what is exposed and why, in the words of train_dp_words."""
    assert main([*STEP, "--dp", "4", "--zero", "3"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert ("except the root unit's (the embedding, the final norm and an untied lm_head): "
            "its weights are all-gathered before the forward's first kernel and its "
            "gradients reduce-scattered after the backward's last, both all exposed") in text
    assert "3.77 ms exposed" in text


def test_hop_latency_is_paid_per_bucket(capsys):
    """226 buckets x 6 hops x 10 us = 13.56 ms on top of 44.9228 ms: 58.4828 ms."""
    dp = json_of(capsys, [*STEP, "--dp", "4", "--hop-latency-us", "10", "--json"])[
        "train"]["dp"]
    (c,) = dp["collectives"]
    assert c["buckets"] == 226
    assert dp["comm_s"] == pytest.approx(2 * 3 / 4 * GRAD / NVLINK + 226 * 6 * 10e-6,
                                         rel=1e-12)
    assert dp["comm_s"] * 1e3 == pytest.approx(58.4828, abs=1e-4)
    # the embedding's own bucket pays its 6 hops once: 873.81 + 60 us
    assert c["last_bucket_s_each"] == pytest.approx(2 * 3 / 4 * 262_144_000 / NVLINK
                                                    + 60e-6, rel=1e-12)


def test_file_verbs_keep_the_buckets_hop_latency(tmp_path, capsys):
    """whatif --bytes-scale 1 and choose on the same device re-time the row's bandwidth part
    on the link and keep the file's hop latency (latency_s_each = 226 x 60 us): the exposed
    part train prints, 933.81 us (the embedding's bucket with its 60 us) + the last bucket
    before it, layer 0's q_proj, ready at the backward's end (s38 B): its 60 us + 44.049 ms
    x 33,554,432 / 13,214,687,232 B = 171.85 us: 1.10566 ms (s37 B, an equal 225th of
    58.4828 - 0.93381 ms: 1.18958 ms; scaled whole, the latency would shrink)."""
    path = tmp_path / "hop.json"
    assert main([*STEP, "--dp", "4", "--hop-latency-us", "10", "-q", "-o", str(path)]) == 0
    capsys.readouterr()
    meta = next(k for k in json.loads(path.read_text())["kernels"]
                if k["name"] == "comm.allreduce")["meta"]
    assert meta["collectives"][0]["latency_s_each"] == pytest.approx(226 * 60e-6, rel=1e-12)
    emb = 2 * 3 / 4 * 262_144_000 / NVLINK + 60e-6
    emb_b = 262_144_000
    q_proj = 60e-6 + 2 * 3 / 4 * GRAD / NVLINK * (1 - emb_b / GRAD) * 2 * 4096**2 \
        / (GRAD - emb_b)
    want = emb + q_proj
    assert want * 1e3 == pytest.approx(1.10566, abs=1e-5)
    doc = json_of(capsys, ["whatif", str(path), "--bytes-scale", "1", "--json"])
    move = next(m for m in doc["moves"] if m["kernel"] == "comm.allreduce")
    assert move["after_exposed_s"] == pytest.approx(want, rel=1e-9)
    rows = json_of(capsys, ["choose", str(path), "--among", "H100 SXM", "--json"])["devices"]
    assert rows[0]["dp_exposed_s"] == pytest.approx(want, rel=1e-9)


def test_hop_words_say_every_bucket_pays(capsys):
    """The link line says the count the latency is paid by: 226 buckets (s36 H: worded
    as collectives launched, as FSDP's backward launches two a unit)."""
    assert main([*STEP, "--dp", "4", "--hop-latency-us", "10"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert ("each of the 226 collectives launched per step (one a bucket or unit, FSDP's "
            "backward two a block) pays the hops (2(N-1) an all-reduce, N-1 the others)") \
        in text


def test_zero2_accumulate_reduces_and_exposes_every_micro_batch(capsys):
    """ZeRO-2 --accumulate 4: 4 reduce-scatters of 22.8814 ms with their hops and one
    all-gather, 114.407 ms; exposed 4 x 1.51551 ms + 22.8814 ms = 28.9434 ms (s36 H:
    DeepSpeed's 14 buckets of 5e8 elements; s38 H: filled tensor by tensor, the last
    891,305,984 B; 29.4189 ms with equal 1/14 shares)."""
    dp = json_of(capsys, [*STEP, "--dp", "4", "--zero", "2", "--accumulate", "4",
                          "--hop-latency-us", "10", "--json"])["train"]["dp"]
    rs, ag = dp["collectives"]
    half = 3 / 4 * GRAD / NVLINK
    assert rs["calls"] == 4 and ag["calls"] == 1
    assert rs["buckets"] == ag["buckets"] == 14
    assert rs["seconds_each"] == pytest.approx(half + 14 * 3 * 10e-6, rel=1e-12)
    assert ag["seconds_each"] == pytest.approx(half + 14 * 3 * 10e-6, rel=1e-12)
    assert dp["comm_s"] * 1e3 == pytest.approx(114.407, abs=1e-3)
    # the last bucket, the embedding's inside it: s38 H fills DeepSpeed's buckets tensor
    # by tensor (model/ddp_ready.py), the last 891,305,984 B of 13,476,831,232, 1.51551 ms
    # with its launch's 30 us (before: an equal 1/14, 1.63438 ms)
    each = 3 * 10e-6 + half * 891_305_984 / GRAD
    assert rs["exposed_s_each"] == pytest.approx(each, rel=1e-9)
    assert rs["exposed_s_each"] * 1e3 == pytest.approx(1.51551, abs=1e-5)
    assert dp["exposed_s"] == pytest.approx(4 * each + ag["seconds_each"], rel=1e-9)

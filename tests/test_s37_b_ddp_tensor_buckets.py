"""`rooflab train --dp N` (--zero 0): PyTorch DDP's buckets filled tensor by tensor in the
gradients' ready order, the first bucket's limit 1 MiB (torch.distributed.
_DEFAULT_FIRST_BUCKET_BYTES), the others bucket_cap_mb = 25 MiB; a bucket closes once its
bytes reach the limit, the tensor that reaches it inside (reducer.cpp
compute_bucket_assignment_by_size). s37 B: rooflab counted gradient bytes / 25 MiB.

Hand figures:
  * 4 tensors of 0.5 MiB under [1 MiB, 25 MiB]: the first two reach 1 MiB (bucket 1), the
    other two, 1 MiB, stay under 25 MiB (bucket 2): 2; under [25 MiB] alone, 1.
  * 3 tensors of 10 MiB under [25 MiB]: 30 MiB >= 25 at the third: 1 bucket (a rule that
    closed a bucket before a tensor would overflow it would give 2).
  * llama-2-7b (hidden 4096, MLP 11008, 32 layers, vocab 32000, untied): 32 x 9 + 3 = 291
    tensors, 6,738,415,616 parameters. Ready order (reverse of registration): lm_head
    (32000 x 4096 x 2 = 262,144,000 B) closes the 1 MiB first bucket alone; then per layer
    the norms (8,192 B each) and down, up, gate (90,177,536 B = 86 MiB each), o, v, k, q
    (33,554,432 B = 32 MiB each): every matrix is past 25 MiB, so each closes a bucket,
    the norms before it inside: 7 a layer, 224; the embedding last: 1 + 224 + 1 = 226
    buckets (by bytes: 1 + ceil(13,214,687,232 / 26,214,400) = 506).
  * --dp 4 on H100 SXM (NVLink 450 GB/s): the all-reduce is 2 x 3/4 x 13,476,831,232 /
    450e9 = 44.923 ms, the embedding's bucket 2 x 3/4 x 262,144,000 / 450e9 = 0.87381 ms
    after the backward, the other 225 each ready when the backward has written them (s38
    B) leave the last, layer 0's q_proj, its bytes' share of the link, (44.923 - 0.874) x
    33,554,432 / 13,214,687,232 = 0.11185 ms: 0.98566 ms exposed (as 225 equal shares, s37
    B: 0.19577 ms, 1.0696 ms; 961.0 us with 505 + 1).
"""

from __future__ import annotations

import pytest
from cli_inproc import json_of

from rooflab.model.ddp_ready import ddp_buckets
from rooflab.workloads.llm.config_names import load_config
from rooflab.workloads.llm.grad_tensors import ready_order

MIB = 2**20
NVLINK = 450e9
GRAD = 13_476_831_232
STEP = ["train", "llama-2-7b", "--on", "H100 SXM", "--batch", "1", "--seq", "4096",
        "--dp", "4", "--json"]


def test_torchs_rule_on_small_lists():
    assert ddp_buckets([(0.5 * MIB, 4)], (MIB, 25 * MIB)) == 2
    assert ddp_buckets([(0.5 * MIB, 4)], (25 * MIB,)) == 1
    assert ddp_buckets([(10 * MIB, 3)], (25 * MIB,)) == 1
    assert ddp_buckets([(10 * MIB, 3), (1.0, 1)], (25 * MIB,)) == 2   # a new bucket after


def test_llama_2_7b_tensors_in_ready_order():
    t = ready_order(load_config("llama-2-7b"))
    assert len(t) == 291 and sum(t) == 6_738_415_616
    assert t[0] == t[-1] == 32000 * 4096                    # lm_head first, embedding last
    assert t[1:4] == (4096, 4096, 4096)                     # final norm, the last layer's two
    assert t[4:7] == (4096 * 11008,) * 3                    # down, up, gate
    assert t[7:11] == (4096 * 4096,) * 4                    # o, v, k, q


def test_train_counts_226_buckets_and_their_exposed_tail(capsys):
    dp = json_of(capsys, STEP)["train"]["dp"]
    (c,) = dp["collectives"]
    assert c["buckets"] == 1 + 32 * 7 + 1
    assert c["bucket_by"] == "tensors"
    assert c["first_bucket_bytes"] == MIB
    assert c["tensor_runs"][:3] == [[262_144_000.0, 1], [8192.0, 3], [90_177_536.0, 3]]
    assert sum(b * n for b, n in c["tensor_runs"]) == GRAD
    whole = 2 * 3 / 4 * GRAD / NVLINK
    emb = 2 * 3 / 4 * 262_144_000 / NVLINK
    q_proj = 2 * 4096 * 4096
    assert dp["exposed_s"] == pytest.approx(
        emb + (whole - emb) * q_proj / (GRAD - 262_144_000), rel=1e-9)
    assert dp["exposed_s"] * 1e3 == pytest.approx(0.98566, abs=1e-5)
    assert dp["bucket"]["by"] == "tensors" and "_DEFAULT_FIRST_BUCKET_BYTES" in \
        dp["bucket"]["source"]


def test_bucket_mb_is_every_buckets_limit(capsys):
    """--bucket-mb 25 (given: torch then passes it as the first bucket's limit too): for
    llama-2-7b the same 226, since lm_head's 250 MiB closes the first bucket either way."""
    dp = json_of(capsys, [*STEP, "--bucket-mb", "25"])["train"]["dp"]
    (c,) = dp["collectives"]
    assert c["first_bucket_bytes"] == 25 * MIB and c["buckets"] == 226

"""`rooflab train --dp N`: the input embedding's gradient is a bucket of its own, reduced
after the backward ends, all of it exposed (s35 M); the file verbs time it again from the
row's meta collectives (`last_bucket_s_each`), and a file without it keeps today's result.

Hand figures (catalog NVLink on an H100 SXM: 450 GB/s bus bandwidth per direction, no hop
latency):
  * llama-2-7b, --batch 1 --seq 4096 --dp 4: the bf16 gradients are 2 x 6,738,415,616 =
    13,476,831,232 B, all-reduced in 2 x 3/4 x 13,476,831,232 / 450e9 = 44.923 ms. The
    embedding's gradient is 32000 x 4096 x 2 = 262,144,000 B > 25 MiB: its own bucket,
    2 x 3/4 x 262,144,000 / 450e9 = 0.87381 ms after the backward (130 ms, longer than the
    rest). The rest, 44.923 - 0.874 = 44.049 ms in 225 buckets (s37 B: filled tensor by
    tensor, lm_head's and each layer's 7 matrices one a bucket; 505 by bytes before, 961.0
    us), each ready when the backward has written its gradients (s38 B), leaves its last,
    layer 0's q_proj, 4096 x 4096 x 2 = 33,554,432 B of the 13,214,687,232 B: 44.049 ms x
    that share = 111.85 us: 985.66 us exposed (s37 B, an equal 225th: 195.8 us, 1069.6 us;
    87.2 us before s35 M: 515 equal buckets, the embedding among them); step floor 254 ms.
  * gpt2 (tied lm_head: the table counted once), --batch 1 --seq 1024 --dp 4: wte + wpe =
    (50257 + 1024) x 768 x 2 = 78,767,616 B, 2 x 3/4 x 78,767,616 / 450e9 = 0.26256 ms.
  * llama-2-7b --dp 8 --zero 3: the backward's all-gather + reduce-scatter leaves the
    embedding's reduce-scatter, 7/8 x 262,144,000 / 450e9 = 0.50972 ms, after it; since
    s36 C FSDP's whole root unit (embedding, lm_head and the final norm: 524,296,192 B),
    7/8 x 524,296,192 / 450e9 = 1.01946 ms.
  * bucket_exposed_s(1.0, 4.0, 5, last_s=0.2): 4 equal buckets of 0.2 s each after 1.0 s of
    compute, the last 0.2 s after the window, then the 0.2 s last bucket: 0.4 s (0.2 s
    without it).
"""

from __future__ import annotations

import json
import math

import pytest

from rooflab.cli.main import main

NVLINK = 450e9
GRAD = 2 * 6_738_415_616
EMB = 32000 * 4096 * 2
STEP = ["train", "llama-2-7b", "--on", "H100 SXM", "--batch", "1", "--seq", "4096"]


def _json(capsys, argv) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def dp4(tmp_path_factory):
    path = tmp_path_factory.mktemp("s35m") / "t.json"
    assert main([*STEP, "--dp", "4", "-q", "-o", str(path)]) == 0
    return path


def test_bucket_rule_puts_the_last_bucket_after_the_window():
    from rooflab.model.train_comm import bucket_exposed_s

    assert bucket_exposed_s(1.0, 4.0, 5, last_s=0.2) == pytest.approx(0.4)
    assert bucket_exposed_s(1.0, 4.0, 5) == pytest.approx(0.2)
    assert bucket_exposed_s(1.0, 0.0, 5, last_s=0.2) == pytest.approx(1.0)   # no window


def test_dp4_exposes_the_embedding_bucket(dp4):
    t = json.loads(dp4.read_text())["train"]
    dp = t["dp"]
    whole = 2 * 3 / 4 * GRAD / NVLINK
    emb = 2 * 3 / 4 * EMB / NVLINK
    rest = 1 + 32 * 7       # lm_head's bucket and each layer's 7 matrices' (s37 B)
    assert rest < math.ceil((GRAD - EMB) / (25 * 2**20))
    assert dp["comm_s"] == pytest.approx(whole, rel=1e-9)       # the whole is unchanged
    q_proj = 4096 * 4096 * 2      # the last bucket before the embedding's (s38 B)
    assert dp["exposed_s"] == pytest.approx((whole - emb) * q_proj / (GRAD - EMB) + emb,
                                            rel=1e-9)
    assert dp["exposed_s"] * 1e6 == pytest.approx(985.66, abs=0.01)
    (c,) = dp["collectives"]
    assert c["last_bucket_bytes"] == EMB
    assert c["last_bucket_s_each"] == pytest.approx(emb, rel=1e-9)
    meta = next(k for k in json.loads(dp4.read_text())["kernels"]
                if k["name"] == "comm.allreduce")["meta"]
    assert meta["collectives"][0]["buckets"] == 226
    assert meta["collectives"][0]["last_bucket_s_each"] == pytest.approx(emb, rel=1e-9)


def test_train_prints_it_and_says_what_is_modelled(capsys):
    assert main([*STEP, "--dp", "4"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("overlapped with the compute in 25 MiB buckets (PyTorch DDP's bucket_cap_mb), "
            "filled tensor by tensor: 226 of them, the first to 1 MiB: 986 us exposed "
            "(2.2 % of it), step floor 253 ms compute + 986 us = 254 ms") in out
    assert "not modelled apart" not in out
    assert ("the last ready is the input embedding's gradient (written by the backward's "
            "last kernel, "
            "embedding.bwd; a tied lm_head's too): over 25 MiB it is a bucket of its own, "
            "reduced after the backward ends, all of it exposed") in out


def test_whatif_and_choose_time_it_again_and_an_older_file_keeps_its_result(dp4, capsys,
                                                                          tmp_path):
    doc = _json(capsys, ["whatif", str(dp4), "--bytes-scale", "1", "--json"])
    move = next(m for m in doc["moves"] if m["kernel"] == "comm.allreduce")
    assert move["after_exposed_s"] * 1e6 == pytest.approx(985.66, abs=0.01)
    rows = _json(capsys, ["choose", str(dp4), "--among", "H100 SXM", "--json"])["devices"]
    assert rows[0]["dp_exposed_s"] * 1e6 == pytest.approx(985.66, abs=0.01)
    # a file written before the field: its collectives as that file listed them (515
    # equal buckets), timed as before: 44.923 ms / 515 = 87.23 us
    old = json.loads(dp4.read_text())
    for k in old["kernels"]:
        for c in k.get("meta", {}).get("collectives", []):
            c.pop("last_bucket_s_each")
            c.pop("tensor_runs")      # nor the tensors (s37 B), timed bucket by bucket
            c["buckets"] = 515
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    doc = _json(capsys, ["whatif", str(path), "--bytes-scale", "1", "--json"])
    move = next(m for m in doc["moves"] if m["kernel"] == "comm.allreduce")
    assert move["after_exposed_s"] == pytest.approx(2 * 3 / 4 * GRAD / NVLINK / 515,
                                                    rel=1e-9)


def test_tied_gpt2_counts_its_table_once(capsys):
    dp = _json(capsys, ["train", "gpt2", "--on", "H100 SXM", "--batch", "1", "--seq",
                        "1024", "--dp", "4", "--json"])["train"]["dp"]
    (c,) = dp["collectives"]
    assert c["last_bucket_bytes"] == (50257 + 1024) * 768 * 2
    assert c["last_bucket_s_each"] * 1e3 == pytest.approx(0.26256, abs=1e-5)


def test_zero3_leaves_the_embeddings_reduce_scatter_after_the_backward(capsys):
    dp = _json(capsys, [*STEP, "--dp", "8", "--zero", "3", "--json"])["train"]["dp"]
    bwd = next(c for c in dp["collectives"] if c["name"] == "all_gather_reduce_scatter.bwd")
    # s36 C: FSDP's root unit, embedding + lm_head + final norm, is reduced last
    root = 2 * EMB + 4096 * 2
    assert bwd["last_bucket_bytes"] == root
    assert bwd["last_bucket_s_each"] * 1e3 == pytest.approx(7 / 8 * root / NVLINK * 1e3,
                                                            rel=1e-9)
    assert bwd["last_bucket_s_each"] * 1e3 == pytest.approx(1.01946, abs=1e-5)
    assert bwd["exposed_s_each"] > bwd["last_bucket_s_each"]

"""`rooflab train --dp N` (--zero 0): each DDP bucket is ready when the backward has written
its last gradient, not after an equal share of the backward (s38 B, model/ddp_ready.py).

Hand figures:
  * The pass (t_free = max(t_free, ready_j) + link_j; exposed max(0, t_end - W)) on k
    equal buckets, ready at j W / k, each c = T / k, is bucket_exposed_s' closed form,
    max(W/k + T, W + T/k) - W: T = 1, W = 4, k = 4: max(1 + 1, 4 + 0.25) - 4 = 0.25;
    with a last bucket of 0.2 of T ready at W: 0.2 + 0.2 = 0.4.
  * Four tensors of 10, 20, 30, 10 B (the last the input embedding, the first as big: an
    untied lm_head), one a bucket (limits 1 B), T = 7 s, W = 6 s: the share leaves the
    embedding out, 60 B; ready at 1, 3, 6 and 6 s; link 0.1 s a byte: 1, 2, 3, 1 s. The
    link ends at 2, 5, 9, 10 s: 4 s exposed (equal shares: 3 s). With 0.4 s of it hops,
    0.1 s a launch: link 0.1 + 6.6 / 70 s a byte.
  * Tied (the first tensor, 2 B, a norm; the embedding 40 B also the lm_head, whose
    matmul runs first): 2, 20, 20, 40 B, T = 8.2 s, W = 8.2 s: the share 40 B ahead of the
    82 B: ready at 42, 62, 82, 82 of 82 x W = 4.2, 6.2, 8.2, 8.2 s; link 0.2, 2, 2, 4 s:
    4.4, 8.2, 10.2, 14.2: 6 s exposed.
  * llama-2-7b --batch 1 --seq 4096 --dp 4 on H100 SXM (NVLink 450 GB/s): the all-reduce
    2 x 3/4 x 13,476,831,232 / 450e9 = 44.923 ms in 226 buckets; the embedding's own
    bucket, 0.87381 ms, after the backward; the one before it, layer 0's q_proj
    (33,554,432 B), ready at the backward's end, its bytes' share of the other 44.049 ms:
    x 33,554,432 / 13,214,687,232 = 0.11185 ms: 985.66 us exposed (an equal 225th: 1069.6
    us). whatif --hardware H200 (the same NVLink) keeps 985.66 us, as train --on H200.
  * On MI300X (xGMI 192 GB/s): 105.29 ms of link for a 97.31 ms backward: the queue runs
    from lm_head's bucket, ready at 262,144,000 / 13,214,687,232 x 97.31 = 1.930 ms, to
    105.29 + 1.93 - 97.31 = 9.907 ms exposed (8.409 ms with equal shares), in train --on
    MI300X and in whatif --hardware MI300X of the H100 file.
"""

from __future__ import annotations

import json

import pytest
from cli_inproc import run_cli

STEP = ["train", "llama-2-7b", "--batch", "1", "--seq", "4096", "--dp", "4"]
GRAD = 13_476_831_232
EMB = 262_144_000
Q_PROJ = 2 * 4096 * 4096
NVLINK = 450e9


def test_the_pass_on_equal_buckets_is_the_closed_form():
    from rooflab.model.ddp_ready import queued_exposed_s
    from rooflab.model.train_comm import bucket_exposed_s

    assert queued_exposed_s(4.0, [((j + 1) * 1.0, 0.25) for j in range(4)]) == \
        pytest.approx(0.25)
    # with the last bucket ready only when the window ends
    assert queued_exposed_s(4.0, [(1.0, 0.2), (2.0, 0.2), (3.0, 0.2), (4.0, 0.2),
                                  (4.0, 0.2)]) == pytest.approx(0.4)
    for t, w, k, last in ((1.0, 4.0, 5, 0.2), (7.0, 3.0, 9, 0.0), (0.3, 2.0, 226, 0.02),
                          (5.0, 5.0, 2, 1.0), (2.0, 9.0, 1, 0.0)):
        n = k - (1 if last else 0)
        pieces = [(w * (j + 1) / n, (t - last) / n) for j in range(n)]
        pieces += [(w, last)] if last else []
        assert queued_exposed_s(w, pieces) == pytest.approx(
            bucket_exposed_s(t, w, k, last), rel=1e-12, abs=1e-15)


def test_buckets_ready_at_their_bytes_share():
    from rooflab.model.ddp_ready import tensor_exposed_s
    from rooflab.model.train_comm import bucket_exposed_s

    runs = [(10.0, 1), (20.0, 1), (30.0, 1), (10.0, 1)]
    assert tensor_exposed_s(7.0, 6.0, runs, (1.0, 1.0)) == pytest.approx(4.0)
    assert bucket_exposed_s(7.0, 6.0, 4, 1.0) == pytest.approx(3.0)   # the equal shares
    # hops: 0.1 s each of the 4 launches, the rest, 6.6 s, by bytes
    c = [0.1 + 6.6 * b / 70 for b in (10, 20, 30, 10)]
    end = max(max(max(1 + c[0], 3) + c[1], 6) + c[2], 6) + c[3]
    assert tensor_exposed_s(7.0, 6.0, runs, (1.0, 1.0), latency_s=0.4) == \
        pytest.approx(end - 6.0)
    assert tensor_exposed_s(7.0, 0.0, runs, (1.0, 1.0)) == 7.0    # no window: all of it


def test_a_tied_lm_heads_matmul_comes_first():
    from rooflab.model.ddp_ready import tensor_exposed_s

    runs = [(2.0, 1), (20.0, 2), (40.0, 1)]
    assert tensor_exposed_s(8.2, 8.2, runs, (1.0, 1.0)) == pytest.approx(6.0)


@pytest.fixture(scope="module")
def h100(tmp_path_factory):
    path = tmp_path_factory.mktemp("s38b") / "t.json"
    done = run_cli(*STEP, "--on", "H100 SXM", "-q", "-o", str(path))
    assert done.returncode == 0, done.stderr
    return path


def _dp(path) -> dict:
    return json.loads(path.read_text())["train"]["dp"]


def test_train_dp4_leaves_the_last_tensors_bucket_and_the_embeddings(h100):
    dp = _dp(h100)
    whole, emb = 2 * 3 / 4 * GRAD / NVLINK, 2 * 3 / 4 * EMB / NVLINK
    assert dp["comm_s"] == pytest.approx(whole, rel=1e-12)
    want = emb + (whole - emb) * Q_PROJ / (GRAD - EMB)
    assert dp["exposed_s"] == pytest.approx(want, rel=1e-9)
    assert dp["exposed_s"] * 1e6 == pytest.approx(985.66, abs=0.01)


@pytest.mark.parametrize("hw, exposed_ms", [("H200 SXM", 0.98566), ("MI300X", 9.907)])
def test_whatif_hardware_times_the_buckets_as_train_does(h100, tmp_path, hw, exposed_ms):
    on = tmp_path / "on.json"
    assert run_cli(*STEP, "--on", hw, "-q", "-o", str(on)).returncode == 0
    train = json.loads(on.read_text())["train"]
    assert train["dp"]["exposed_s"] * 1e3 == pytest.approx(exposed_ms, abs=1e-3)
    done = run_cli("whatif", str(h100), "--hardware", hw, "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    move = next(m for m in doc["moves"] if m["kernel"] == "comm.allreduce")
    assert move["after_exposed_s"] == pytest.approx(train["dp"]["exposed_s"], rel=1e-9)
    assert doc["total_after_floor_s"] == pytest.approx(train["floor_s"], rel=1e-9)


def test_the_note_says_when_a_bucket_is_ready():
    done = run_cli(*STEP, "--on", "H100 SXM")
    out = " ".join(done.stdout.split())
    assert ("under overlap each 25 MiB gradient bucket is ready when the backward has "
            "written its last gradient") in out
    assert "equal share" not in out
    # ZeRO-1's DeepSpeed buckets are filled tensor by tensor too (s38 H), and say so
    z1 = " ".join(run_cli(*STEP, "--on", "H100 SXM", "--zero", "1").stdout.split())
    assert ("is ready when the next gradient would take it past the size (DeepSpeed's "
            "reduce_independent_p_g_buckets_and_remove_grads)") in z1

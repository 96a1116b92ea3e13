"""Session 38 H: DeepSpeed ZeRO-1/2's reduce buckets are filled tensor by tensor in the
gradients' ready order, as DDP's are (model/ddp_ready.py), and the words say each scheme's
own bucket (the advice said "25 MB" for every scheme).

DeepSpeed's rule (stage_1_and_2.py reduce_independent_p_g_buckets_and_remove_grads): before
a gradient joins the bucket, if the bucket's elements + its own pass reduce_bucket_size, the
bucket is reduced first; so a bucket closes at the next tensor's hook, never past the size
(DDP's closes once it reaches its size, past it). Hand check, tensors of 2 B under a 3 B
limit: DeepSpeed 2 | 2 | 2 | 2, each launched when the next is written; DDP 2+2 | 2+2.

llama-2-7b --dp 4 --zero 1 on H100, batch 1 x 4096: the gradients 2 x 6,738,415,616 =
13,476,831,232 B in 5e8-element (1e9 B) buckets, filled so: 14 buckets, the last 891,305,984
B (the last layers' tensors from the one that overflowed the 13th, and the embedding's
262,144,000). A reduce-scatter over 4 sends 3/4 x 13.48 GB / 450 GB/s = 22.4614 ms; the
backward (130 ms) hides all but the last bucket, ready only when it ends: 22.4614 x
891,305,984 / 13,476,831,232 = 1.48551 ms, + the all-gather's 22.4614 ms all exposed =
23.9469 ms (old: an equal 1/14 of 22.4614 = 1.60439 ms, 24.0658 ms). The step floor moves
by the difference, 234.647 -> 234.528 ms.
"""

from __future__ import annotations

import json

import pytest
from cli_inproc import run_cli

STEP = ["train", "llama-2-7b", "--on", "H100 SXM", "--batch", "1", "--seq", "4096",
        "--dp", "4"]
GRAD = 2 * 6_738_415_616
HALF = 3 / 4 * GRAD / 450e9     # 22.4614 ms
LAST = 891_305_984


def test_deepspeed_closes_a_bucket_before_the_tensor_that_overflows_it():
    """2 B tensors under 3 B: DeepSpeed 4 buckets, each launched at the next tensor's
    bytes (4, 6, 8 written), the last at the end (8); DDP 2 of 4 B."""
    from rooflab.model.ddp_ready import ddp_buckets, filled

    runs = ((2.0, 4),)
    assert filled(runs, (3.0,), "deepspeed") == ((2.0, 4.0), (2.0, 6.0), (2.0, 8.0),
                                                  (2.0, 8.0))
    assert ddp_buckets(runs, (3.0,), "deepspeed") == 4
    assert filled(runs, (3.0,), "ddp") == ((4.0, 4.0), (4.0, 8.0))
    # a tensor past the limit is a bucket of its own: 1 | 5 | 1
    assert filled(((1.0, 1), (5.0, 1), (1.0, 1)), (3.0,), "deepspeed") == (
        (1.0, 6.0), (5.0, 7.0), (1.0, 7.0))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("h38z")
    out = {}
    for z in ("1", "2"):
        out[z] = tmp / f"z{z}.json"
        done = run_cli(*STEP, "--zero", z, "-o", str(out[z]))
        assert done.returncode == 0, done.stderr
        out[f"text{z}"] = " ".join(done.stdout.split())
    return out


@pytest.mark.parametrize("zero", ["1", "2"])
def test_the_last_bucket_is_the_tensors_last_not_an_equal_share(files, zero):
    dp = json.loads(files[zero].read_text())["train"]["dp"]
    rs, ag = dp["collectives"]
    assert rs["buckets"] == 14 and rs["bucket_by"] == "elements"
    assert rs["exposed_s_each"] == pytest.approx(HALF * LAST / GRAD, rel=1e-9)
    assert rs["exposed_s_each"] * 1e3 == pytest.approx(1.48551, abs=1e-5)
    assert dp["exposed_s"] == pytest.approx(ag["seconds_each"] + HALF * LAST / GRAD,
                                            rel=1e-9)
    assert dp["exposed_s"] * 1e3 == pytest.approx(23.9469, abs=1e-4)


@pytest.mark.parametrize("zero", ["1", "2"])
def test_whatif_of_the_file_is_trains(files, zero):
    """whatif --bytes-scale 1 re-times the row from its tensor_runs: train's 23.9469 ms."""
    train = json.loads(files[zero].read_text())["train"]["dp"]["exposed_s"]
    done = run_cli("whatif", str(files[zero]), "--bytes-scale", "1", "--json")
    assert done.returncode == 0, done.stderr
    (move,) = [m for m in json.loads(done.stdout)["moves"] if "before_exposed_s" in m]
    assert move["before_exposed_s"] == pytest.approx(train, rel=1e-9)
    assert move["after_exposed_s"] == pytest.approx(train, rel=1e-9)
    assert move["after_exposed_s"] * 1e3 == pytest.approx(23.9469, abs=1e-4)


def test_the_words_say_each_schemes_bucket(files, tmp_path):
    """train's note says when a DeepSpeed bucket is ready; report's advice on a
    --no-overlap step names DeepSpeed's 1 GB (5e8 elements) and DDP's 25 MiB buckets (the
    first 1 MiB), not "25 MB" for both."""
    assert ("under overlap each 1 GB bucket of the gradients' reduce-scatter is ready when "
            "the next gradient would take it past the size") in files["text1"]
    z1, ddp = tmp_path / "z1n.json", tmp_path / "ddpn.json"
    for path, extra in ((z1, ["--zero", "1"]), (ddp, [])):
        done = run_cli(*STEP, *extra, "--no-overlap", "-o", str(path))
        assert done.returncode == 0, done.stderr
    said = {p: run_cli("report", str(p), "--json").stdout for p in (z1, ddp)}
    assert ("ZeRO-1/2 reduce-scatters the gradients in 1 GB buckets (DeepSpeed's "
            "reduce_bucket_size, 5e8 elements), filled tensor by tensor, as the backward "
            "produces them") in said[z1]
    assert ("PyTorch DDP all-reduces 25 MiB (the first 1 MiB) gradient buckets, filled "
            "tensor by tensor, as the backward produces them") in said[ddp]
    assert "25 MB" not in said[z1] + said[ddp]
    helps = " ".join(run_cli("train", "--help").stdout.split())
    assert "DDP's 25 MB buckets" not in helps

"""`rooflab train --dp N --zero S`: each scheme's collectives cut as its framework cuts them
(s36 H; workloads/llm/train_dp_comm.py).

Hand figures: llama-2-7b (P = 6,738,415,616 parameters, vocab 32000, hidden 4096, 32
blocks, untied lm_head) on H100 SXM, --batch 1 --seq 4096, bf16; catalog NVLink 450 GB/s
bus bandwidth; --dp 4, so a reduce-scatter or an all-gather of the bf16 gradients or
weights (GRAD = 2P = 13,476,831,232 B) sends 3/4 of it: 22.4614 ms, N-1 = 3 hops.

* ZeRO-1/2 (DeepSpeed): reduce_bucket_size = allgather_bucket_size = 5e8 elements, 1e9 B
  of bf16: ceil(13,476,831,232 / 1e9) = 14 buckets each (DDP's 25 MiB gave 506). With
  --hop-latency-us 10: 14 x 3 x 10 us = 0.42 ms each, 22.8814 ms. The embedding's 262 MB
  gradient is inside the last bucket, so the reduce-scatter leaves its last equal bucket,
  22.8814 / 14 = 1.63438 ms (the backward, 130 ms, is longer than the link's 22.9 ms):
  exposed 22.8814 + 1.63438 = 24.5158 ms.
* FSDP (--zero 3), one unit per block + the root (2 x 32000 x 4096 + 4096 = 262,148,096
  parameters, ROOT = 524,296,192 B): 33 units. Forward: 33 all-gathers; backward: the 32
  blocks' all-gathers (the root is not resharded after the forward) and 33
  reduce-scatters, 65 launches. Bytes the backward moves: (GRAD - ROOT) + GRAD =
  26,429,366,272 B; sent per step 3/4 x (3 GRAD - ROOT) = 29,929,648,128 B (30,322,870,272
  with the root gathered again). With --hop-latency-us 10: forward 22.4614 ms + 33 x 30 us =
  23.4514 ms, backward 3/4 x 26,429,366,272 / 450e9 = 44.0490 ms + 65 x 30 us = 45.9990 ms.
* whatif --precision fp32 on a bf16 DDP file: the gradients double, 26,953,662,464 B; DDP
  fills its buckets tensor by tensor (s37 B), and at fp32 as at bf16 every matrix is past
  25 MiB: 226 buckets, as `train --dtype fp32` cuts them (by bytes, s36 H: 506 -> 1010).
  DeepSpeed's buckets are elements, FSDP's blocks: their counts stay.
"""

from __future__ import annotations

import json
import math

import pytest
from cli_inproc import json_of, one_line_error

from rooflab.cli.main import main

NVLINK = 450e9
GRAD = 2 * 6_738_415_616
ROOT = 2 * (2 * 32000 * 4096 + 4096)
EMB = 2 * 32000 * 4096
HALF = 3 / 4 * GRAD / NVLINK          # 22.4614 ms
STEP = ["train", "llama-2-7b", "--on", "H100 SXM", "--batch", "1", "--seq", "4096",
        "--dp", "4"]
HOP = ["--hop-latency-us", "10"]


def _dp(capsys, *extra) -> dict:
    return json_of(capsys, [*STEP, *extra, "--json"])["train"]["dp"]


def _file(tmp_path, name, *extra):
    path = tmp_path / name
    assert main([*STEP, *extra, "-q", "-o", str(path)]) == 0
    return path


def test_zero1_uses_deepspeeds_bucket_of_5e8_elements(capsys):
    """14 buckets of 1e9 B each way, 0.42 ms of hops each; 24.5158 ms exposed."""
    dp = _dp(capsys, "--zero", "1", *HOP)
    rs, ag = dp["collectives"]
    assert math.ceil(GRAD / 1e9) == 14
    for c in (rs, ag):
        assert c["buckets"] == 14 and c["launches_each"] == 14
        assert c["bucket_bytes"] == 1e9 and c["bucket_by"] == "elements"
        assert c["seconds_each"] == pytest.approx(HALF + 14 * 3 * 10e-6, rel=1e-12)
    assert rs["last_bucket_bytes"] == 0       # the embedding's 262 MB shares the last
    # the reduce-scatter's last bucket (s38 H: DeepSpeed's filled tensor by tensor, the
    # last 891,305,984 B of 13,476,831,232 with its launch's 30 us; 22.8814 / 14 before)
    last = 3 * 10e-6 + HALF * 891_305_984 / GRAD
    assert dp["exposed_s"] * 1e3 == pytest.approx(22.8814 + 1.51551, abs=1e-3)
    assert dp["exposed_s"] == pytest.approx(ag["seconds_each"] + last, rel=1e-9)


def test_fsdp_has_one_unit_per_block_and_does_not_regather_the_root(capsys):
    """33 units; the backward moves (GRAD - ROOT) + GRAD in 65 launches (module
    docstring): 23.4514 ms forward, 45.9990 ms backward with 10 us hops."""
    dp = _dp(capsys, "--zero", "3", *HOP)
    fwd, bwd = dp["collectives"]
    assert fwd["buckets"] == bwd["buckets"] == 33
    assert fwd["bucket_by"] == bwd["bucket_by"] == "unit"
    assert (fwd["launches_each"], bwd["launches_each"]) == (33, 65)
    assert bwd["bytes"] == GRAD - ROOT + GRAD == 26_429_366_272
    assert dp["bytes_per_device"] == pytest.approx(3 / 4 * (3 * GRAD - ROOT), rel=1e-12)
    assert fwd["seconds_each"] * 1e3 == pytest.approx(23.4514, abs=1e-4)
    assert bwd["seconds_each"] == pytest.approx(
        3 / 4 * (2 * GRAD - ROOT) / NVLINK + 65 * 30e-6, rel=1e-12)
    assert bwd["seconds_each"] * 1e3 == pytest.approx(45.9990, abs=1e-4)


def test_file_verbs_reproduce_trains_exposed_time_per_scheme(tmp_path, capsys):
    """whatif (same roof), choose --among the file's device and compare of the file with
    itself count the exposed part train prints, for every scheme, with hops per bucket."""
    for zero in ("0", "1", "2", "3"):
        path = _file(tmp_path, f"z{zero}.json", "--zero", zero, *HOP)
        capsys.readouterr()
        train = json.loads(path.read_text())["train"]["dp"]["exposed_s"]
        doc = json_of(capsys, ["whatif", str(path), "--bytes-scale", "1", "--json"])
        move = next(m for m in doc["moves"] if m["kernel"].startswith("comm."))
        assert move["after_exposed_s"] == pytest.approx(train, rel=1e-9), zero
        rows = json_of(capsys, ["choose", str(path), "--among", "H100 SXM", "--json"])
        assert rows["devices"][0]["dp_exposed_s"] == pytest.approx(train, rel=1e-9), zero
        cmp = json_of(capsys, ["compare", str(path), str(path), "--json"])
        assert cmp["train"]["comm_exposed_s"]["after"] == pytest.approx(train, rel=1e-9)


def test_whatif_precision_recounts_ddp_buckets_not_deepspeeds_or_fsdps(tmp_path, capsys):
    """--precision fp32 on bf16 files: DDP 226 -> 226 buckets (tensor by tensor), exposed =
    train --dtype fp32's; ZeRO-1 14 and FSDP 33 stay, exposed = train --dtype fp32's too."""
    assert 1 + math.ceil((2 * GRAD - 2 * EMB) / (25 * 2**20)) == 1010    # by bytes
    for zero, want in (("0", 226), ("1", 14), ("3", 33)):
        bf16 = _file(tmp_path, f"b{zero}.json", "--zero", zero, *HOP)
        fp32 = _file(tmp_path, f"f{zero}.json", "--zero", zero, *HOP, "--dtype", "fp32")
        capsys.readouterr()
        doc = json_of(capsys, ["whatif", str(bf16), "--precision", "fp32", "--json"])
        row = next(k for k in doc["after"]["kernels"] if k["name"].startswith("comm."))
        theirs = json.loads(fp32.read_text())
        own = next(k for k in theirs["kernels"] if k["name"].startswith("comm."))
        for got, exp in zip(row["meta"]["collectives"], own["meta"]["collectives"],
                            strict=True):
            assert got["buckets"] == exp["buckets"]
            assert got["latency_s_each"] == pytest.approx(exp["latency_s_each"], rel=1e-9)
            assert got["seconds_each"] == pytest.approx(exp["seconds_each"], rel=1e-9)
        assert row["meta"]["collectives"][0]["buckets"] == want
        move = next(m for m in doc["moves"] if m["kernel"].startswith("comm."))
        assert move["after_exposed_s"] == pytest.approx(theirs["train"]["dp"]["exposed_s"],
                                                        rel=1e-9), zero


def test_bucket_mb_sets_ddps_bucket_cap(capsys):
    """--bucket-mb 100 (the first bucket's limit too, as torch passes a given
    bucket_cap_mb): tensor by tensor (s37 B), lm_head's 250 MiB alone; then two layers
    make 5 buckets (down+up 172 MiB, gate+o 118, v+k+q 96 carried into the next layer:
    +down 182, up+gate 172, o+v+k+q 128), 16 pairs 80; the embedding's 250 MiB alone:
    82 buckets x 6 hops x 10 us = 4.92 ms (by bytes, s36 H: 128, 7.68 ms)."""
    dp = _dp(capsys, "--bucket-mb", "100", *HOP)
    (c,) = dp["collectives"]
    assert c["bucket_bytes"] == 100 * 2**20 and c["buckets"] == 1 + 16 * 5 + 1
    assert c["seconds_each"] == pytest.approx(2 * HALF + 82 * 6 * 10e-6, rel=1e-12)
    assert main([*STEP, "--bucket-mb", "100"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "overlapped with the compute in 100 MiB buckets (PyTorch DDP's bucket_cap_mb)" \
        in out


def test_bucket_mb_is_refused_where_it_sets_nothing(capsys):
    """FSDP cuts by block, one device has no buckets, a size must be > 0: exit 2."""
    err = one_line_error(capsys, [*STEP, "--zero", "3", "--bucket-mb", "25"])
    assert "under --zero 3 FSDP all-gathers and reduce-scatters one unit per " \
           "transformer block: drop --bucket-mb" in err
    err = one_line_error(capsys, ["train", "llama-2-7b", "--on", "H100 SXM",
                                  "--bucket-mb", "25"])
    assert "--bucket-mb: only with data parallelism" in err
    err = one_line_error(capsys, [*STEP, "--bucket-mb", "0"])
    assert "--bucket-mb must be a positive, finite size in MiB" in err


def test_words_name_each_schemes_bucket(capsys):
    """The overlap line says the bucket each scheme uses; --help the defaults."""
    assert main([*STEP, "--zero", "2"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "gradients reduce-scattered in 1 GB buckets (DeepSpeed's reduce_bucket_size, " \
           "5e8 elements)" in out
    assert "25 MB" not in out and "25 MiB" not in out
    assert main([*STEP, "--zero", "3"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "by 33 FSDP units (one per transformer block and the root" in out
    assert "the backward does not all-gather it again" in out


def test_json_says_where_the_bucket_comes_from(capsys):
    """train.dp.bucket: the framework default is nominal with its source; --bucket-mb 50
    (52,428,800 B) is given."""
    assert _dp(capsys, "--zero", "1")["bucket"] == {
        "bytes": 1e9, "by": "elements", "provenance": "nominal",
        "source": "DeepSpeed zero_optimization reduce_bucket_size = allgather_bucket_size "
                  "= 5e8 elements (deepspeed/runtime/zero/config.py)"}
    got = _dp(capsys, "--zero", "1", "--bucket-mb", "50")["bucket"]
    assert (got["bytes"], got["provenance"], got["source"]) == (52_428_800, "given",
                                                                "--bucket-mb")
    assert _dp(capsys, "--zero", "3")["bucket"]["units"] == 33

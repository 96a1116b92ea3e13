"""rooflab train --dp N --zero S: ZeRO's memory (the paper's worked example), the ring
all-reduce by hand, overlap, the file report and compare read, and the errors."""

from __future__ import annotations

import json
import math

import pytest

from rooflab.cli.compare_train import train_move
from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.model.comm_link import Link
from rooflab.workloads.llm import load_config
from rooflab.workloads.llm.train import TrainSetup, run_train
from rooflab.workloads.llm.train_dp import dp_collectives, with_dp, zero_state_bytes
from rooflab.workloads.llm.train_dp_comm import BUCKET_BYTES
from rooflab.workloads.llm.train_memory import train_memory

LLAMA2_7B = 6_738_415_616      # parameters (count_params; Touvron et al. 2023: 6.7B)
H100_NVLINK = 450e9            # NVLink 4: 900 GB/s both directions, 450 per direction


def run(capsys, *args):
    code = main(["train", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("stage,gb", [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_zero_memory_reproduces_the_papers_figure_1(stage, gb):
    # Rajbhandari et al. 2020, Fig. 1: Psi = 7.5B, K = 12, N = 64 devices
    w, g, o = zero_state_bytes(7.5e9, 2, 12, 64, stage)
    assert round((w + g + o) / 1e9, 1) == gb


def test_allreduce_of_llama2_7b_on_8_h100_by_hand():
    # 2 B gradients: 13.48 GB; a ring sends 2 x 7/8 of it: 23.58 GB; at 450 GB/s 52.4 ms
    link = Link("NVLink", H100_NVLINK)
    (c,) = dp_collectives(LLAMA2_7B, 2, 8, 0, 1, link, 0.0, 0.0)
    assert c.sent == pytest.approx(2 * 7 / 8 * 2 * LLAMA2_7B)
    assert c.seconds * 1e3 == pytest.approx(52.41, abs=0.01)
    assert c.exposed_s(overlap=True) == pytest.approx(c.seconds)   # no backward to hide under


def test_cli_dp_json_has_the_hand_allreduce_and_the_catalog_link(capsys):
    code, out, _ = run(capsys, "llama-2-7b", "--on", "H100 SXM", "--batch", "1", "--seq",
                       "4096", "--dp", "8", "--json")
    assert code == 0
    train = json.loads(out)["train"]
    dp = train["dp"]
    assert dp["n"] == 8 and dp["zero"] == 0 and dp["overlap"] is True
    assert dp["link"]["level"] == "NVLink" and dp["link"]["bus_bytes_per_s"] == H100_NVLINK
    assert "900 GB/s both directions" in dp["link"]["source"]
    assert dp["allreduce_s"] * 1e3 == pytest.approx(52.41, abs=0.01)
    # overlapped: the embedding's gradient (32000 x 4096 x 2 = 262.1 MB, a bucket of its
    # own, written by the backward's last kernel) is all-reduced after the backward, 2 x
    # 7/8 x 262.1 MB / 450 GB/s = 1.019 ms, behind the last of the other 13.21 GB's 225
    # buckets, filled tensor by tensor (s37 B: lm_head's, then each layer's 7 matrices,
    # each past 25 MiB, one a bucket), each ready when the backward has written it (s38
    # B): layer 0's q_proj, 4096 x 4096 x 2 = 33.55 MB, ready at the backward's end, its
    # bytes' share of the link, 51.39 ms x 33.55 MB / 13.21 GB = 130 us (s37 B: an equal
    # 225th, 228 us; s35 M: 505 buckets of at most 25 MiB, 102 us)
    emb = 2 * 32000 * 4096
    buckets = 1 + 32 * 7
    assert buckets > math.ceil((2 * LLAMA2_7B - emb) / BUCKET_BYTES) - 300
    emb_s = 2 * 7 / 8 * emb / H100_NVLINK
    rest_s = dp["allreduce_s"] - emb_s
    q = 2 * 4096 * 4096
    assert dp["exposed_s"] == pytest.approx(rest_s * q / (2 * LLAMA2_7B - emb) + emb_s)
    assert dp["exposed_s"] * 1e3 == pytest.approx(1.150, abs=0.001)
    assert train["floor_s"] == pytest.approx(dp["compute_floor_s"] + dp["exposed_s"])
    # tokens/s of all 8 devices; MFU per device
    assert train["tokens_per_s"] == pytest.approx(8 * 4096 / train["floor_s"])
    assert train["setup"]["dp"] == 8
    comm = [k for k in train["kernels"] if k["part"] == "comm"]
    assert len(comm) == 1 and comm[0]["bytes"] == pytest.approx(dp["bytes_per_device"])


def test_no_overlap_exposes_all_and_accumulate_reduces_once():
    cfg, roof = load_config("tinyllama-1.1b"), load_roof("H100 SXM")
    link = Link("NVLink", H100_NVLINK)
    st = TrainSetup(batch=1, seq=1024, dp=4, accumulate=4)
    serial = with_dp(run_train(cfg, roof, st), link, overlap=False)
    assert serial.dp.exposed_s == pytest.approx(serial.dp.comm_s)
    assert [c.calls for c in serial.dp.collectives] == [1]     # DDP no_sync
    z2 = with_dp(run_train(cfg, roof, TrainSetup(batch=1, seq=1024, dp=4, zero=2,
                                                 accumulate=4)), link)
    # ZeRO-2 keeps only its gradient shard: every micro-batch is reduce-scattered
    assert [c.calls for c in z2.dp.collectives] == [4, 1]


def test_zero_shards_the_optimizer_kernel_and_the_memory():
    cfg, roof = load_config("llama-2-7b"), load_roof("H100 SXM")
    one = run_train(cfg, roof, TrainSetup(batch=1, seq=1024))
    z1 = run_train(cfg, roof, TrainSetup(batch=1, seq=1024, dp=8, zero=1))
    opt1, opt8 = (r.step.optimizer[0].op for r in (one, z1))
    assert opt8.bytes == pytest.approx(28 * -(-LLAMA2_7B // 8))
    assert opt8.bytes == pytest.approx(opt1.bytes / 8, rel=1e-8)
    m3 = train_memory(cfg, TrainSetup(batch=1, seq=1024, dp=8, zero=3), 80e9)
    assert m3.states == pytest.approx(16 * LLAMA2_7B / 8)
    m0 = train_memory(cfg, TrainSetup(batch=1, seq=1024, dp=8), 80e9)
    assert m0.states == pytest.approx(16 * LLAMA2_7B)


def test_zero3_that_fits_says_so_and_unfit_advice_counts_unsharded(capsys):
    code, out, _ = run(capsys, "llama-2-7b", "--on", "H100 SXM", "--batch", "1", "--seq",
                       "4096", "--dp", "8", "--zero", "3")
    assert code == 0
    assert "it fits with ZeRO-3" in out
    code, out, _ = run(capsys, "llama-2-7b", "--on", "H100 SXM", "--batch", "1", "--seq",
                       "4096", "--dp", "8", "--json")
    mem = json.loads(out)["train"]["memory"]
    # 108 GB of states and 18.9 GB of activations on 80 GB: ZeRO-3 needs 2 devices
    assert mem["fits"] is False and mem["zero3_devices"] == 2


def test_dp_1_adds_no_keys(capsys):
    args = ("tinyllama-1.1b", "--on", "H100 SXM", "--batch", "1", "--seq", "512", "--json")
    _, plain, _ = run(capsys, *args)
    _, one, _ = run(capsys, *args, "--dp", "1")
    a, b = json.loads(plain), json.loads(one)
    for key in ("roof", "kernels", "analysis", "train"):     # all but the command line
        assert a[key] == b[key]
    train = a["train"]
    assert "dp" not in train and "dp" not in train["setup"]
    assert all(k["part"] != "comm" for k in train["kernels"])


@pytest.mark.parametrize("args,words", [
    (("--dp", "0"), "--dp must be an integer >= 1"),
    (("--dp", "-2"), "--dp must be an integer >= 1"),
    (("--dp", "8", "--zero", "4"), "--zero must be one of 0, 1, 2, 3"),
    (("--zero", "1"), "give --dp N with N >= 2"),
])
def test_bad_dp_and_zero_exit_2_with_the_fix(capsys, args, words):
    code, out, err = run(capsys, "tinyllama-1.1b", "--on", "H100 SXM", *args)
    assert code == 2
    assert words in err and "Traceback" not in err + out


def test_report_and_compare_read_a_dp_file(capsys, tmp_path):
    one, dp = tmp_path / "one.json", tmp_path / "dp.json"
    base = ("tinyllama-1.1b", "--on", "H100 SXM", "--batch", "1", "--seq", "512")
    assert run(capsys, *base, "-o", str(one))[0] == 0
    assert run(capsys, *base, "--dp", "8", "--zero", "1", "-o", str(dp))[0] == 0
    assert main(["report", str(dp)]) == 0
    assert "comm.zero1" in capsys.readouterr().out
    move = train_move(str(one), str(dp))
    assert move["setup"] == {"dp": [1, 8], "zero": [0, 1]}
    doc = json.loads(dp.read_text())
    assert any(c["level"] == "NVLink" for c in doc["roof"]["memory"])
    csv = tmp_path / "dp.csv"
    assert run(capsys, *base, "--dp", "8", "-o", str(csv))[0] == 0
    # s29 gA: the communication is a row, its bytes at the link (a level column), so that
    # they do not read back as DRAM bytes (tests/test_s29_gA_train_files.py)
    row = next(r for r in csv.read_text().splitlines() if r.startswith("comm."))
    assert ",NVLink," in row

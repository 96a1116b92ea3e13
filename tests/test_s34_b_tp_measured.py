"""s34 B: `rooflab llm --tpot-ms/--ttft-ms` under --tp and --pp: "x the floor" and the gap
are against the printed floor with the all-reduces (stage transfers), the compute floor is
named beside it, MBU and MFU are per GPU, and the JSON carries the same numbers.

Hand check, llama-2-70b fp16 on H100 SXM (3.35 TB/s, fp16 tensor 989.5 TFLOP/s), --tp 4,
batch 8, decode context 576 (the summary line of the same run):
  compute floor (one shard's kernels)        10.444 ms
  link: all-reduces 69.9 us + embedding 437 ns + logits gather 853 ns = 71.2 us
  TPOT floor with all-reduces 10.444 + 0.0712 = 10.515 ms
  --tpot-ms 12: 12 / 10.515 = 1.141x (the old line said 12 / 10.444 = 1.149x "the floor")
                gap 12 - 10.515 = 1.485 ms (the old gap line 12 - 10.444 = 1.556 ms)
  MBU per GPU: shard bytes 34.99 GB / 12 ms = 2.916 TB/s / 3.35 TB/s = 0.870
  prefill (batch 8 x 512): compute floor 164.56 ms + link 36.02 ms = 200.57 ms
  --ttft-ms 250: 250 / 200.57 = 1.246x, 250 / 164.56 = 1.519x the compute floor;
                 shard 140.9 TFLOP / 250 ms = 563.7 TFLOP/s, MFU 0.570; at the floor
                 140.9 T / 200.57 ms / 989.5 T = 0.710 (the most that link allows)
--pp 2, batch 8: the tables hold both stages (41.614 ms of kernels), 1 transfer 291 ns:
  --tpot-ms 50: 50 / 41.614 = 1.2015x; MBU per GPU: both stages' 139.5 GB / 50 ms =
  2.79 TB/s over 2 x 3.35 TB/s = 0.416 (the old line 0.833, one device's bandwidth);
  at the floor 0.4165 x 50 / 41.614 = 0.50: one stage works at a time.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

TP = ["llm", "llama-2-70b", "--on", "H100 SXM", "--tp", "4", "--batch", "8"]
PP = ["llm", "llama-2-70b", "--on", "H100 SXM", "--pp", "2", "--batch", "8"]


def _measured(capsys, args) -> dict:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["llm"]


def test_tp_decode_is_against_the_floor_with_all_reduces_in_the_json(capsys):
    llm = _measured(capsys, [*TP, "--tpot-ms", "12"])
    m, par = llm["measured"], llm["parallel"]
    # the floor is the summary's TPOT floor: the shard's kernels plus the link term
    assert m["floor_s"] == pytest.approx(llm["totals"]["tpot_s"], rel=1e-12)
    assert m["floor_s"] == pytest.approx(10.515e-3, rel=2e-4)
    assert m["compute_floor_s"] == pytest.approx(10.444e-3, rel=2e-4)
    assert m["link_s"] == pytest.approx(par["comm_s"] + par["embedding_allreduce_s"]
                                        + par["logits_gather_s"], rel=1e-9)
    assert m["link_s"] == pytest.approx(71.2e-6, rel=2e-3)
    assert m["floor_ratio"] == pytest.approx(1.1412, abs=2e-4)          # old: 1.1490
    assert m["compute_floor_ratio"] == pytest.approx(1.1490, abs=2e-4)
    assert m["gap_s"] == pytest.approx(1.4847e-3, rel=1e-3)            # old: 1.556 ms
    assert m["mbu"] == pytest.approx(0.870, abs=1e-3)
    assert m["mbu_at_floor"] == pytest.approx(0.870 * 12 / 10.515, abs=2e-3)
    assert (m["tp"], m["pp"], m["link"]) == (4, 1, "all-reduces")


def test_tp_decode_line_names_each_floor(capsys):
    assert main([*TP, "--tpot-ms", "12"]) == 0
    out = capsys.readouterr().out
    assert ("measured TPOT 12 ms (one device's shard of 4): 23.2 TFLOP/s at AI 7.94 = 87 % "
            "of one device's roof, 1.14x the floor with all-reduces (10.5 ms; 1.15x the "
            "compute floor 10.4 ms); MBU per GPU 87 % (2.92 TB/s of DRAM 3.35 TB/s), MFU "
            "per GPU 2.3 % (of fp16 tensor 990 TFLOP/s)\n") in out
    assert "gap above the floor with all-reduces 1.48 ms, less than the 1123 launches" in out
    assert "1.15x the floor;" not in out and "gap above the floor 1.56 ms" not in out


def test_tp_prefill_line_and_json_say_what_the_all_reduces_leave(capsys):
    assert main([*TP, "--ttft-ms", "250"]) == 0
    out = capsys.readouterr().out
    assert ("measured TTFT 250 ms (one device's shard of 4): 564 TFLOP/s at AI 864 = 57 % "
            "of one device's roof, 1.25x the floor with all-reduces (201 ms; 1.52x the "
            "compute floor 165 ms); MFU per GPU 57 % (of fp16 tensor 990 TFLOP/s), MBU per "
            "GPU 19 % (653 GB/s of DRAM 3.35 TB/s); the floor with all-reduces allows at "
            "most MFU 71 %\n") in out
    p = _measured(capsys, [*TP, "--ttft-ms", "250"])["measured"]["prefill"]
    assert p["floor_s"] == pytest.approx(200.57e-3, rel=2e-4)
    assert p["compute_floor_s"] == pytest.approx(164.56e-3, rel=2e-4)
    assert p["floor_ratio"] == pytest.approx(1.2464, abs=2e-4)          # old: 1.5192
    assert p["gap_s"] == pytest.approx(250e-3 - 200.57e-3, rel=1e-3)
    assert p["mfu"] == pytest.approx(0.5696, abs=1e-3)
    assert p["mfu_at_floor"] == pytest.approx(0.7100, abs=1e-3)


def test_pp_mbu_is_per_gpu_and_the_floor_has_the_transfer(capsys):
    m = _measured(capsys, [*PP, "--tpot-ms", "50"])["measured"]
    assert m["floor_ratio"] == pytest.approx(50 / 41.614, rel=2e-4)
    assert m["mbu"] == pytest.approx(0.4165, abs=1e-3)                  # old: 0.833
    assert m["mbu"] == pytest.approx(m["achieved_bytes_per_s"] / (2 * 3.35e12), rel=1e-9)
    assert m["mbu_at_floor"] == pytest.approx(0.50, abs=1e-3)
    assert (m["tp"], m["pp"], m["link"]) == (1, 2, "1 stage transfer")
    assert main([*PP, "--tpot-ms", "50"]) == 0
    out = capsys.readouterr().out
    assert ("1.20x the floor with 1 stage transfer (41.6 ms); MBU per GPU 42 % (2.79 TB/s "
            "of DRAM 3.35 TB/s x 2 GPUs)") in out
    assert "one stage works at a time, so even at the floor MBU per GPU is 50 %" in out
    assert "gap above the floor with 1 stage transfer 8.39 ms" in out

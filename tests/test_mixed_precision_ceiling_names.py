"""Fixes from a review pass over the mixed-precision, whatif --group and llm edge commits.

A100 hand numbers (catalog): fp16 tensor 312 TFLOP/s, fp32 vector 19.5 TFLOP/s, DRAM
2039 GB/s. 9e9 fp16 + 1e9 fp32 FLOP: 10e9 / (9e9 / 312e12 + 1e9 / 19.5e12) = 124.8 TFLOP/s,
ridge 61.2 FLOP/B.
"""

from __future__ import annotations

import pytest

from rooflab.hardware.catalog import lookup_roof
from rooflab.model import Kernel, analyze
from rooflab.model.diagnose import diagnose
from rooflab.model.whatif import quantize_weights

A100 = lookup_roof("A100")


def _roof_distance(kernel):
    (d,) = diagnose(analyze(A100, [kernel]))
    (x,) = [x for x in d.distances if x.name == "roof"]
    return d, x


def test_memory_side_mixed_kernel_names_its_weighted_ceiling_not_its_precision():
    # AI 10e9 / 3.3e8 = 30.3 < the weighted ridge 61.2: memory side. Its compute ceiling is
    # the weighted 124.8 TFLOP/s; "fp16 peaks at 125 TFLOP/s" misstated the A100's fp16
    # tensor peak (312), as the compute side already said "weighted ... peaks at".
    k = Kernel("mixedmem", {"fp16": 9e9, "fp32": 1e9}, {"DRAM": 3.3e8}, seconds=1e-3,
               unit="tensor")
    d, x = _roof_distance(k)
    assert d.point.memory_bound_side
    assert d.point.peak_flop_per_s == pytest.approx(124.8e12, rel=1e-12)
    assert x.words.startswith("weighted fp16 tensor + fp32 vector peaks at 125 TFLOP/s")
    assert "fp16 peaks at" not in x.words


def test_memory_side_single_precision_kernel_still_names_its_precision():
    # fp32 vector: the fastest float ceiling (fp16 tensor 312) is above it, so the words
    # name the kernel's own precision, not the memory label that binds on the slope
    k = Kernel("gemv", {"fp32": 1e9}, {"DRAM": 2e8}, seconds=1e-4, unit="vector")
    d, x = _roof_distance(k)
    assert d.point.memory_bound_side            # AI 5 < 19.5e12 / 2039e9 = 9.56
    assert x.words.startswith("fp32 peaks at 19.5 TFLOP/s")


def test_quantize_group_with_fp8_says_it_is_not_used():
    # --group 128 with --quantize fp8 changes nothing (one scale per tensor; pinned in
    # test_whatif), but the assumption line did not say the option was dropped
    k = Kernel("gemv", {"fp16": 3.4e7}, {"DRAM": 3.4e7}, seconds=5e-4, meta={"op": "gemv"})
    w = quantize_weights(A100, [k], "fp8", group=128)
    assert "(fp8: one scale per tensor, --group 128 not used)" in w.assumption
    assert "--group" not in quantize_weights(A100, [k], "fp8").assumption


def test_llm_step_table_ratio_never_in_exponent_form(capsys, monkeypatch):
    # lm_head of llama-3-8b on an Orin Nano: 10.3 ms floor / 5 us launch = 2060x, which
    # the floor/launch column printed as '2.06e+03x' (units.fmt_factor's case)
    from rooflab.cli.main import main

    monkeypatch.setenv("COLUMNS", "200")
    assert main(["llm", "llama-3-8b", "--on", "jetson-orin-nano", "--phase", "decode"]) == 0
    out = capsys.readouterr().out
    (row,) = [ln for ln in out.splitlines() if ln.startswith("│ lm_head")]
    assert "e+0" not in row and "2060x" in row


def _sweep_memory_line(capsys, *args):
    from rooflab.cli.main import main

    assert main(["llm", *args, "--phase", "decode", "--batch", "1,8"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    line = out[out.index("memory: the weights alone"):]
    return line[:line.index("runs (")] + line[line.index("runs ("):].split(")")[0] + ")"


def test_sweep_offers_only_weight_dtypes_whose_weights_fit(capsys, monkeypatch):
    # fp16 llama-3-8b on an 8 GB Orin Nano: int8 weights are 8.03 G x (1 + 2/128) B =
    # 8.16 GB > 8 GB, so only int4 (4.14 GB) makes room, as the memory line above it says
    # ("batch 1 fits this device with --weights int4"); the sweep line offered int8/int4
    monkeypatch.setenv("COLUMNS", "200")
    assert _sweep_memory_line(capsys, "llama-3-8b", "--on", "jetson-orin-nano") == (
        "memory: the weights alone (16.1 GB) do not fit in 8 GB: no batch of this sweep "
        "runs (--weights int4)")
    # llama-3-70b: not even int4 (36.5 GB of weights) fits 8 GB
    assert _sweep_memory_line(capsys, "llama-3-70b", "--on", "jetson-orin-nano").endswith(
        "no batch of this sweep runs (a smaller model, or a device with more memory)")
    # a T4 (16 GB) holds int8's 8.16 GB: both offered, --tp first (unchanged)
    assert _sweep_memory_line(capsys, "llama-3-8b", "--on", "T4").endswith(
        "(--tp, or --weights int8/int4)")

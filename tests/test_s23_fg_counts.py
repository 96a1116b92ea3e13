"""s23 r1 mutants F4, F6, F9: counts and parsing that no test pinned by value.

F4: ncu's fallback tensor FLOP = sm__inst_executed_pipe_tensor x FLOP per warp-level
instruction (ingest/ncu_flop.py TENSOR_FACTOR, its comment): V100 (CC 7.0 / 7.2) 512
(NERSC roofline-on-nvidia-gpus), Turing HMMA.1688 2 x 16 x 8 x 8 = 2048, Ampere / Ada
HMMA.16816 2 x 16 x 8 x 16 = 4096. 1000 instructions -> literal FLOP below.
F6: a linear layer with a bias adds tokens x n FLOP (one add per output).
F9: parse_size is SI for kB/MB/GB (1000) and IEC for KiB/MiB (1024): the package's SI
units (units.si prints 48,000 B as '48 kB'), and docs/bench.md's "32kB (likwid's kB, 1000 B)".
"""

from __future__ import annotations

import pytest

from rooflab.ingest.ncu_metrics import launch_counts
from rooflab.units import parse_size, si
from rooflab.workloads.llm import load_config
from rooflab.workloads.llm.kernels import decode_step
from rooflab.workloads.llm.settings import Settings


@pytest.mark.parametrize(("cc", "flop"), [
    ((7, 0), 512_000.0), ((7, 2), 512_000.0),                  # V100, Xavier: x 512
    ((7, 5), 2_048_000.0),                                     # T4: HMMA.1688
    ((8, 0), 4_096_000.0), ((8, 6), 4_096_000.0),              # A100, A10: HMMA.16816
    ((8, 7), 4_096_000.0), ((8, 9), 4_096_000.0),              # Orin, L4 / Ada
])
def test_tensor_instruction_fallback_factor_per_architecture(cc, flop):
    m = {"gpu__time_duration.sum": 1e-3, "dram__bytes.sum": 1e6,
         "sm__inst_executed_pipe_tensor.sum": 1000.0}
    c = launch_counts(m, cc)
    assert c.flop == {"fp16": flop}
    assert f"x {flop / 1000:.0f} (assumed fp16 HMMA shape for CC {cc[0]}.{cc[1]})" in c.notes[0]


def test_qwen2_qkv_bias_adds_one_flop_per_output():
    # Qwen2.5-7B config.json: hidden 3584, 28 heads, 4 KV heads (head dim 3584 / 28 = 128,
    # KV width 4 x 128 = 512), 28 layers; q/k/v carry a bias, o_proj none. Decode, batch 1:
    # q_proj 28 x (2 x 3584 x 3584 + 3584) = 28 x 25,693,696 = 719,423,488
    # k_proj 28 x (2 x 3584 x 512 + 512)   = 28 x  3,670,528 = 102,774,784 (v_proj alike)
    # o_proj 28 x  2 x 3584 x 3584          = 28 x 25,690,112 = 719,323,136 (no bias)
    step = decode_step(load_config("qwen2.5-7b"), Settings(), 1, 1024)
    assert step.op("q_proj").flop == 719_423_488
    assert step.op("k_proj").flop == 102_774_784
    assert step.op("v_proj").flop == 102_774_784
    assert step.op("o_proj").flop == 719_323_136


def test_parse_size_kb_is_decimal_and_kib_binary():
    assert parse_size("48kB") == 48_000
    assert parse_size("48KB") == 48_000
    assert parse_size("48KiB") == 49_152                 # 48 x 1024
    assert parse_size("1.5MB") == 1_500_000
    assert parse_size("2MiB") == 2_097_152               # 2 x 1024^2
    # what the tables print ("48 kB", si) reads back as the same size
    assert parse_size(si(48_000, "B").replace(" ", "")) == 48_000

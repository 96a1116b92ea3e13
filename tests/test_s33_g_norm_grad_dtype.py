"""--sequence-parallel's norm-gradient all-reduce (tp.allreduce.norm_grads) at the width
Megatron-LM reduces it in (s33 G item 3; workloads/llm/train_tp.norm_grad_width).

Megatron-LM's _allreduce_layernorm_grads (megatron/core/distributed/finalize_model_grads.py)
reduces param.main_grad, a view of DDP's gradient buffer of dtype `torch.float if
grad_reduce_in_fp32 else param.dtype` (megatron/core/distributed/distributed_data_parallel.py),
grad_reduce_in_fp32 = --accumulate-allreduce-grads-in-fp32, which validate_args
(megatron/training/arguments.py) turns on for --bf16 and leaves off for --fp16. Before,
rooflab counted the bf16 run's norm gradients at 2 B.

By hand (llama-2-7b: (2 x 32 + 1) norms x 4096 = 266 240 parameters; ring over 4 on MI300X,
3 x 64 = 192 GB/s; all-reduce 2(N-1)/N x bytes / bus bandwidth):
  bf16 (fp32 main_grad): 266 240 x 4 = 1 064 960 B; 2 x 3/4 x 1 064 960 / 192e9 = 8.32 us
  fp16 (fp16 main_grad): 266 240 x 2 =   532 480 B; 2 x 3/4 x   532 480 / 192e9 = 4.16 us
  bf16 --dp 2 --grad-dtype bf16 (Megatron's --grad-reduce-in-bf16): 532 480 B, 4.16 us
"""

import json

import pytest

from rooflab.cli.main import main

ARGS = ["llama-2-7b", "--on", "MI300X", "--batch", "1", "--seq", "4096", "--tp", "4",
        "--sequence-parallel"]
NORMS = (2 * 32 + 1) * 4096      # 266 240


def _norm_grads(capsys, *extra):
    assert main(["-q", "train", *ARGS, *extra, "--json"]) == 0
    tp = json.loads(capsys.readouterr().out)["train"]["tp"]
    return next(c for c in tp["collectives"] if c["name"] == "tp.allreduce.norm_grads")


def test_norm_grads_at_megatrons_main_grad_width(capsys):
    # bf16: fp32 main_grad (was 2 B, 4.16 us), fp16: fp16, fp32: fp32, and the bf16
    # reduction --grad-dtype bf16 says (Megatron's --grad-reduce-in-bf16)
    for extra, width in (((), 4), (("--dtype", "fp16"), 2), (("--dtype", "fp32"), 4),
                         (("--dp", "2", "--grad-dtype", "bf16"), 2)):
        c = _norm_grads(capsys, *extra)
        assert c["bytes"] == NORMS * width, extra
        assert c["seconds_each"] == pytest.approx(2 * 3 / 4 * NORMS * width / 192e9)
        # 8.32 us at 4 B, 4.16 us at 2 B
        assert c["seconds_each"] == pytest.approx({4: 8.32e-6, 2: 4.16e-6}[width], rel=1e-3)


def test_help_and_note_say_the_width(capsys):
    assert main(["train", *ARGS]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "at its main_grad's width: fp32 under bf16" in text
    main(["train", "--help"])
    said = "".join(ch for ch in capsys.readouterr().out if ch not in "│ \n")
    assert "Megatron-LM'smain_gradwidth(fp32underbf16" in said

"""`rooflab train --grad-dtype` without --dp (session 34, helper A): the gradients' element
type is where they are held (the memory line, on any step) and where they are reduced (the
--dp collectives; under --tp the norm-gradient all-reduce, train_tp.norm_grad_width).
Before, it was refused without --dp ("only with data parallelism"), though a --tp step's
memory and its --sequence-parallel norm-gradient all-reduce depend on it.

The default stays --dtype's for the memory and --dp (ZeRO's mixed-precision count: 2 + 2 +
12 B/param under bf16), the norm gradients at Megatron-LM's main_grad (fp32 under --bf16:
megatron/training/arguments.py turns --accumulate-allreduce-grads-in-fp32 on for bf16);
--grad-dtype fp32 counts Megatron-LM's fp32 buffer: 2 + 4 + 12 B/param.

By hand, llama-2-7b, P = 6 738 415 616:
  one H100, --grad-dtype fp32: grads 4 P = 26 953 662 464 B (default 2 P = 13 476 831 232);
  --tp 2 on H100, per device: per layer (4 x 4096^2 + 3 x 4096 x 11 008) / 2 = 101 187 584 +
    the norms' 8192 = 101 195 776, x 32 = 3 238 264 832, + (embedding + lm_head) / 2 =
    131 072 000, + 4096: 3 369 340 928 parameters; grads at fp32 4 x that =
    13 477 363 712 B; --sequence-parallel's norm gradients: 2 x 32 x 4096 + 4096 = 266 240
    parameters, all-reduced at 4 B = 1 064 960 B by default (main_grad), at 2 B = 532 480 B
    with --grad-dtype bf16.
"""

import json

import pytest

from rooflab.cli.main import main

P = 6_738_415_616
TP2 = 3_369_340_928
NORMS = 2 * 32 * 4096 + 4096


def _train(capsys, *args) -> dict:
    assert main(["-q", "train", "llama-2-7b", "--on", "H100 SXM", "--seq", "4096", *args,
                 "--json"]) == 0
    return json.loads(capsys.readouterr().out)["train"]


def test_one_device_holds_fp32_gradients(capsys):
    bf16, fp32 = _train(capsys), _train(capsys, "--grad-dtype", "fp32")
    assert bf16["memory"]["grads_bytes"] == 2 * P
    assert fp32["memory"]["grads_bytes"] == 4 * P
    assert fp32["memory"]["states_bytes"] == pytest.approx((2 + 4 + 12) * P)
    assert fp32["setup"]["grad_dtype"] == "fp32"       # the file says what it held
    assert any(n.startswith("--grad-dtype fp32: the gradients are held at 4 B each")
               for n in fp32["notes"])
    # the link options still need --dp: no collective to time on one device
    assert main(["-q", "train", "llama-2-7b", "--on", "H100 SXM", "--link-bw",
                 "100GB/s"]) != 0
    assert "--link-bw: only with data parallelism" in capsys.readouterr().err


def _norm_grads(t: dict) -> dict:
    return next(c for c in t["tp"]["collectives"] if c["name"] == "tp.allreduce.norm_grads")


@pytest.mark.parametrize("given, grads, norm_bytes", [
    (("--grad-dtype", "fp32"), 4 * TP2, 4 * NORMS),
    (("--grad-dtype", "bf16"), 2 * TP2, 2 * NORMS),
])
def test_tp_takes_it_for_memory_and_the_norm_grad_all_reduce(capsys, given, grads,
                                                             norm_bytes):
    t = _train(capsys, "--tp", "2", "--sequence-parallel", *given)
    assert t["memory"]["grads_bytes"] == grads
    assert _norm_grads(t)["bytes"] == norm_bytes


def test_tp_default_says_the_main_grad_buffer_it_does_not_hold(capsys):
    t = _train(capsys, "--tp", "2", "--sequence-parallel")
    # the defaults: ZeRO's 2 B held, Megatron-LM's fp32 main_grad for the norm gradients
    assert t["memory"]["grads_bytes"] == 2 * TP2
    assert _norm_grads(t)["bytes"] == 4 * NORMS
    assert any("--grad-dtype fp32 counts that buffer (4 B per parameter)" in n
               for n in t["notes"])

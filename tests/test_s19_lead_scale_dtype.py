"""`rooflab scale` without --dtype trains bf16, or fp16 where the GPU has fp16 tensor math and
no bf16 (a T4): mixed precision runs fp16 with loss scaling there, as torch.autocast does;
bf16 there falls to the fp32 rate since s19 r1 F9 (T4 fp16 tensor 65 vs fp32 8.1 TFLOP/s)."""

import json

from cli_inproc import run_cli


def test_a_t4_trains_fp16_by_default_and_says_why():
    doc = json.loads(run_cli("scale", "--on", "T4", "--json").stdout)
    assert any(n.startswith("fp16 (the default is bf16): roof 'NVIDIA T4' has no bf16 math")
               for n in doc["notes"])
    step = json.loads(run_cli("scale", "--on", "T4", "--dtype", "fp16", "--json").stdout)
    bf16 = json.loads(run_cli("scale", "--on", "T4", "--dtype", "bf16", "--json").stdout)
    # the default's rows are the fp16 ones; bf16 given is held to fp32 vector, 8x slower math
    assert doc["points"] == step["points"] != bf16["points"]


def test_an_h100_keeps_bf16_without_a_note():
    doc = json.loads(run_cli("scale", "--on", "H100", "--json").stdout)
    given = json.loads(run_cli("scale", "--on", "H100", "--dtype", "bf16", "--json").stdout)
    assert doc["points"] == given["points"]
    assert not any("the default is bf16" in n for n in doc["notes"])

"""whatif --precision to a precision the roof has no tensor ceiling for keeps a matrix
kernel on unit "tensor", as train --dtype writes it, so the roof's stand-in (fp32 vector
for fp32 on an H100) is noted (precision_fallback) in report as for the train file."""

from __future__ import annotations

import json

from cli_inproc import quiet_out

TRAIN = ["train", "tinyllama-1.1b", "--on", "H100 SXM", "--batch", "2", "--seq", "1024",
         "--dp", "4"]


def _fallback_lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if "precision_fallback" in ln]


def test_whatif_fp32_report_notes_the_fallback_as_train_fp32_does(tmp_path):
    """H100 SXM lists fp32 vector (67 TFLOP/s) and tf32 tensor but no fp32 tensor ceiling:
    train --dtype fp32's linears (unit tensor) are held to fp32 vector with the note "roof
    'NVIDIA H100 SXM' has no fp32 tensor ceiling; using fp32 vector". whatif --precision
    fp32 of the bf16 file had dropped the unit (None: fastest fp32 = the same 67 TFLOP/s,
    but no note), so its report showed 0 such lines against the train file's 5."""
    t, w, t32 = (str(tmp_path / n) for n in ("T.json", "W.json", "T32.json"))
    quiet_out([*TRAIN, "-o", t])
    quiet_out(["whatif", t, "--precision", "fp32", "-o", w])
    quiet_out([*TRAIN, "--dtype", "fp32", "-o", t32])
    after = json.loads(open(w).read())["after"]
    q = next(k for k in after["kernels"] if k["name"] == "q_proj")
    assert q.get("unit") == "tensor"
    row = next(a for a in after["analysis"] if a["kernel"] == "q_proj")
    assert row["fallback"] is True and row["peak_flop_per_s"] == 67e12
    mine, theirs = (_fallback_lines(quiet_out(["report", f])) for f in (w, t32))
    assert len(mine) == 5
    assert mine == theirs
    assert "has no fp32 tensor ceiling; using fp32 vector" in mine[0]


def test_whatif_back_to_a_tensor_precision_still_moves_to_tensor(tmp_path):
    """The other branch unchanged: fp32 -> bf16 on an H100 (bf16 tensor 989.5 TFLOP/s)
    holds the linears to bf16 tensor with no fallback."""
    t32, w = str(tmp_path / "T32.json"), str(tmp_path / "W.json")
    quiet_out([*TRAIN, "--dtype", "fp32", "-o", t32])
    quiet_out(["whatif", t32, "--precision", "bf16", "-o", w])
    after = json.loads(open(w).read())["after"]
    row = next(a for a in after["analysis"] if a["kernel"] == "q_proj")
    assert row["fallback"] is False and row["peak_flop_per_s"] == 989.5e12

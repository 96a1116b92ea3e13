"""--weights nvfp4 / mxfp4 (review s21 r6 F4): 4-bit float weights with their block scales,
NVFP4 an fp8 scale per 16 weights (0.5 + 1/16 = 0.5625 B), MXFP4 an e8m0 byte per 32
(0.53125 B, as gpt-oss's mxfp4 config is read); weight-only, dequantized to --act for the
math. Before, both were 'unknown or unsupported dtype'."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

# llama-3-8b: 32 layers of 4096 x (2 x 4096 + 2 x 1024) + 3 x 4096 x 14336, lm_head 128256 x 4096
MATRICES = 32 * (4096 * (2 * 4096 + 2 * 1024) + 3 * 4096 * 14336) + 128256 * 4096
NORMS = (32 * 2 + 1) * 4096 * 2                 # bf16 gammas


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["llm", "llama-3-8b", "--on", "H100 SXM", "--phase", "decode", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("fmt, per", [("nvfp4", 0.5 + 1 / 16), ("mxfp4", 0.5 + 1 / 32)])
def test_fp4_weights_with_their_scales(capsys, fmt, per):
    code, out, _ = _run(capsys, "--weights", fmt, "--json")
    assert code == 0
    d = json.loads(out)["llm"]
    assert d["settings"]["weights"] == "fp4"
    assert d["settings"]["weight_bytes_per_param"] == per
    # decode reads every matrix (lm_head too, quantized by hand), the norms and one
    # embedding row with its block scales (s27: nvfp4 4096 x 0.5625 = 2,304 B, mxfp4
    # 4096 x 0.53125 = 2,176 B; a bare 4096 x 0.5 = 2,048 B before)
    assert d["decode"]["bytes_split"]["weights"] == pytest.approx(
        MATRICES * per + NORMS + 4096 * per, rel=1e-12)
    # weight-only: the GEMMs run at bf16
    q = next(a for a in json.loads(out)["analysis"] if a["kernel"] == "q_proj")
    assert q["precision"] == "bf16"


def test_setup_line_names_the_format(capsys):
    code, out, _ = _run(capsys, "--weights", "nvfp4")
    assert code == 0
    assert "weights nvfp4 (group 16, fp8 scales; dequantized to bf16 for the math)" in out


@pytest.mark.parametrize("weights, words", [
    ("fp4", "--weights fp4: say which format, nvfp4"),
    ("int5", "use one of: fp32, bf16, fp16, fp8, int8, int6, int4, int3, int2, nvfp4, mxfp4"),
])
def test_unknown_formats_are_one_error_line(capsys, weights, words):
    code, out, err = _run(capsys, "--weights", weights)
    assert code == 2 and out == "" and err.startswith("error: ") and words in err

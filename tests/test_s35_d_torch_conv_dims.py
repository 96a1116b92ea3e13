"""Review s35 D: a PyTorch trace recorded without constant arguments (torch < 2.1), whose
convolution takes its stride from the output shape an op after it reads
(ingest/torch_trace_infer.py), with that op's 'Input Dims' hand-edited.

Hand calculation (test_s20_f8_torch_traces): Conv2d(3, 16, 3, stride 2, padding 1) on
8x3x64x64 -> 8x16x32x32: 2 x 8 x 16 x (32 x 32) x 3 x 9 = 7,077,888 FLOP. Without a
readable output the defaults (stride 1, padding 0) give 62x62:
2 x 8 x 16 x (62 x 62) x 27 = 26,569,728 FLOP, and the note names them.
Before: 'Input Dims' 5 was a traceback (exit 70, TypeError at torch_trace_infer.py:60);
[8, 16, 32, true] was read as an output 32x1 (true == 1), which inferred stride 2x64 and
gave 221,184 FLOP silently; a list of texts or {...} was passed over without a word. Now
each is counted at the defaults with a warning naming the file and the event.
"""

from __future__ import annotations

import json

import pytest
from test_s20_f8_torch_traces import CONV_IN, CONV_T, F32, SDPA, op, write

from rooflab.cli.main import main

DEFAULTS = 26_569_728


def _trace(tmp_path, follower_dims) -> str:
    return write(tmp_path, [
        op("aten::convolution", 0, 100, 1, CONV_IN, CONV_T),
        op("aten::as_strided_", 50, 5, 2, follower_dims, [F32] + [""] * 3),
        op("aten::scaled_dot_product_attention", 200, 100, 3, *SDPA),
    ])


def _conv_flop(capsys, path) -> tuple[float, str]:
    assert main(["torch", path, "--on", "H100 SXM", "--json"]) == 0
    captured = capsys.readouterr()
    conv = next(k for k in json.loads(captured.out)["kernels"] if "convolution" in k["name"])
    return conv["flop"]["fp32"], captured.err


CASES = {
    "a number": (5, "'Input Dims' 5 is no list"),
    "an object": ({"a": 1}, "'Input Dims' {'a': 1} is no list"),
    "texts": (["8", "16", "32", "32"], "'Input Dims' entry '8' is no shape"),
    "true as a size": ([[8, 16, 32, True], [], [], []],
                       "'Input Dims' entry [8, 16, 32, True] is no shape"),
    "nested": ([[8, 16, [32], 32], [], [], []], "'Input Dims' entry [8, 16, [32], 32] is no shape"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_an_unreadable_output_shape_is_named_and_the_defaults_are_counted(tmp_path, capsys,
                                                                           name):
    dims, words = CASES[name]
    path = _trace(tmp_path, dims)
    flop, err = _conv_flop(capsys, path)
    assert flop == DEFAULTS, name
    assert "Traceback" not in err
    assert f"warning: {path}: event #1 (aten::as_strided_): {words}" in err, err
    assert "not used to infer a convolution's stride" in err


def test_a_readable_output_still_gives_the_stride(tmp_path, capsys):
    flop, err = _conv_flop(capsys, _trace(tmp_path, [[8, 16, 32, 32], [], [], []]))
    assert flop == 7_077_888
    assert "not used to infer" not in err

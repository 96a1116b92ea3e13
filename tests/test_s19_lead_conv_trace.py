"""The torch trace rule for a convolution counts the input a strided conv reads, as
`rooflab ai conv2d` does (review s19 r1 F1), and holds a depthwise conv to the vector
ceiling (F7): traces recorded here with the CPU torch, every byte by hand."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from rooflab.ingest.torch_trace import load_torch_trace  # noqa: E402


def _conv_kernel(tmp_path, fn):
    from torch.profiler import profile

    with profile(record_shapes=True) as prof:
        fn()
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    (k,) = [k for k in load_torch_trace(str(path)).kernels
            if k.name.split(" [")[0] == "aten::convolution"]
    return k


def test_strided_1x1_conv_reads_a_quarter_of_its_input(tmp_path):
    x, w = torch.randn(2, 8, 8, 8), torch.randn(16, 8, 1, 1)
    k = _conv_kernel(tmp_path, lambda: F.conv2d(x, w, stride=2))
    # output 4x4; the 1x1 taps at stride 2 touch rows/cols 0,2,4,6: 2·8·4·4 = 256 input
    # elements of 1,024. FLOP 2·2·16·(4·4)·8 = 8,192; bytes 4·(256 in + 16·8 weights +
    # 2·16·4·4 = 512 out) = 3,584 (with the whole input counted: 4·(1,024 + 128 + 512) = 6,656)
    assert sum(k.flop.values()) == 8192.0 and sum(k.bytes.values()) == 3584.0


def test_depthwise_conv_is_vector_work(tmp_path):
    x, w = torch.randn(1, 4, 6, 6, dtype=torch.bfloat16), torch.randn(4, 1, 3, 3,
                                                                          dtype=torch.bfloat16)
    k = _conv_kernel(tmp_path, lambda: F.conv2d(x, w, groups=4))
    assert k.unit == "vector"
    dense = _conv_kernel(tmp_path, lambda: F.conv2d(x, torch.randn(4, 4, 3, 3,
                                                                    dtype=torch.bfloat16)))
    assert dense.unit == "tensor"

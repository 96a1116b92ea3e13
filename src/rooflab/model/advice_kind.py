"""Which unit the advice may price a kernel's math on, from its op kind: tensor cores
(matrix units) only for matrix-shaped work. A stencil, an n-body force loop, an FFT or a
sort is no matmul: its lower precision runs on the vector units, and "use tensor cores"
is no lever for it (review s21 r3 F2: a compute-bound fp32 stencil on an A100 was told
"bf16 on tensor cores: 4.16x" and "tf32 tensor: 2.09x"; the expert prices fp16 vector,
78 TFLOP/s, 4x the fp32 vector 19.5). An unknown kind ('') keeps the hedged tensor-core
advice (its assumption says it needs matrix-shaped work). Pure: no I/O.
"""

from __future__ import annotations

from .ceiling import Roof
from .opkind import (
    MATRIX_KINDS,
    is_matrix,
    is_resample,
    is_sparse,
    is_stencil,
    is_streaming,
    kind_from_name,
    name_words,
    streams_weights,
)

# Non-matrix algorithms the op vocabulary (opkind) has no kind for, by a word of their
# name: an n-body force loop, FFTs, sorts, scans, histograms, and an image resize or
# interpolation (TF's ResizeBilinear, a custom 'interpolate' kernel: each output blends a
# few neighbours, no matrix; pooling and upsample names have a kind, opkind.is_resample).
# 'bilinear' and 'downsample' are not here: torch's nn.Bilinear is a matmul, and ResNet's
# 'downsample' is a 1x1 conv. Any other name the vocabulary does not know is unknown, not
# non-matrix (review s21 x2 F2: 'fc1', 'qkv_proj', 'mlp', 'sdpa', 'custom_kernel' lost
# their tensor-core advice).
NON_MATRIX_WORDS = frozenset({"nbody", "fft", "ifft", "rfft", "irfft", "sort", "argsort",
                              "radix", "scan", "cumsum", "prefix", "histogram", "histc",
                              "bincount", "montecarlo", "particle", "resize", "interpolate",
                              "interp"})


def known_non_matrix(kind: str) -> bool:
    """Whether the op kind is known and is not matrix-shaped (module doc): opkind's
    streaming, stencil, sparse, pooling or resampling kinds (_vector_kind), or a
    NON_MATRIX_WORDS word, unless opkind reads a matrix kind in it anywhere
    (kind_from_name: 'dense', 'fc', 'attn', '_scaled_mm' are matrix). A GEMV counts as
    matrix-shaped (its matrix streams; tensor-core GEMV kernels exist). An unknown kind
    ('', 'mlp', 'custom_kernel') is not: it keeps the hedge."""
    if not kind or is_matrix(kind) or streams_weights(kind):
        return False
    named = kind_from_name(kind)
    if named and (is_matrix(named) or streams_weights(named) or named in MATRIX_KINDS):
        return False
    if _vector_kind(kind) or (named and _vector_kind(named)):
        return True
    # name_words lower-cases after cutting camelCase humps: TF's 'ResizeBilinearKernel'
    return any(w in NON_MATRIX_WORDS for w in name_words(kind))


def _vector_kind(kind: str) -> bool:
    """An opkind kind that is no matrix work: streaming, stencil, sparse, pooling or
    resampling (a max pool compares, an upsample blends neighbours: vector units)."""
    return is_streaming(kind) or is_stencil(kind) or is_sparse(kind) or is_resample(kind)


def precision_unit(unit: str | None, kind: str, roof: Roof) -> str | None:
    """The unit a lower precision is priced on: the kernel's own, else "vector" for a known
    non-matrix kind on a roof with tensor (matrix-unit) ceilings, else None (the fastest
    unit, as before: on a roof without matrix units that is the vector one already)."""
    if (unit is None and known_non_matrix(kind)
            and any(c.unit == "tensor" for c in roof.compute)):
        return "vector"
    return unit

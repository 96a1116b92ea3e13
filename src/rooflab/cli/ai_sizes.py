"""The tensors an `rooflab ai OP` answer moves, in elements, checked against the largest a
tensor holds (review s33 F2): each size is at most 2**63 - 1 (ai_args._n), but a product of
them is not, and `ai upsample --scale 1e10` printed 6400 EB of output no tensor can hold.
"""

from __future__ import annotations

import math

from ..errors import InputError
from ..workloads.ops_common import MAX_SIZE

# Each op's tensors as the shape keys whose product is its element count; "/g" divides by
# the groups (a grouped filter holds C/groups channels). Ops whose tensors are single sizes
# (elementwise, dot, axpy, spmv) cannot pass MAX_SIZE and are not listed.
_IMAGE = ("n", "c", "h", "w")
_ROWS = {"x": ("rows", "cols")}
_POOL = {"input": _IMAGE, "output": ("n", "c", "p", "q")}
TENSORS: dict[str, dict[str, tuple[str, ...]]] = {
    "matmul": {"A": ("batch", "m", "k"), "B": ("batch", "k", "n"), "C": ("batch", "m", "n")},
    "gemv": {"A": ("m", "n")},
    "reduction": {"x": ("rows", "n")},
    "softmax": _ROWS, "layernorm": _ROWS, "rmsnorm": _ROWS,
    "embedding": {"output": ("tokens", "hidden")},
    "stencil": {"grid": ("grid",)},
    "attention": {"Q": ("batch", "heads", "q_len", "head_dim"),
                  "K": ("batch", "kv_heads", "kv_len", "head_dim"),
                  "scores": ("batch", "heads", "q_len", "kv_len", "naive")},
    "conv2d": {"input": _IMAGE, "filter": ("k", "c", "r", "s", "/g"),
               "output": ("n", "k", "p", "q")},
    "conv3d": {"input": ("n", "c", "d", "h", "w"), "filter": ("k", "c", "t", "r", "s", "/g"),
               "output": ("n", "k", "do", "p", "q")},
    "conv_transpose2d": {"input": _IMAGE, "filter": ("c", "k", "r", "s", "/g"),
                         "output": ("n", "k", "p", "q")},
    "max_pool2d": _POOL, "avg_pool2d": _POOL, "upsample_nearest": _POOL,
    "upsample_bilinear": _POOL, "batchnorm": {"x": _IMAGE}, "groupnorm": {"x": _IMAGE},
}


def _elements(shape: dict, keys: tuple[str, ...]) -> int | None:
    """The product of the shape's values at keys (exact: Python ints); None where a key is
    absent (the naive score matrix of a flash attention, which never exists)."""
    total = 1
    for key in keys:
        if key == "/g":
            total //= int(shape.get("groups", 1))
        elif key == "naive":
            if shape.get("flash", True):
                return None
        elif key not in shape:
            return None
        elif isinstance(shape[key], (list, tuple)):
            total *= math.prod(int(v) for v in shape[key])
        else:
            total *= int(shape[key])
    return total


def check_elements(op) -> None:
    """InputError for sizes that give a tensor of more than 2**63 - 1 elements (torch's and
    numpy's int64 sizes): worded as ai_result._check_counts, the sizes are the mistake."""
    for tensor, keys in TENSORS.get(op.op, {}).items():
        n = _elements(op.shape, keys)
        if n is not None and n > MAX_SIZE:
            raise InputError(f"{op.op}: these sizes give {tensor} {n:.3g} elements, more "
                             f"than the 2**63 - 1 = {float(MAX_SIZE):.3g} a tensor holds "
                             f"(the int64 sizes of torch and numpy); no real op is that "
                             f"large: check the sizes (elements, such as 4096 or 1e6)")

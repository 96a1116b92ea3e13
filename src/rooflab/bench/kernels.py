"""Implementations of the reference kernels: numpy on the CPU, torch on any torch device.

Each builder takes the arrays' sizes, allocates and fills its inputs (random values, never
zeros), and returns a no-argument call that runs the kernel once. Outputs are preallocated
and written through `out=`, so no call allocates and the compulsory byte model of
rooflab.workloads.ops holds — except where a note in zoo.py says why it cannot.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import numpy as np

Call = Callable[[], object]
# Rows or elements per block in the cache-blocked numpy kernels: a block's temporaries stay
# in the 1 MiB L2 of one core (Zen 5, Skylake-SP and later have >= 1 MiB), so the passes
# numpy makes over a block touch DRAM once.
BLOCK_BYTES = 256 * 1024


SEED = 20261129


_NP = {"fp64": np.float64, "fp32": np.float32}


def _np(dtype: str):
    return _NP.get(dtype, dtype)


def rand(n, dtype, seed: int = 0) -> np.ndarray:
    """Uniform values in [0.5, 1.5) (never zeros, which make some hardware faster); the
    same (n, dtype, seed) gives the same array, so tests can rebuild a kernel's inputs."""
    a = np.random.default_rng(SEED + seed).random(n, dtype=_np(dtype))
    a += 0.5
    return a


def _empty(n, dtype) -> np.ndarray:
    return np.empty(n, _np(dtype))


def _blocks(n: int, itemsize: int) -> list[slice]:
    step = max(BLOCK_BYTES // itemsize, 1)
    return [slice(i, min(i + step, n)) for i in range(0, n, step)]


# --- numpy ----------------------------------------------------------------------------------

def np_copy(n: int, dtype: str) -> Call:
    a, b = rand(n, dtype), _empty(n, dtype)

    def run() -> np.ndarray:
        np.copyto(b, a)
        return b

    return run


def np_scale(n: int, dtype: str) -> Call:
    a, b = rand(n, dtype), _empty(n, dtype)
    return lambda: np.multiply(a, 3.0, out=b)


def np_add(n: int, dtype: str) -> Call:
    a, b, c = rand(n, dtype), rand(n, dtype, 1), _empty(n, dtype)
    return lambda: np.add(a, b, out=c)


def np_triad(n: int, dtype: str) -> Call:
    # a = b + s*c in one pass is not a numpy ufunc; two ufuncs per L2-sized block keep the
    # intermediate in cache, so DRAM sees b and c read and a written once (24 B/elem fp64).
    a, b, c = _empty(n, dtype), rand(n, dtype, 1), rand(n, dtype, 2)
    s = np.asarray(3.0, _np(dtype))
    views = [(a[sl], b[sl], c[sl]) for sl in _blocks(n, a.itemsize)]

    def run() -> np.ndarray:
        for av, bv, cv in views:
            np.multiply(cv, s, out=av)
            np.add(av, bv, out=av)
        return a

    return run


def np_sum(n: int, dtype: str) -> Call:
    a = rand(n, dtype)
    return a.sum


def np_dot(n: int, dtype: str) -> Call:
    a, b = rand(n, dtype), rand(n, dtype, 1)
    return lambda: np.dot(a, b)


def np_gemv(m: int, n: int, dtype: str) -> Call:
    a, x, y = rand((m, n), dtype), rand(n, dtype, 1), _empty(m, dtype)
    return lambda: np.matmul(a, x, out=y)


def np_gemm(m: int, n: int, k: int, dtype: str, batch: int = 1) -> Call:
    lead = (batch,) if batch > 1 else ()
    a, b = rand((*lead, m, k), dtype), rand((*lead, k, n), dtype, 1)
    c = _empty((*lead, m, n), dtype)
    return lambda: np.matmul(a, b, out=c)


def np_conv2d(n: int, c: int, h: int, w: int, k: int, r: int, s: int, padding: int,
              dtype: str) -> Call:
    # Direct convolution as a tensor contraction over sliding windows: tensordot copies the
    # windows into an im2col matrix (R·S times the input), which the compulsory model does
    # not count; the zoo says so in the kernel's note.
    from numpy.lib.stride_tricks import sliding_window_view

    x, wt = rand((n, c, h, w), dtype), rand((k, c, r, s), dtype, 1)
    xp = np.zeros((n, c, h + 2 * padding, w + 2 * padding), _np(dtype))
    xp[:, :, padding:padding + h, padding:padding + w] = x
    windows = sliding_window_view(xp, (r, s), axis=(2, 3))      # N, C, P, Q, R, S (a view)
    # The result is N, P, Q, K; the transpose to N, K, P, Q is a view (no traffic).
    return lambda: np.tensordot(windows, wt, axes=([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2)


def _row_blocks(rows: int, cols: int, itemsize: int) -> list[slice]:
    per = max(BLOCK_BYTES // (cols * itemsize), 1)
    return [slice(i, min(i + per, rows)) for i in range(0, rows, per)]


def np_softmax(rows: int, cols: int, dtype: str) -> Call:
    # Row blocks that fit in L2: the max, exp, sum and divide passes re-read the block from
    # cache, so DRAM sees x read and y written once, as ops.softmax counts.
    x, y = rand((rows, cols), dtype), _empty((rows, cols), dtype)
    views = [(x[sl], y[sl]) for sl in _row_blocks(rows, cols, x.itemsize)]

    def run() -> np.ndarray:
        for xv, yv in views:
            np.subtract(xv, xv.max(axis=1, keepdims=True), out=yv)
            np.exp(yv, out=yv)
            np.divide(yv, yv.sum(axis=1, keepdims=True), out=yv)
        return y

    return run


def np_layernorm(rows: int, cols: int, dtype: str, eps: float = 1e-5) -> Call:
    x, y = rand((rows, cols), dtype), _empty((rows, cols), dtype)
    gamma, beta = rand(cols, dtype, 1), rand(cols, dtype, 2)
    views = [(x[sl], y[sl]) for sl in _row_blocks(rows, cols, x.itemsize)]

    def run() -> np.ndarray:
        for xv, yv in views:
            np.subtract(xv, xv.mean(axis=1, keepdims=True), out=yv)
            var = np.einsum("ij,ij->i", yv, yv) / cols
            np.multiply(yv, (1.0 / np.sqrt(var + eps))[:, None].astype(yv.dtype), out=yv)
            np.multiply(yv, gamma, out=yv)
            np.add(yv, beta, out=yv)
        return y

    return run


def np_exp(n: int, dtype: str) -> Call:
    a, b = rand(n, dtype), _empty(n, dtype)
    return lambda: np.exp(a, out=b)


def np_fft(n: int) -> Call:
    x = rand(n, "fp64") + 1j * rand(n, "fp64", 1)
    if np.lib.NumpyVersion(np.__version__) < "2.0.0":
        # np.fft.fft took out= in numpy 2.0; on 1.x (the floor is 1.24) it is a TypeError
        # (review s22 r5 F3), so there each call allocates its output: the same one read
        # and one write counted, plus the fresh array's page faults in the time
        return lambda: np.fft.fft(x)
    y = np.empty(n, np.complex128)
    return lambda: np.fft.fft(x, out=y)


def np_sort(n: int, dtype: str) -> Call:
    # np.sort(a) would allocate its copy on every call; copy into a preallocated array and
    # sort that in place instead: the same work, a read of a and a write of b.
    a, b = rand(n, dtype), _empty(n, dtype)

    def run() -> np.ndarray:
        np.copyto(b, a)
        b.sort()
        return b

    return run


# --- torch (CPU device or CUDA) -------------------------------------------------------------

def _t(torch, shape, dtype: str, device: str, seed: int = 0):
    dt = getattr(torch, {"fp64": "float64", "fp32": "float32"}.get(dtype, dtype))
    g = torch.Generator(device="cpu").manual_seed(SEED + seed)
    return (torch.rand(shape, dtype=dt, generator=g) + 0.5).to(device)


@contextmanager
def _no_tf32_conv(torch):
    """cuDNN convolutions in IEEE fp32 (no TF32) inside the block; the setting restored."""
    conv = getattr(torch.backends.cudnn, "conv", None)
    if conv is not None and hasattr(conv, "fp32_precision"):   # torch >= 2.9
        before = conv.fp32_precision
        conv.fp32_precision = "ieee"
        try:
            yield
        finally:
            conv.fp32_precision = before
        return
    before = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32 = before


def _torch_layernorm(torch, x, g, b, device: str) -> Call:
    """F.layer_norm into a preallocated output. It has no out= (aten's
    native_layer_norm.out computes a fresh result and copies it). On CUDA the caching
    allocator hands back the same block each call; on the CPU a fresh 64 MiB result is a
    fresh mmap whose page faults took 3/4 of the time (as softmax's did), so the rows go
    through in L2-sized blocks: each block's result is a small, reused heap buffer copied
    into y while in cache, and DRAM sees x read and y written once."""
    F = torch.nn.functional
    cols = x.shape[-1]
    if not str(device).startswith("cpu"):
        return lambda: F.layer_norm(x, (cols,), g, b)
    y = torch.empty_like(x)
    views = [(x[sl], y[sl]) for sl in _row_blocks(x.shape[0], cols, x.element_size())]

    def run():
        for xv, yv in views:
            yv.copy_(F.layer_norm(xv, (cols,), g, b))
        return y

    return run


def torch_call(torch, kind: str, shape: dict[str, Any], dtype: str, device: str) -> Call:
    """The torch version of one zoo kernel on `device` ("cpu", "cuda", "cuda:1")."""
    F = torch.nn.functional
    n = shape.get("n")
    if kind in ("copy", "scale", "add", "triad", "sum", "dot", "exp", "sort"):
        a, b, c = (_t(torch, n, dtype, device, i) for i in range(3))
        idx = torch.empty(n, dtype=torch.int64, device=device) if kind == "sort" else None
        return {
            "copy": lambda: b.copy_(a),
            "scale": lambda: torch.mul(a, 3.0, out=b),
            "add": lambda: torch.add(a, b, out=c),
            "triad": lambda: torch.add(b, c, alpha=3.0, out=a),     # b + 3·c in one pass
            "sum": lambda: a.sum(),
            "dot": lambda: torch.dot(a, b),
            "exp": lambda: torch.exp(a, out=b),
            # torch.sort always writes int64 indices beside the values (8 B/element more
            # than the zoo's values-only count); both outputs preallocated, so no call
            # faults in fresh pages (see softmax below)
            "sort": lambda: torch.sort(a, out=(b, idx)),
        }[kind]
    if kind == "gemv":
        a, x = _t(torch, (shape["m"], shape["n"]), dtype, device), _t(torch, shape["n"], dtype,
                                                                        device, 1)
        y = torch.empty(shape["m"], dtype=a.dtype, device=device)
        return lambda: torch.mv(a, x, out=y)
    if kind == "matmul":
        m, nn, k, batch = shape["m"], shape["n"], shape["k"], shape["batch"]
        lead = (batch,) if batch > 1 else ()
        a, b = _t(torch, (*lead, m, k), dtype, device), _t(torch, (*lead, k, nn), dtype, device, 1)
        c = torch.empty((*lead, m, nn), dtype=a.dtype, device=device)
        return (lambda: torch.bmm(a, b, out=c)) if batch > 1 else (lambda: torch.mm(a, b, out=c))
    if kind == "conv2d":
        x = _t(torch, (shape["n"], shape["c"], shape["h"], shape["w"]), dtype, device)
        w = _t(torch, (shape["k"], shape["c"], shape["r"], shape["s"]), dtype, device, 1)
        if dtype != "fp32":
            return lambda: F.conv2d(x, w, padding=shape["padding"])

        def conv_fp32():
            # cuDNN runs fp32 convolutions on TF32 tensor cores by default
            # (torch.backends.cudnn.allow_tf32 is True): the fp32 count would then be held
            # to the fp32 vector ceiling, 8x below TF32 on an A100. IEEE fp32 while timed.
            with _no_tf32_conv(torch):
                return F.conv2d(x, w, padding=shape["padding"])

        return conv_fp32
    if kind in ("softmax", "layernorm"):
        x = _t(torch, (shape["rows"], shape["cols"]), dtype, device)
        cols = shape["cols"]
        g, b = _t(torch, cols, dtype, device, 1), _t(torch, cols, dtype, device, 2)
        if kind == "softmax":
            # into a preallocated output: a fresh 64 MiB result per call is a fresh mmap on
            # the CPU, and faulting its pages in took 3/4 of the time (24 ms vs 6 ms here)
            y = torch.empty_like(x)
            return lambda: torch.softmax(x, -1, out=y)
        return _torch_layernorm(torch, x, g, b, device)
    if kind == "fft":
        x = torch.complex(_t(torch, n, "fp64", device), _t(torch, n, "fp64", device, 1))
        y = torch.empty_like(x)
        return lambda: torch.fft.fft(x, out=y)
    raise ValueError(f"no torch implementation of '{kind}'")

"""Count the FLOP and compulsory bytes of PyTorch code by watching the ops it dispatches.

FLOP: `torch.utils.flop_counter.FlopCounterMode` (matmuls, convolutions, attention; 2 FLOP
per multiply-add). Ops it counts as 0 get a per-element figure from `PER_ELEMENT` below
when rooflab knows the op family; anything else stays 0 and is listed as uncounted.

Bytes: a `TorchDispatchMode` adds, for every dispatched op, the sizes of its distinct input
tensors (read once) and output tensors (written once): the compulsory-traffic model of
`rooflab.workloads.count.COMPULSORY`. A tensor passed twice (`x * x`) is read once; an
in-place op reads and writes its `self`; an `out=` tensor is written, not read. View ops
(`t`, `view`, `expand`, ...) and allocations (`empty*`) move no bytes. Traffic between ops
is counted per op, as if nothing stayed in cache: the sum over ops is what unfused kernels
move, which is what eager PyTorch runs.

torch is imported only by the functions here (the caller imports this module lazily).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..units import canonical_dtype, flop_precision
from ..workloads.count import COMPULSORY

# FLOP per element where FlopCounterMode counts 0, by aten op name (overload packet).
# The conventions are those of rooflab.workloads.ops, so a counted op and its analytic
# count agree:
#  - pointwise math: 1 FLOP per output element, transcendental or not (exp, tanh, gelu
#    count 1 like add); fused pointwise pairs (addcmul, addcdiv, lerp): 2.
#  - comparisons (relu, clamp, maximum, max, amax, ...) count 0, as profilers count FLOP
#    from FADD/FMUL/FFMA and not from FMNMX (ops.py module docstring).
#  - reductions (sum, mean, prod): 1 per input element; vector norm 2 (square, add);
#    var/std 3 (subtract mean, square, add); logsumexp 3 (subtract, exp, add).
#  - softmax / log_softmax: 4 per element (subtract the max, exp, add to the sum, divide or
#    subtract the log) = ops.SOFTMAX_FLOP_PER_ELEMENT; the three-pass algorithm is in
#    Milakov & Gimelshein 2018, arXiv:1805.02867, algorithm 1.
#  - layer norm: 7 per element with weight and bias = ops.LAYERNORM_FLOP_PER_ELEMENT
#    (mean add, subtract, square-accumulate 2, times rstd, times gamma plus beta 2); 5
#    without them. Batch norm in inference: 4 (subtract, scale, weight, bias).
# DeepSpeed's flops profiler (deepspeed/profiling/flops_profiler/profiler.py) counts 1 per
# element for softmax and 4-5 for layer norm: lower figures for the same work, so compare
# FLOP counts from different tools only after checking their conventions.
_POINTWISE_1 = (
    "add", "sub", "rsub", "mul", "div", "neg", "abs", "exp", "exp2", "expm1", "log",
    "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan", "tanh",
    "sigmoid", "pow", "sign", "floor", "ceil", "round", "trunc", "gelu", "silu", "erf",
    "leaky_relu", "elu", "square", "fmod", "remainder", "mish", "softplus", "hardswish",
    "hardsigmoid", "sgn", "atan", "asin", "acos", "sinh", "cosh", "logit",
)
_COMPARISONS = frozenset({"relu", "maximum", "minimum", "clamp", "clamp_min", "clamp_max",
                          "hardtanh", "threshold", "amax", "amin", "max", "min"})
PER_ELEMENT: dict[str, float] = {
    **{op: 1.0 for op in _POINTWISE_1},
    "addcmul": 2.0, "addcdiv": 2.0, "lerp": 2.0,
    "sum": 1.0, "mean": 1.0, "prod": 1.0, "cumsum": 1.0, "cumprod": 1.0, "logsumexp": 3.0,
    "linalg_vector_norm": 2.0, "norm": 2.0, "var": 3.0, "std": 3.0, "var_mean": 3.0,
    "std_mean": 3.0,
    "_softmax": 4.0, "_log_softmax": 4.0,
    "_native_batch_norm_legit_no_training": 4.0,
}
LAYERNORM_FLOP_PER_ELEMENT = {"affine": 7.0, "plain": 5.0}
# Ops whose FLOP count per element uses the input size (reductions) rather than the output.
_PER_INPUT = frozenset({"sum", "mean", "prod", "logsumexp", "linalg_vector_norm", "norm",
                        "var", "std", "var_mean", "std_mean"})
# Ops that only move or select data: 0 FLOP by definition, not "uncounted".
_MOVEMENT = frozenset({
    "copy_", "clone", "_to_copy", "contiguous", "cat", "stack", "index", "index_select",
    "gather", "scatter", "scatter_add", "index_put_", "index_put", "embedding", "sort",
    "argsort", "topk", "fill_", "fill", "zero_", "zeros", "ones", "full", "zeros_like",
    "ones_like", "full_like", "where", "masked_fill", "masked_fill_", "constant_pad_nd",
    "flip", "roll", "repeat", "tril", "triu", "randn", "rand", "randint", "normal_",
    "uniform_", "arange", "eq", "ne", "lt", "le", "gt", "ge", "logical_not", "logical_and",
    "logical_or", "bitwise_and", "bitwise_or", "lift_fresh", "lift_fresh_copy", "_unsafe_view",
    "split_with_sizes_copy", "slice_scatter", "select_scatter", "nonzero", "argmax", "argmin",
    "_local_scalar_dense", "item", "set_", "resize_",
})
_NO_TRAFFIC = frozenset({"empty", "empty_like", "empty_strided", "new_empty",
                         "new_empty_strided", "detach", "alias", "lift_fresh", "_unsafe_view"})
# FFT: 5 N log2 N FLOP per complex transform of length N, half of it for real-input or
# real-output transforms: the convention of FFTW's benchmarks
# (https://www.fftw.org/speed/method.html).
_FFT = {"_fft_c2c": 5.0, "_fft_r2c": 2.5, "_fft_c2r": 2.5}


@dataclass(frozen=True)
class OpRecord:
    """One dispatched op: its FLOP (with where the figure came from) and compulsory bytes."""

    op: str
    precision: str
    flop: float
    bytes: float
    flop_source: str   # FlopCounterMode | per-element table | movement | comparison | none


@dataclass(frozen=True)
class TorchCount:
    """What a stretch of PyTorch code dispatched, op by op."""

    ops: tuple[OpRecord, ...]

    @property
    def flop(self) -> dict[str, float]:
        """FLOP by precision (precisions with 0 FLOP left out)."""
        out: dict[str, float] = {}
        for r in self.ops:
            if r.flop > 0:
                out[r.precision] = out.get(r.precision, 0.0) + r.flop
        return out

    @property
    def bytes(self) -> float:
        return float(sum(r.bytes for r in self.ops))

    @property
    def uncounted(self) -> tuple[str, ...]:
        """Ops that are neither counted nor pure data movement: their FLOP are missing."""
        return tuple(dict.fromkeys(r.op for r in self.ops if r.flop_source == "none"))

    def summary(self) -> dict[str, dict[str, float]]:
        """Per op name: calls, FLOP, bytes (for a kernel's meta)."""
        out: dict[str, dict[str, float]] = {}
        for r in self.ops:
            row = out.setdefault(r.op, {"calls": 0, "flop": 0.0, "bytes": 0.0})
            row["calls"] += 1
            row["flop"] += r.flop
            row["bytes"] += r.bytes
        return out

    def meta(self) -> dict[str, Any]:
        d: dict[str, Any] = {"byte_model": COMPULSORY + "; summed per dispatched op",
                             "ops": self.summary()}
        if self.uncounted:
            d["uncounted_ops"] = list(self.uncounted)
        return d


def torch_precision(dtype) -> str:
    """rooflab's precision name for a torch dtype (complex counts as its real part)."""
    text = str(dtype).removeprefix("torch.")
    text = {"complex64": "float32", "complex128": "float64", "complex32": "float16",
            "bool": "bool", "uint8": "uint8"}.get(text, text)
    try:
        return flop_precision(canonical_dtype(text))
    except Exception:  # exotic dtypes (float8 variants, quantised): count under fp32
        return "fp8" if "float8" in text else "fp32"


def _tensors(tree) -> list:
    import torch
    from torch.utils._pytree import tree_flatten

    return [t for t in tree_flatten(tree)[0] if isinstance(t, torch.Tensor)]


def _nbytes(tensors) -> float:
    seen: set = set()
    total = 0.0
    for t in tensors:
        try:
            key = (t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype)
        except RuntimeError:  # tensors without storage (meta, fake): count by size
            key = (id(t),)
        if key in seen:
            continue
        seen.add(key)
        total += t.numel() * t.element_size()
    return float(total)


def _out_arg_names(func) -> set[str]:
    try:
        return {a.name for a in func._schema.arguments if getattr(a, "is_out", False)}
    except AttributeError:
        return set()


def _split_args(func, args, kwargs) -> tuple[list, list]:
    """(tensors read, tensors passed as out=) of one call."""
    outs = _out_arg_names(func)
    out_tensors = _tensors([v for k, v in kwargs.items() if k in outs])
    read = _tensors(list(args) + [v for k, v in kwargs.items() if k not in outs])
    return read, out_tensors


def table_flop(name: str, func, args, kwargs, read: list, written: list) -> float | None:
    """FLOP from rooflab's per-element table for an op FlopCounterMode counts as 0."""
    if name == "native_layer_norm":
        has_affine = len(args) > 2 and args[2] is not None
        per = LAYERNORM_FLOP_PER_ELEMENT["affine" if has_affine else "plain"]
        return per * args[0].numel()
    if name in _FFT and read:
        # The full-length signal: the input, except for complex-to-real (the output).
        full = written[0] if name == "_fft_c2r" and written else read[0]
        dims = args[1] if len(args) > 1 else kwargs.get("dim", [full.dim() - 1])
        n = math.prod(full.shape[d] for d in dims)
        batch = full.numel() / n if n else 0
        return _FFT[name] * n * math.log2(n) * batch if n > 1 else 0.0
    per = PER_ELEMENT.get(name)
    if per is None:
        return None
    base = read[0] if (name in _PER_INPUT and read) else (written[0] if written else None)
    return per * base.numel() if base is not None else None


def _precision_of(read: list, written: list) -> str:
    for t in read + written:
        if t.is_floating_point() or t.is_complex():
            return torch_precision(t.dtype)
    return torch_precision((read + written)[0].dtype) if read + written else "fp32"


def _make_mode(counter: FlopCounter):
    from torch.utils._python_dispatch import TorchDispatchMode

    class _BytesMode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            before = counter.flop_counter.get_total_flops()
            out = func(*args, **kwargs)
            counted = counter.flop_counter.get_total_flops() - before
            counter.record(func, args, kwargs, out, float(counted))
            return out

    return _BytesMode()


class FlopCounter:
    """Context manager: counts FLOP and compulsory bytes of the PyTorch ops run inside.

    >>> with FlopCounter() as c:
    ...     torch.mm(a, b)
    >>> c.result.flop, c.result.bytes
    """

    def __init__(self) -> None:
        from torch.utils.flop_counter import FlopCounterMode

        self.flop_counter = FlopCounterMode(display=False)
        self._records: list[OpRecord] = []
        self._mode = None

    def __enter__(self) -> FlopCounter:
        self._records.clear()
        self.flop_counter.__enter__()
        self._mode = _make_mode(self)
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._mode.__exit__(*exc)
        finally:
            self._mode = None
            self.flop_counter.__exit__(*exc)

    @property
    def result(self) -> TorchCount:
        return TorchCount(ops=tuple(self._records))

    def record(self, func, args, kwargs, out, counted: float) -> None:
        name = func._overloadpacket.__name__ if hasattr(func, "_overloadpacket") else str(func)
        if getattr(func, "is_view", False) or name in _NO_TRAFFIC:
            return
        read, _ = _split_args(func, args, kwargs)
        written = _tensors(out)
        if not read and not written:
            return
        nbytes = _nbytes(read) + _nbytes(written)
        if counted > 0:
            flop, source = counted, "FlopCounterMode"
        elif name in _MOVEMENT:
            flop, source = 0.0, "movement"
        elif name.rstrip("_") in _COMPARISONS:
            flop, source = 0.0, "comparison"
        else:
            # In-place variants (add_, mul_) count like their functional op.
            found = table_flop(name.rstrip("_") or name, func, args, kwargs, read, written)
            flop, source = (found, "per-element table") if found is not None else (0.0, "none")
        self._records.append(OpRecord(op=f"aten.{name}", precision=_precision_of(read, written),
                                      flop=float(flop), bytes=nbytes, flop_source=source))


def count_call(fn: Callable[..., Any], args: tuple = (), kwargs: Mapping[str, Any] | None = None
               ) -> tuple[Any, TorchCount]:
    """Run fn(*args, **kwargs) once under the counter: (its result, the count)."""
    with FlopCounter() as counter:
        result = fn(*args, **dict(kwargs or {}))
    return result, counter.result

"""Compulsory bytes of PyTorch's memory ops (no FLOP), from the shapes the profiler recorded.

The byte model is that of `rooflab ai embedding` (workloads.ops.embedding) and of the
`measure` counter (bench/torch_bytes.py: _traffic): a gather (embedding, index_select,
gather) reads the rows it looks up (its output's size, at most the whole source), its
indices, and writes its output; cat reads its inputs and writes their sum; copy_ reads
its source and writes its destination without reading it; fill_ and zero_ write their
tensor once and read nothing (the counter's WRITE_ONLY). With 0 FLOP the report places
them on the memory ceiling (bytes/s and % of the bandwidth), as `ai` does such ops.
"""

from __future__ import annotations

from ..units import flop_precision
from ..workloads import ops
from ..workloads.torch_rules.traffic import gather_bytes
from .torch_ops_base import (
    COMPLEX_REAL,
    OpCall,
    OpWork,
    dtype_of,
    in_bytes,
    itemsize,
    numel,
    real_dtype,
)

# The profiler records a tensor list's shapes but not its dtypes ('Input type' is
# 'TensorList'; torch 2.13, checked on a real trace of torch.cat of fp16 tensors: 'Input
# Dims' [[[4, 8], [2, 8]], []], 'Input type' ['TensorList', 'Scalar'], 'Concrete Inputs'
# ['', '0']). cat(..., out=t) records t's dtype, and that is used; otherwise the bytes
# assume the default dtype, torch.get_default_dtype() = fp32, and the kernel says so.
CAT_ASSUMED_DTYPE = "fp32"
CAT_ASSUMED = (f"dtype {CAT_ASSUMED_DTYPE} assumed: the trace records no dtypes for the "
               f"tensor list (halve the bytes for fp16/bf16 tensors)")


def _work(op: str, nbytes: float, dt: str) -> OpWork:
    return OpWork(op, 0.0, float(nbytes), flop_precision(real_dtype(dt)), None,
                  dt in COMPLEX_REAL)


def _embedding(call: OpCall) -> OpWork | str | None:
    """aten::embedding(weight [V, D], indices, padding_idx, scale_grad_by_freq, sparse):
    `rooflab ai embedding --tokens T --hidden D` (ops.embedding), the rows read capped at
    the table's V·D when more tokens than rows are looked up."""
    ts = call.tensors()
    if len(ts) < 2 or len(ts[0][0]) != 2:
        return None
    ((rows, hidden), dt), (ids, ids_dt) = ts[0], ts[1]
    tokens = numel(ids)
    if dt in COMPLEX_REAL or tokens < 1:
        return None
    c = ops.embedding(tokens, hidden, dtype=dt, index_dtype=ids_dt)
    looked_up = tokens * hidden * itemsize(dt)
    return _work("embedding", c.bytes - looked_up + min(looked_up, rows * hidden *
                                                          itemsize(dt)), dt)


def _index_select(call: OpCall) -> OpWork | str | None:
    """aten::index_select(self, dim, index): self's shape with dim cut to len(index)."""
    ts = call.tensors()
    if len(ts) < 2:
        return None
    (src, dt), index = ts[0], ts[1]
    if not src:
        return None
    dim = int(call.const(1, 0)) % len(src)
    out = numel(src) // src[dim] * numel(index[0]) if src[dim] else 0
    e = itemsize(dt)
    return _work("index_select", gather_bytes(numel(src) * e, in_bytes([index]), out * e),
                 dt)


def _gather(call: OpCall) -> OpWork | str | None:
    """aten::gather(self, dim, index, sparse_grad): the output has index's shape."""
    ts = call.tensors()
    if len(ts) < 2:
        return None
    (src, dt), index = ts[0], ts[1]
    e = itemsize(dt)
    return _work("gather", gather_bytes(numel(src) * e, in_bytes([index]),
                                        numel(index[0]) * e), dt)


def _cat_dtype(call: OpCall) -> str | None:
    """The dtype of cat's tensors where the trace has it: an out= tensor's (cat.out), or
    a dtype in the list's own 'Input type' slot; None when it has neither."""
    for i, (dims, t) in enumerate(zip(call.dims, call.types, strict=False)):
        dt = dtype_of(t)
        if dt is not None and (i == 0 or (dims is not None and len(dims) > 0)):
            return dt
    return None


def _cat(call: OpCall) -> OpWork | str | None:
    """aten::cat(tensors, dim[, out]): every input read, the output (their sum) written;
    the shapes come from the tensor list, the dtype from _cat_dtype, else assumed
    (CAT_ASSUMED_DTYPE, said in the OpWork's `assumed`)."""
    shapes = call.lists[0] if call.lists else None
    if not shapes:
        return None
    n = sum(numel(s) for s in shapes if s)   # an empty (0,) tensor adds nothing
    dt = _cat_dtype(call)
    if dt is None:
        w = _work("cat", 2 * n * itemsize(CAT_ASSUMED_DTYPE), CAT_ASSUMED_DTYPE)
        return OpWork(w.op, w.flop, w.bytes, w.precision, w.unit, w.complex, CAT_ASSUMED)
    return _work("cat", 2 * n * itemsize(dt), dt)


def _copy(call: OpCall) -> OpWork | str | None:
    """aten::copy_(self, src, non_blocking): src read (a broadcast one its own size),
    self written in its dtype and not read (the counter's WRITE_ONLY)."""
    ts = call.tensors()
    if len(ts) < 2:
        return None
    (dst, dt), src = ts[0], ts[1]
    return _work("copy", in_bytes([src]) + numel(dst) * itemsize(dt), dt)


def _fill(call: OpCall) -> OpWork | str | None:
    """aten::fill_(self, value), aten::zero_(self): self written once, nothing read (a
    fill_ value given as a 0-dim tensor is one element: not counted)."""
    ts = call.tensors()
    if not ts:
        return None
    shape, dt = ts[0]
    return _work(call.name.removeprefix("aten::").rstrip("_"), numel(shape) * itemsize(dt),
                 dt)


MEMORY_RULES = {"aten::embedding": _embedding, "aten::index_select": _index_select,
                "aten::gather": _gather, "aten::cat": _cat, "aten::copy_": _copy,
                "aten::fill_": _fill, "aten::zero_": _fill}

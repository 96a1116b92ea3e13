"""Trace rules for the ops `rooflab.measure` counts from its per-element table
(workloads.torch_rules.flop.PER_ELEMENT, one table for both paths): the pointwise ops beyond
ingest.torch_ops_core's own list, add/sub with alpha, addcmul / addcdiv / lerp (an optimizer's
step), the reductions var / std / logsumexp / norms / prod / cumsum, log_softmax, batch
norm, and addmm with a fused activation (nn.TransformerEncoderLayer's inference path).

Conventions are the table's (2 FLOP per multiply-add): b + alpha·c is 2 per element when
alpha != 1, addcmul / addcdiv 2 (3 with value != 1), lerp a + w·(b - a) 3; reductions
count per input element (var/std 3, logsumexp 3, vector norm 2; prod n - 1 per output).
Bytes: every tensor input read once, each output written once.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from ..units import flop_precision
from ..workloads.torch_rules.flop import PER_ELEMENT, reduction_flop
from ..workloads.torch_rules.layer import batchnorm_per_element
from .torch_ops_base import (
    COMPLEX_REAL,
    OpCall,
    OpWork,
    dtype_of,
    in_bytes,
    itemsize,
    numel,
    reduced_out,
)
from .torch_ops_core import elementwise_rule, matmul_rule, softmax_rule

# The scale argument's position and the operand it multiplies (None: the op's own product)
_SCALE = {"add": (2, 1), "sub": (2, 1), "rsub": (2, 0), "addcmul": (3, None),
          "addcdiv": (3, None)}
# The `dim` argument's position in each reduction's schema (native_functions.yaml)
_REDUCE_DIM = {"prod": 1, "logsumexp": 1, "var": 1, "std": 1, "var_mean": 1, "std_mean": 1,
               "linalg_vector_norm": 2, "norm": 2}
# Batch norm's FLOP per element (4 in eval, 7 in training): the live counter's
# workloads.torch_rules.layer.batchnorm_per_element. The `training` argument's position
# (_native_batch_norm_legit.no_stats has no running stats, 6 arguments: training at 3);
# None: never training.
_BN_TRAINING = {"native_batch_norm": 5, "_native_batch_norm_legit": 5,
                "cudnn_batch_norm": 5, "miopen_batch_norm": 5,
                "_native_batch_norm_legit_no_training": None}


def _base(call: OpCall) -> str:
    return call.name.removeprefix("aten::").rstrip("_")


def _scaled(call: OpCall) -> OpWork | str | None:
    """Pointwise ops of the table: elementwise_rule's shapes and bytes, PER_ELEMENT's FLOP,
    + 1 per element when a scale (alpha, value) is not 1 and multiplies a whole tensor
    (a Python number or one-element operand is scaled once, as measure counts it)."""
    work = elementwise_rule(call)
    name = _base(call)
    if not isinstance(work, OpWork) or work.complex:
        return work
    per = PER_ELEMENT[name]
    at, operand = _SCALE.get(name, (None, None))
    if at is not None and call.const(at, 1) != 1:
        dims = call.dims[operand] if operand is not None and operand < len(call.dims) else ()
        whole = operand is None or (dims is not None and numel(dims) > 1
                                    and dtype_of(call.types[operand]) is not None)
        per += 1 if whole else 0
    return replace(work, flop=work.flop * per)


def _reduce(call: OpCall) -> OpWork | str | None:
    """var / std (_mean) / logsumexp / norms / prod: per-element FLOP of the input (prod:
    n - 1 multiplies per output), the input read and the reduced output(s) written."""
    ts = call.tensors()
    if not ts:
        return None
    (shape, dt), name = ts[0], _base(call)
    if dt in COMPLEX_REAL:
        return f"no formula for complex {name}"
    dims = call.const(_REDUCE_DIM[name], None) if len(call.dims) > 2 else None
    if isinstance(dims, bool) or not isinstance(dims, (int, list, tuple)):
        dims = None   # var(self, unbiased), prod(self, dtype): every element
    n_in, n_out = numel(shape), reduced_out(shape, dims)
    flop = (reduction_flop(name, n_in, n_out) if name == "prod"
            else PER_ELEMENT[name] * n_in)
    outputs = 2 if name.endswith("_mean") else 1
    nbytes = (n_in + outputs * n_out) * itemsize(dt)
    return OpWork(name, float(flop), float(nbytes), flop_precision(dt), "vector")


def _log_softmax(call: OpCall) -> OpWork | str | None:
    """aten::_log_softmax(self, dim, half_to_float): softmax's count (4 per element)."""
    work = softmax_rule(call)
    return replace(work, op="log_softmax") if isinstance(work, OpWork) else work


def _addmm_activation(call: OpCall) -> OpWork | str | None:
    """aten::_addmm_activation(bias, mat1, mat2, beta, alpha, use_gelu): addmm's count
    (2mnk, the bias read) + the fused activation, relu 0 (a comparison) or gelu 1."""
    work = matmul_rule(replace(call, name="aten::addmm"))
    if not isinstance(work, OpWork):
        return work
    ts = call.tensors()
    gelu = bool(call.const(5, False)) and len(ts) >= 3
    out = ts[1][0][0] * ts[2][0][-1] if gelu else 0
    return replace(work, flop=work.flop + PER_ELEMENT["gelu"] * out)


def _batch_norm(call: OpCall) -> OpWork | str | None:
    """native_batch_norm / _native_batch_norm_legit(_no_training) / cudnn_batch_norm(input,
    weight?, bias?, running_mean?, running_var?, training, ...): 4 FLOP per element, 7
    when training; x and the per-channel tensors read, y written, and in training the
    saved mean and invstd (C each) written."""
    ts = call.tensors()
    if not ts:
        return None
    (shape, dt), name = ts[0], call.name.removeprefix("aten::")
    if dt in COMPLEX_REAL or len(shape) < 2:
        return None
    at = _BN_TRAINING[name]
    if at is not None and len(call.dims) == 6:   # _native_batch_norm_legit.no_stats
        at = 3
    training = at is not None and bool(call.const(at, False))
    e = numel(shape)
    flop = batchnorm_per_element(training) * e
    nbytes = in_bytes(ts) + e * itemsize(dt) + training * 2 * shape[1] * itemsize(dt)
    return OpWork("batchnorm", float(flop), nbytes, flop_precision(dt), "vector")


def table_rules(known: Collection[str]) -> dict:
    """A rule for every PER_ELEMENT op (and its in-place form) the trace has none for among
    `known` (the other modules' rules; torch_ops.py passes them), and the scaled forms of
    add/sub, which replace the plain elementwise rule."""
    rules = {}
    for name in PER_ELEMENT:
        if name in _REDUCE_DIM:
            rules[f"aten::{name}"] = _reduce
        elif name in _BN_TRAINING:
            rules[f"aten::{name}"] = _batch_norm
        elif f"aten::{name}" not in known or name in _SCALE:
            for suffix in ("", "_"):
                rules[f"aten::{name}{suffix}"] = _scaled
    rules.pop("aten::_log_softmax_", None)
    rules.update({"aten::_log_softmax": _log_softmax,
                  "aten::_addmm_activation": _addmm_activation,
                  **{f"aten::{n}": _batch_norm for n in _BN_TRAINING}})
    return rules


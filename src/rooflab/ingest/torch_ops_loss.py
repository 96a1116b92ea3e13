"""FLOP and compulsory bytes of PyTorch's NLL loss (cross_entropy's second half), from the
recorded shapes: input [N, C] (or [N, C, d1, ...] for nll_loss2d, [C] unbatched), target
[N] ([N, d1, ...]), an optional class weight [C]; R = target's elements, one looked-up
input element per target (its class). nll_loss / nll_loss_nd are wrappers: the rules are
for the kernels they call, so the wrappers keep only their own time.

Counted from ATen's CPU kernels (aten/src/ATen/native/LossNLL.cpp; the CUDA ones in
Loss.cu do the same work):
- forward, nll_loss_out_frame: reduction 'none' writes output[i] = -input[i][t_i]·w[t_i]
  (1 FLOP a row, negate; 2 with a weight, times it); 'sum' accumulates loss -= input[i][t_i]
  (1 add a row; with a weight loss -= x·w, an FMA, 2, and the total weight += w, 1: 3);
  'mean' divides once more. Reads: the R looked-up input elements (never more than the
  input), the targets, the R looked-up weights (never more than C); writes: the output
  (R elements for 'none', 1 otherwise) and total_weight (1 element, always set).
- backward, nll_loss_backward_out_cpu_template: grad_input.zero_() writes all N·C, then
  nll_loss_backward_out_frame scatters R elements: 'none' grad_input[i][t_i] =
  -w·grad_output[i] (1 FLOP a row, 2 with a weight); a reduction computes one scalar,
  -(grad_output / total_weight) for 'mean' (2 FLOP), -grad_output for 'sum' (1), and each
  row is that times w (1 with a weight, else a copy). Reads: grad_output (R or 1), the
  targets, the looked-up weights, total_weight for a reduction; the input's values are not
  read (only its shape). Writes: N·C (the zero fill, absorbed from its aten::zero_) + R.
Rows whose target is ignore_index do less; the trace does not say which, so every row
counts (an upper bound).
"""

from __future__ import annotations

from ..units import flop_precision
from ..workloads.torch_rules.loss import MEAN, NONE, SUM, nll_counts
from .torch_ops_base import COMPLEX_REAL, OpCall, OpWork, dtype_of, itemsize, numel

# NONE, MEAN, SUM: at::Reduction, as "Concrete Inputs" records it (workloads.torch_rules.loss)


def _tensor(call: OpCall, i: int) -> tuple[tuple[int, ...], str] | None:
    """(shape, dtype) of argument i when it is a tensor (an absent weight is untyped)."""
    if i >= len(call.dims) or call.dims[i] is None:
        return None
    dt = dtype_of(call.types[i])
    return (tuple(call.dims[i]), dt) if dt is not None else None


def _parts(call: OpCall, first: int):
    """(input shape, dtype, rows, target bytes, weight bytes read, reduction) of a call whose
    input, target, weight and reduction are arguments first .. first + 3."""
    x, target = _tensor(call, first), _tensor(call, first + 1)
    if x is None or target is None or not x[0]:
        return None
    (shape, dt), weight = x, _tensor(call, first + 2)
    if dt in COMPLEX_REAL:
        return "no formula for a complex nll_loss"
    reduction = int(call.const(first + 3, MEAN))
    if reduction not in (NONE, MEAN, SUM):
        return None
    rows = numel(target[0])
    classes = shape[1] if len(shape) > 1 else shape[0]
    # a gather: the weights of the R targets, never more than the C stored
    w_bytes = min(rows, classes) * itemsize(weight[1]) if weight else 0.0
    return shape, dt, rows, rows * itemsize(target[1]), w_bytes, reduction


def _nll(call: OpCall, backward: bool) -> OpWork | str | None:
    """The module docstring's count of aten::nll_loss_forward / nll_loss2d_forward(self,
    target, weight, reduction, ignore_index) -> (output, total_weight), or with `backward`
    of aten::nll_loss_backward / nll_loss2d_backward(grad_output, self, target, weight,
    reduction, ignore_index, total_weight) -> grad_input: self one input further on."""
    got = _parts(call, 1 if backward else 0)
    if not isinstance(got, tuple):
        return got
    shape, dt, rows, t_bytes, w_bytes, reduction = got
    flop, nbytes = nll_counts(backward, reduction, rows, numel(shape), itemsize(dt), t_bytes,
                              w_bytes)
    return OpWork("nll_loss_backward" if backward else "nll_loss", flop, nbytes,
                  flop_precision(dt), "vector")


def _nll_forward(call: OpCall) -> OpWork | str | None:
    return _nll(call, backward=False)


def _nll_backward(call: OpCall) -> OpWork | str | None:
    return _nll(call, backward=True)


LOSS_RULES = {"aten::nll_loss_forward": _nll_forward, "aten::nll_loss2d_forward": _nll_forward,
              "aten::nll_loss_backward": _nll_backward,
              "aten::nll_loss2d_backward": _nll_backward}
# Their FLOP depend on `reduction` (a constant argument): other groups.
ARGS_IN_KEY = frozenset(LOSS_RULES)
_REDUCTION_NAMES = {str(NONE): "none", str(MEAN): "mean", str(SUM): "sum"}


def args_text(op: str, args: tuple[str, ...]) -> str:
    """'reduction mean'."""
    i = 4 if op == "nll_loss_backward" else 3   # after (grad_output,) input, target, weight
    text = args[i] if len(args) > i else ""
    return f"reduction {_REDUCTION_NAMES.get(text, text or '?')}"

"""FLOP and bytes of PyTorch's NLL loss ops under the live counter (bench.torch_count): the
count of the trace rules (ingest/torch_ops_loss.py's module docstring: LossNLL.cpp), so
`measure` and `rooflab torch` agree. nll_loss is a gather: it reads the R looked-up input
elements (one per target), not the whole [N, C] input, and its backward never reads the
input's values (it zero-fills grad_input, N·C written, then scatters R elements).
bench may not import ingest (ARCHITECTURE.md layers), so the formula lives here
(`nll_counts`) and the trace rules import it; a test holds the two paths equal
(tests/test_r2_measure.py). torch is imported only by the caller.
"""

from __future__ import annotations

NONE, MEAN, SUM = 0, 1, 2   # at::Reduction
NLL_OPS = frozenset({"nll_loss_forward", "nll_loss2d_forward", "nll_loss_backward",
                     "nll_loss2d_backward"})


def _parts(x, target, weight, reduction):
    """(rows R, elements of x, its itemsize, target bytes, looked-up weight bytes)."""
    rows = target.numel()
    classes = x.shape[1] if x.dim() > 1 else x.shape[0]
    w_bytes = min(rows, classes) * weight.element_size() if weight is not None else 0
    return rows, x.numel(), x.element_size(), rows * target.element_size(), w_bytes


def nll_counts(backward: bool, reduction: int, rows: int, n: int, e: int, t_bytes: float,
               w_bytes: float) -> tuple[float, float]:
    """(FLOP, bytes) of an nll_loss forward or backward from its parts: R rows (targets),
    n input elements of e bytes, the targets' and looked-up weights' bytes. One formula
    for the live counter and the trace rules (ingest/torch_ops_loss.py)."""
    weighted = w_bytes > 0
    if backward:
        if reduction == NONE:   # grad_output [R]: 1 FLOP a row (negate), 2 with a weight
            flop, read = rows * (1 + weighted), rows * e
        else:                   # one scalar -(grad / total_weight), times each row's weight
            flop, read = (2 if reduction == MEAN else 1) + rows * weighted, 2 * e
        return float(flop), float(read + t_bytes + w_bytes + (n + rows) * e)
    if reduction == NONE:
        flop, out = rows * (1 + weighted), rows
    else:
        flop, out = rows * (1 + 2 * weighted) + (reduction == MEAN), 1
    return float(flop), float(min(rows, n) * e + t_bytes + w_bytes + (out + 1) * e)


def nll_work(name: str, args) -> tuple[float, float] | None:
    """(FLOP, bytes) of nll_loss(2d)_forward(self, target, weight, reduction, ...) or
    nll_loss(2d)_backward(grad_output, self, target, weight, reduction, ...); None for a
    complex input or an unknown reduction (left to the generic count)."""
    backward = name.endswith("backward")
    x, target, weight, reduction = args[1:5] if backward else args[0:4]
    if x.is_complex() or reduction not in (NONE, MEAN, SUM) or x.numel() == 0:
        return None
    rows, n, e, t_bytes, w_bytes = _parts(x, target, weight, reduction)
    return nll_counts(backward, reduction, rows, n, e, t_bytes, w_bytes)

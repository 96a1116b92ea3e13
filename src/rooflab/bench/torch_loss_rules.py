"""FLOP and bytes of PyTorch's NLL loss ops under the live counter (bench.torch_count): the
parts read off the call's tensors, counted by workloads/torch_rules/loss.py's nll_counts,
the count of the trace rules (ingest/torch_ops_loss.py's module docstring: LossNLL.cpp),
so `measure` and `rooflab torch` agree (tests/test_r2_measure.py holds them equal).
torch is imported only by the caller.
"""

from __future__ import annotations

from ..workloads.torch_rules.loss import MEAN, NONE, SUM, nll_counts


def _parts(x, target, weight):
    """(rows R, elements of x, its itemsize, target bytes, looked-up weight bytes)."""
    rows = target.numel()
    classes = x.shape[1] if x.dim() > 1 else x.shape[0]
    w_bytes = min(rows, classes) * weight.element_size() if weight is not None else 0
    return rows, x.numel(), x.element_size(), rows * target.element_size(), w_bytes


def nll_work(name: str, args) -> tuple[float, float] | None:
    """(FLOP, bytes) of nll_loss(2d)_forward(self, target, weight, reduction, ...) or
    nll_loss(2d)_backward(grad_output, self, target, weight, reduction, ...); None for a
    complex input or an unknown reduction (left to the generic count)."""
    backward = name.endswith("backward")
    x, target, weight, reduction = args[1:5] if backward else args[0:4]
    if x.is_complex() or reduction not in (NONE, MEAN, SUM) or x.numel() == 0:
        return None
    rows, n, e, t_bytes, w_bytes = _parts(x, target, weight)
    return nll_counts(backward, reduction, rows, n, e, t_bytes, w_bytes)

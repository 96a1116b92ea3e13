"""FLOP and bytes of PyTorch's NLL loss (cross_entropy's second half) from its parts, as a
pure count: nll_counts, the one formula of the trace rules (ingest/torch_ops_loss.py's
module docstring: LossNLL.cpp) and the live counter (bench/torch_loss_rules.py, which
reads the parts off the tensors), so `measure` and `rooflab torch` agree. nll_loss is a
gather: it reads the R looked-up input elements (one per target), not the whole [N, C]
input, and its backward never reads the input's values (it zero-fills grad_input, N·C
written, then scatters R elements). A test holds the two paths equal
(tests/test_r2_measure.py). Moved from bench/torch_loss_rules.py.
"""

from __future__ import annotations

NONE, MEAN, SUM = 0, 1, 2   # at::Reduction
NLL_OPS = frozenset({"nll_loss_forward", "nll_loss2d_forward", "nll_loss_backward",
                     "nll_loss2d_backward"})


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

"""cli/ai.py and workloads/ops.py were split below the line budget (task H3). The names
moved with their code and are imported from their new modules (review r1 F4); ops keeps the
four HPC kernels docs/ai.md calls as ops.stencil, ops.spmv, ops.dot and ops.axpy, the same
objects as in ops_hpc (one copy of each rule)."""

from __future__ import annotations

from rooflab.workloads import ops, ops_hpc


def test_docs_hpc_kernels_are_ops_hpcs():
    for name in ("stencil", "spmv", "dot", "axpy"):
        assert getattr(ops, name) is getattr(ops_hpc, name), name


def test_hpc_counts_unchanged_by_the_move():
    # ops_hpc.spmv's docstring example: rows 2e6, nnz 54e6, fp64: values 54e6·8 = 432e6,
    # indices 54e6·4 = 216e6, rowptr (2e6 + 1)·4 = 8,000,004, x 2e6·8 = 16e6, y 16e6:
    # + y's write-allocate read 16e6: 704,000,004 B; FLOP 2·54e6 = 108e6
    op = ops.spmv(2_000_000, 54_000_000)
    assert op.bytes == 432e6 + 216e6 + 8_000_004 + 16e6 + 16e6 + 16e6 and op.flop == 108e6
    assert op.kernel().meta["read_only_bytes"] == 432e6 + 216e6 + 8_000_004

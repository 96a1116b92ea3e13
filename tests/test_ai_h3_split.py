"""cli/ai.py and workloads/ops.py were split below the line budget (task H3): every name
they held stays importable from where it was, and is the same object as in its new module
(one copy of each rule)."""

from __future__ import annotations

import pytest

from rooflab.cli import ai, ai_args, ai_hpc, ai_result
from rooflab.workloads import ops, ops_common, ops_hpc

MOVED = [
    (ai, ai_result, ("result_dict", "format_result", "fp4_note", "NO_FLOP", "_floors",
                     "_launch_provenance", "_ridge_band", "_bound_text", "_floor_text")),
    (ai, ai_args, ("DTYPE", "DTYPE64", "JSON", "TILE", "OUT_DTYPE", "WEIGHTS", "GROUP",
                   "POSITIONAL", "OnAi", "_n", "_tile", "_ops")),
    (ai, ai_hpc, ("WRITE_ALLOCATE", "_layer_condition", "_add_layer_condition", "_binary",
                  "_grid_arg", "_register_stencil", "_register_spmv", "_register_dot",
                  "_register_axpy")),
    (ops, ops_hpc, ("stencil", "spmv", "dot", "axpy", "stencil_radius", "MetaOpCount",
                    "RealTrafficCount", "SPMV_X_REUSE", "STENCIL_MULS_PER_POINT", "_grid",
                    "_real_traffic", "_stencil_model")),
    (ops, ops_common, ("TENSOR_DTYPES", "_size", "_dt", "_count", "_matrix_unit")),
]


@pytest.mark.parametrize("old,new,names", MOVED, ids=[m[1].__name__ for m in MOVED])
def test_old_names_are_the_moved_objects(old, new, names):
    for name in names:
        assert getattr(old, name) is getattr(new, name), name


def test_hpc_counts_unchanged_by_the_move():
    # ops_hpc.spmv's docstring example: rows 2e6, nnz 54e6, fp64: values 54e6·8 = 432e6,
    # indices 54e6·4 = 216e6, rowptr (2e6 + 1)·4 = 8,000,004, x 2e6·8 = 16e6, y 16e6:
    # 688,000,004 B; FLOP 2·54e6 = 108e6
    op = ops.spmv(2_000_000, 54_000_000)
    assert op.bytes == 432e6 + 216e6 + 8_000_004 + 16e6 + 16e6 and op.flop == 108e6
    assert op.kernel().meta["read_only_bytes"] == 432e6 + 216e6 + 8_000_004

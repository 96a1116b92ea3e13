"""A torch trace's op tree (split from ingest/torch_trace.py): the ops nested by time on each
thread, the GPU time and kernel names under an op, an op's call (its input shapes, types
and constant arguments) and its shapes as text, the ops whose constants key a group, the
inner call an autocast re-dispatch ran, and the wrappers that only name the aten ops they
call."""

from __future__ import annotations

from .torch_ops_attention import ATTENTION_RULES
from .torch_ops_backward import ARGS_IN_KEY as _BACKWARD_ARGS_IN_KEY
from .torch_ops_base import OpCall
from .torch_ops_loss import ARGS_IN_KEY as _LOSS_ARGS_IN_KEY
from .torch_ops_pool import ARGS_IN_KEY as _POOL_ARGS_IN_KEY
from .torch_ops_reduce import ARGS_IN_KEY as _REDUCE_ARGS_IN_KEY
from .torch_ops_resample import ARGS_IN_KEY as _RESAMPLE_ARGS_IN_KEY
from .torch_ops_rmsnorm import ARGS_IN_KEY as _RMSNORM_ARGS_IN_KEY
from .torch_trace_events import _Op
from .torch_trace_infer import shape_of


def _roots(ops: list[_Op]) -> list[_Op]:
    """Nest ops by time on each thread: an op inside another's interval is its child."""
    by_thread: dict[tuple, list[_Op]] = {}
    for op in ops:
        by_thread.setdefault(op.thread, []).append(op)
    roots: list[_Op] = []
    for thread_ops in by_thread.values():
        thread_ops.sort(key=lambda o: (o.ts, -o.dur))
        stack: list[_Op] = []
        for op in thread_ops:
            while stack and op.ts >= stack[-1].ts + stack[-1].dur:
                stack.pop()
            (stack[-1].children if stack else roots).append(op)
            stack.append(op)
    return roots


def _subtree_device_s(op: _Op, kernel_s: dict[int, float]) -> float:
    own = kernel_s.get(op.ext, 0.0) if op.ext is not None else 0.0
    return own + sum(_subtree_device_s(c, kernel_s) for c in op.children)


def _subtree_names(op: _Op, names: dict[int, set[str]]) -> set[str]:
    """The GPU kernel names linked to op and the ops it calls (torch_trace_groups.tf32_kernel)."""
    own = set(names.get(op.ext, ())) if op.ext is not None else set()
    for c in op.children:
        own |= _subtree_names(c, names)
    return own


def _shape(d) -> tuple[int, ...] | None:
    return shape_of(d)


def _call(op: _Op) -> OpCall:
    raw = op.args.get("Input Dims")
    raw = raw if isinstance(raw, list) else ()   # null, 5, "abc" hand-edited: no shapes
    dims = tuple(_shape(d) for d in raw)
    # a tensor list (aten::cat's) is a list of shapes: [[240], [576], [48]]
    lists = tuple(tuple(_shape(x) for x in d) for d in raw if isinstance(d, list) and d
                  and all(_shape(x) is not None for x in d))
    return OpCall(op.name, dims, _texts(op.args.get("Input type")),
                  _texts(op.args.get("Concrete Inputs")), lists)


def _texts(cells) -> tuple[str, ...]:
    """A list of args as texts; () for anything else (a hand-edited 5 or "abc" was a
    traceback, or read as one type per letter: review s34 E)."""
    return tuple(str(c) for c in cells) if isinstance(cells, list) else ()


def _shape_text(call: OpCall) -> str:
    parts = ["x".join(map(str, d)) if d else "scalar" for d in call.dims
             if d is not None and d != ()]
    parts += [", ".join("x".join(map(str, d)) for d in shapes) for shapes in call.lists]
    return ", ".join(parts)


# Ops whose FLOP depend on constant arguments (a conv's stride and dilation, attention's
# is_causal): calls of one shape with other constants are other groups.
_ARGS_IN_KEY = frozenset({"aten::convolution", "aten::scaled_dot_product_attention"}
                         | _BACKWARD_ARGS_IN_KEY | _REDUCE_ARGS_IN_KEY | _LOSS_ARGS_IN_KEY
                         | _RMSNORM_ARGS_IN_KEY | _POOL_ARGS_IN_KEY
                         | _RESAMPLE_ARGS_IN_KEY)


# ... and the ops whose count reads a constant at all (the SDPA backward ops' is_causal):
# counted without "Concrete Inputs" they take defaults, which a note names (review r7 F2)
_CONST_OPS = _ARGS_IN_KEY | frozenset(ATTENTION_RULES)


def _redispatch(op: _Op) -> _Op:
    """The innermost op of op's name and input shapes inside it, else op itself. Under
    torch.autocast the profiler records an op twice (review r2 F2): the outer call at the
    Autocast dispatch key with the caller's fp32 inputs, whose children cast them
    (aten::to, _to_copy, copy_) and then call the same op on the bf16/fp16 copies. The
    inner call is what ran, so its dtypes give the precision and bytes; the outer's time
    (the casts included) is the op's time, as a call of it costs the caller."""
    dims = op.args.get("Input Dims")
    found = op
    while True:
        nxt = _first_same(found, op.name, dims)
        if nxt is None:
            return found
        found = nxt


def _first_same(op: _Op, name: str, dims) -> _Op | None:
    """The first descendant of op (depth first, in time order) named `name` with input
    shapes `dims`."""
    for child in op.children:
        if child.name == name and child.args.get("Input Dims") == dims:
            return child
        deeper = _first_same(child, name, dims)
        if deeper is not None:
            return deeper
    return None


def _is_wrapper(op: _Op) -> bool:
    """An op that only wraps aten ops (autograd's 'autograd::engine::evaluate_function:
    ConvolutionBackward0' and 'ConvolutionBackward0', a record_function range): its time
    is named by the aten ops it calls, as the profiler's table names them, and only its
    own time stays under its name."""
    return bool(op.children) and not op.name.startswith("aten::")

"""What a decorated function's counts depend on: its arguments' shapes as a hashable key
(measure_runs: a counted call's count is reused by later calls of the same shapes)."""

from __future__ import annotations

import sys


def shapes_key(value, depth: int = 0):
    """What a decorated call's counts depend on, as a hashable key: the shape, dtype and
    device of each array argument, scalars and strings as they are, lists, tuples and dicts
    by their items, a torch module by its identity (a model or a decorated forward's
    instance: the same object, the same key; modules live long, so an id is not reused
    under it); None (count every call) for anything else, whose state may change the work
    unseen, and for containers nested too deep."""
    if depth > 4:
        return None
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "dtype"):
        return (type(value).__name__, tuple(shape), str(value.dtype),
                str(getattr(value, "device", "")), bool(getattr(value, "requires_grad", False)))
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return (type(value).__name__, value)
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            return None
        items = tuple((k, shapes_key(v, depth + 1)) for k, v in value.items())
        known = all(v is not None for _, v in items)
    elif isinstance(value, (tuple, list)):
        items = tuple(shapes_key(v, depth + 1) for v in value)
        known = all(v is not None for v in items)
    else:
        torch = sys.modules.get("torch")
        module = getattr(getattr(torch, "nn", None), "Module", None)
        if module is not None and isinstance(value, module):
            return ("module", type(value).__qualname__, id(value))
        return None
    return (type(value).__name__, items) if known else None

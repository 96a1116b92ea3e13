"""What a measured call ran with, kept in its Kernel's meta so that a reader can redo the
measurement and judge it by the right roof: the thread count and the timing recipe.

- meta["threads"] (an int): torch.get_num_threads() when PyTorch ops ran on the CPU (a
  `torch.set_num_threads(1)` kernel is then not silently judged by an all-core roof); for
  a numba function, numba.get_num_threads() when it was compiled with parallel=True, else
  1. Nothing for other code (numpy, a BLAS call): its threads are not knowable from here.
  meta["threads_from"] says which source gave the number.
- meta["plan"]: the TimingPlan's fields (warm-up, sample length, budget, sample counts),
  with its name when it is one of "quick" / "default" / "full".
- meta["warmup_calls"]: calls made before the first timed sample: the counting pass (when
  rooflab counted the ops), the settle call (measure_checks.settled_call), the timer's
  warm-up and its calibration.
"""

from __future__ import annotations

import sys
from dataclasses import asdict
from typing import Any

from .probe.timer import DEFAULT, FULL, QUICK, TimingPlan

_PLAN_NAMES = {QUICK: "quick", DEFAULT: "default", FULL: "full"}


def plan_meta(plan: TimingPlan) -> dict[str, Any]:
    """The plan as meta records it: its fields, and its name when it has one."""
    out: dict[str, Any] = {"name": _PLAN_NAMES[plan]} if plan in _PLAN_NAMES else {}
    return {**out, **asdict(plan)}


def threads_meta(fn, op_devices: tuple[str, ...], args=(), kwargs=None) -> dict[str, Any]:
    """{"threads": n, "threads_from": source} where knowable (module doc), else {}."""
    if "cpu" in op_devices or _cpu_tensor_among(args, kwargs or {}):
        torch = sys.modules["torch"]
        return {"threads": int(torch.get_num_threads()),
                "threads_from": "torch.get_num_threads()"}
    numba = sys.modules.get("numba")
    options = getattr(fn, "targetoptions", None)
    if numba is not None and isinstance(options, dict) \
            and type(fn).__module__.startswith("numba"):
        if options.get("parallel"):
            return {"threads": int(numba.get_num_threads()),
                    "threads_from": "numba.get_num_threads() (parallel=True)"}
        return {"threads": 1, "threads_from": "numba function without parallel=True"}
    return {}


def _cpu_tensor_among(args, kwargs) -> bool:
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    return any(isinstance(v, torch.Tensor) and v.device.type == "cpu"
               for v in list(args) + list(kwargs.values()))

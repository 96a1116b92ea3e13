"""What a measured call ran with, kept in its Kernel's meta so that a reader can redo the
measurement and judge it by the right roof: the thread count and the timing recipe.

- meta["threads"] (an int): torch.get_num_threads() when PyTorch ops ran on the CPU (a
  `torch.set_num_threads(1)` kernel is then not silently judged by an all-core roof); for
  a numba function, numba.get_num_threads() when it was compiled with parallel=True, else
  1. Nothing for other code (numpy, a BLAS call): its threads are not knowable from here.
  meta["threads_from"] says which source gave the number.
- meta["plan"]: the TimingPlan's fields (warm-up, sample length, budget, sample counts),
  with its name when it is one of PLANS: "quick" / "default" / "full".
- meta["warmup_calls"]: calls made before the first timed sample: the counting pass (when
  rooflab counted the ops), the settle call (measure_checks.settled_call), the timer's
  warm-up and its calibration.
"""

from __future__ import annotations

import sys
from dataclasses import asdict
from typing import Any

from .model.compare_trust import MIN_TRUSTED_SAMPLES
from .probe.timer import DEFAULT, FULL, QUICK, TimingPlan

# measure()'s and `rooflab bench`'s named plans: the probe's budgets, each taking at least
# MIN_TRUSTED_SAMPLES samples, the count from which `rooflab compare` judges a before/after
# pair with its U test. The probe's plans take 5 (a slow kernel fits no more in the
# budget), so two default bench runs often read 'too few' (review s20). A kernel whose
# samples fit in the budget (a tiny one: 12 of 20 ms in 0.25 s) costs nothing more.
PLANS = {name: plan.with_min_samples(MIN_TRUSTED_SAMPLES)
         for name, plan in (("quick", QUICK), ("default", DEFAULT), ("full", FULL))}
# the probe's own plans keep their names too (a TimingPlan passed as-is): the recipe line
# shows their sample counts beside the name
_PLAN_NAMES = {QUICK: "quick", DEFAULT: "default", FULL: "full",
               **{plan: name for name, plan in PLANS.items()}}


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

"""What explains a launch far under its roof, from Nsight Compute's metrics: its grid and
block, occupancy (achieved, theoretical, the limiter) and how busy each pipe was. Split from
ingest/ncu_metrics.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .ncu_numbers import _get

# What explains a kernel far under its roof (review 14d C), read into Kernel.meta and cited
# by the latency diagnosis: the launch's shape, the SM count, achieved and theoretical
# occupancy (NVIDIA's Occupancy section), the per-SM block limits (the smallest is the
# limiter) and how busy each pipe was (Compute Workload section).
ACHIEVED_OCC = "sm__warps_active.avg.pct_of_peak_sustained_active"
THEORETICAL_OCC = "sm__maximum_warps_per_active_cycle_pct"
SM_COUNT = "device__attribute_multiprocessor_count"
OCC_LIMIT = "launch__occupancy_limit_"
# The SM clock the launch ran at (ncu locks it to base by default), kept in meta so a kernel
# file written from the import (-o x.json) is judged on a catalog roof at that clock, as the
# import is (profile_checks.at_recorded_clock; ncu_metrics.CLOCK, spelt here: no cycle)
SM_CLOCK = "sm__cycles_elapsed.avg.per_second"
# what each launch__occupancy_limit_<x> limits, in words
LIMITERS = {"registers": "registers", "shared_mem": "shared memory",
            "warps": "warps per SM (block size)", "blocks": "blocks per SM",
            "barriers": "barriers"}
_PIPE = re.compile(r"^sm__(?:inst_executed_pipe_(\w+?)|pipe_(\w+?)_cycles_active)"
                   r"\.(?:avg|sum|max)\.pct_of_peak_sustained_active$")
LAUNCH_USED = re.compile(
    r"^(?:" + re.escape(ACHIEVED_OCC) + "|" + re.escape(THEORETICAL_OCC) + "|"
    + re.escape(SM_COUNT) + r"|launch__occupancy_limit_\w+|launch__(?:grid|block)_dim_[xyz])$")


def launch_details(m: Mapping[str, float]) -> dict:
    """What one launch recorded of its occupancy and pipes, for Kernel.meta (only the keys
    the file holds): occupancy_achieved / occupancy_theoretical (% of the SM's warp slots),
    occupancy_limiter (the launch__occupancy_limit_* with the fewest blocks per SM; ties all
    named), pipe_busy {pipe: % of peak}, sms (the device's SM count), sm_clock_hz."""
    out: dict = {}
    for key, name in (("occupancy_achieved", ACHIEVED_OCC),
                      ("occupancy_theoretical", THEORETICAL_OCC)):
        v = _get(m, name)
        if v is not None:
            out[key] = v
    limits = {n.removeprefix(OCC_LIMIT): v for n, v in m.items()
              if n.startswith(OCC_LIMIT) and v == v}
    if limits:
        least = min(limits.values())
        out["occupancy_limiter"] = ", ".join(LIMITERS.get(k, k) for k, v in limits.items()
                                             if v == least)
        out["occupancy_limit_blocks"] = least
    pipes = {}
    for n, v in m.items():
        hit = _PIPE.match(n) if "pipe_" in n else None
        if hit and v == v:
            pipe = hit.group(1) or hit.group(2)
            pipes[pipe] = max(pipes.get(pipe, 0.0), v)
    if pipes:
        out["pipe_busy"] = dict(sorted(pipes.items(), key=lambda kv: -kv[1]))
    sms = _get(m, SM_COUNT)
    if sms:
        out["sms"] = int(sms)
    clock = _get(m, SM_CLOCK)
    if clock and clock > 0:
        out["sm_clock_hz"] = clock
    return out


def dims(m: Mapping[str, float], what: str) -> str:
    """'(65535, 1, 1)' from launch__grid_dim_x/y/z (what='grid') as a report holds them,
    the spelling of the CSV's Grid Size column; '' when not recorded."""
    xyz = [_get(m, f"launch__{what}_dim_{c}") for c in "xyz"]
    if any(v is None for v in xyz):
        return ""
    return "(" + ", ".join(str(int(v)) for v in xyz) + ")"

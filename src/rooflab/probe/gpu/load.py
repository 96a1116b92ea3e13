"""Other work on the GPU around the probe: processes, utilisation, memory held, throttling.

Read only, through NVML (pynvml from nvidia-ml-py, imported lazily), before the probe and
after it (NVML API Reference: nvmlDeviceGetComputeRunningProcesses, -GetUtilizationRates,
-GetMemoryInfo, -GetCurrentClocksEventReasons (formerly -ClocksThrottleReasons) and
-GetViolationStatus). Nothing is set. On ROCm, on PyTorch's CPU device or without NVML the
reading says what was not read and why; nothing is guessed.

Utilisation is "percent of time over the past sample period (1/6 s to 1 s, by product)
during which one or more kernels was executing" (nvmlUtilization_t): before the probe it is
the other processes' work; after it, it includes the probe's own last kernels.
Violation times (nvmlViolationTime_t: nanoseconds, cumulative) for the power and thermal
policies are read before and after: their difference is how long the GPU was held below
its application clocks for power or thermal reasons during the run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...units import si

# nvmlClocksEventReason* bits (nvml.h; the older nvmlClocksThrottleReason* have the same
# values). Reasons that lower the clock under load, as opposed to idling or a setting.
REASON_BITS = ((0x1, "gpu idle"), (0x2, "applications clocks setting"),
               (0x4, "sw power cap"), (0x8, "hw slowdown"), (0x10, "sync boost"),
               (0x20, "sw thermal slowdown"), (0x40, "hw thermal slowdown"),
               (0x80, "hw power brake slowdown"), (0x100, "display clock setting"))
LIMITING = frozenset({"sw power cap", "hw slowdown", "sw thermal slowdown",
                      "hw thermal slowdown", "hw power brake slowdown"})
# nvmlPerfPolicyType_t: NVML_PERF_POLICY_POWER = 0, NVML_PERF_POLICY_THERMAL = 1.
POLICIES = (("power", 0), ("thermal", 1))

# A GPU nobody uses reads 0 %; monitoring agents (nvidia-smi, DCGM) launch no kernels. At
# 10 % of the sample period another job is launching kernels steadily: CUDA contexts of
# different processes time-slice the GPU (without MPS), so each of its kernels holds the
# probe's up, and at that rate a fair share of the probe's calls meet one. Below, a stray
# kernel is absorbed by the best-call rule.
BUSY_UTILIZATION = 10
# Held below application clocks for power or thermal reasons for more than this share of
# the run: the compute ceilings were measured at reduced clocks for part of it.
THROTTLED_SHARE = 0.01

# Pids (comma-separated) that share the device idle on purpose and are not other users:
# gpu_check names itself here for the `rooflab probe` it runs as a child.
EXPECTED_PIDS_ENV = "ROOFLAB_EXPECTED_GPU_PIDS"

AMD_SMI = ("amd-smi is not read by rooflab (out of scope): check `amd-smi process` and "
           "`amd-smi metric` yourself")


def decode_reasons(mask: int | None) -> list[str]:
    """0x5 -> ['gpu idle', 'sw power cap']; unknown bits are kept as 'bit 0x...'."""
    if mask is None:
        return []
    words = [name for bit, name in REASON_BITS if mask & bit]
    rest = mask & ~sum(bit for bit, _ in REASON_BITS)
    return words + ([f"other reason bits 0x{rest:x}"] if rest else [])


@dataclass(frozen=True)
class GpuProcess:
    pid: int
    used_bytes: float | None     # None where NVML does not say (WDDM, some containers)

    def label(self) -> str:
        # si: a desktop's 42 MB is not '0.0 GB' (review s28 R2 F16)
        mem = si(self.used_bytes, "B") if self.used_bytes is not None else "memory ?"
        return f"pid {self.pid}: {mem}"


@dataclass(frozen=True)
class LoadReading:
    """One NVML reading of the device. `available` False: `why` says what was not read."""

    available: bool
    why: str = ""
    others: tuple[GpuProcess, ...] = ()
    own_listed: bool = False       # this pid is in NVML's list
    own_context: bool = False      # this process already holds device memory (torch)
    utilization_pct: int | None = None
    memory_used_bytes: float | None = None
    memory_total_bytes: float | None = None
    own_bytes: float | None = None
    reasons: int | None = None
    violation_ns: dict[str, int] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)   # query -> error
    expected: tuple[GpuProcess, ...] = ()   # listed, but named by EXPECTED_PIDS_ENV

    @property
    def unnamed_self(self) -> bool:
        """This process holds a context but NVML lists no process with its pid: inside a
        container NVML reports the host's pids, so one of `others` may be this one."""
        return self.own_context and not self.own_listed and bool(self.others)

    @property
    def other_count(self) -> int:
        return len(self.others) - (1 if self.unnamed_self else 0)

    @property
    def others_bytes(self) -> float | None:
        """Memory the other processes hold: their listed usage, else total used minus ours."""
        known = [p.used_bytes for p in self.others if p.used_bytes is not None]
        if known and not self.unnamed_self:
            return float(sum(known))
        if self.memory_used_bytes is None:
            return None
        return max(0.0, self.memory_used_bytes - (self.own_bytes or 0.0))

    @property
    def busy(self) -> bool:
        util = self.utilization_pct is not None and self.utilization_pct >= BUSY_UTILIZATION
        return self.other_count > 0 or (util and not self.own_context)

    def to_dict(self) -> dict[str, Any]:
        if not self.available:
            return {"available": False, "why": self.why}
        return {"available": True, "other_processes": [
                    {"pid": p.pid, "used_bytes": p.used_bytes} for p in self.others],
                "expected_processes": [{"pid": p.pid, "used_bytes": p.used_bytes,
                                        "why": f"named in {EXPECTED_PIDS_ENV}"}
                                       for p in self.expected],
                "own_pid_listed": self.own_listed, "utilization_pct": self.utilization_pct,
                "memory_used_bytes": self.memory_used_bytes,
                "memory_total_bytes": self.memory_total_bytes,
                "memory_others_bytes": self.others_bytes,
                "clock_event_reasons": self.reasons,
                "clock_event_words": decode_reasons(self.reasons),
                "violation_ns": dict(self.violation_ns), "unread": dict(self.unread)}


def _call(unread: dict, name: str, fn: Callable | None, *args):
    if fn is None:
        unread[name] = "not in this pynvml"
        return None
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 — NVML raises per unsupported query
        unread[name] = f"{type(exc).__name__}: {exc}"
        return None


def expected_pids(environ=None) -> frozenset[int]:
    """Pids named in EXPECTED_PIDS_ENV (comma-separated): processes the caller knows share
    the device idle, such as benchmarks/gpu_check.py running `rooflab probe` as a child
    (review 14a #9). Words that are not pids are ignored."""
    raw = (os.environ if environ is None else environ).get(EXPECTED_PIDS_ENV, "")
    return frozenset(int(w) for w in raw.replace(",", " ").split() if w.isdigit())


def read_load(nvml, handle, own_pid: int, own_bytes: float | None = None,
              expected: frozenset[int] = frozenset()) -> LoadReading:
    """The device's load now, from an initialised NVML module and a device handle. Pids in
    `expected` are kept apart (LoadReading.expected), not counted as other users."""
    unread: dict[str, str] = {}
    procs = _call(unread, "processes", getattr(nvml, "nvmlDeviceGetComputeRunningProcesses",
                                                None), handle) or []
    listed = [GpuProcess(int(p.pid), None if getattr(p, "usedGpuMemory", None) is None
                         else float(p.usedGpuMemory)) for p in procs]
    own = [p for p in listed if p.pid == own_pid]
    util = _call(unread, "utilization", getattr(nvml, "nvmlDeviceGetUtilizationRates", None),
                 handle)
    mem = _call(unread, "memory", getattr(nvml, "nvmlDeviceGetMemoryInfo", None), handle)
    reasons_fn = (getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
                  or getattr(nvml, "nvmlDeviceGetCurrentClocksThrottleReasons", None))
    reasons = _call(unread, "clock_event_reasons", reasons_fn, handle)
    violation = {}
    for name, policy in POLICIES:
        v = _call(unread, f"violation_{name}",
                  getattr(nvml, "nvmlDeviceGetViolationStatus", None), handle, policy)
        if v is not None:
            violation[name] = int(v.violationTime)
    ours = own[0].used_bytes if own and own[0].used_bytes is not None else own_bytes
    return LoadReading(
        True, others=tuple(p for p in listed if p.pid != own_pid and p.pid not in expected),
        expected=tuple(p for p in listed if p.pid in expected and p.pid != own_pid),
        own_listed=bool(own),
        own_context=bool(own) or bool(own_bytes), utilization_pct=None if util is None
        else int(util.gpu), memory_used_bytes=None if mem is None else float(mem.used),
        memory_total_bytes=None if mem is None else float(mem.total), own_bytes=ours,
        reasons=None if reasons is None else int(reasons), violation_ns=violation,
        unread=unread)


def _own_reserved(torch, dev) -> float | None:
    try:
        return float(torch.cuda.memory_reserved(dev))
    except Exception:  # noqa: BLE001 — a stand-in or an uninitialised runtime
        return None


def _monitor_tool(torch, dev) -> str:
    """Where a user reads the device's load: `tegrastats` on a Jetson (an integrated GPU:
    no NVML, no nvidia-smi there), `nvidia-smi` elsewhere."""
    try:
        integrated = bool(getattr(torch.cuda.get_device_properties(dev), "is_integrated", False))
    except Exception:  # noqa: BLE001 — the message is a hint, never an error of its own
        integrated = False
    return ("`tegrastats` shows them (a Jetson has no nvidia-smi)" if integrated
            else "`nvidia-smi` shows them")


def snapshot(torch, dev) -> LoadReading:
    """Read the device's load now (never raises; `why` says what could not be read)."""
    from .identity import _nvml_handle, hip_version

    if dev.type != "cuda":
        return LoadReading(False, "PyTorch's CPU device (a dry run): no GPU to check")
    if hip_version(torch):
        return LoadReading(False, "NVML is NVIDIA's library and cannot see an AMD GPU: other "
                                  f"processes, utilisation and throttling were not read; "
                                  f"{AMD_SMI}")
    not_read = ("other processes, utilisation and throttling were not read; "
                + _monitor_tool(torch, dev))
    try:
        import pynvml as nvml
    except ImportError:
        return LoadReading(False, f"NVML unavailable (nvidia-ml-py is not installed: pip "
                                  f"install 'rooflab[gpu]'): {not_read}")
    try:
        nvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001 — no driver, no permission
        return LoadReading(False, f"NVML unavailable ({type(exc).__name__}: {exc}): {not_read}")
    try:
        props = torch.cuda.get_device_properties(dev)
        handle = _nvml_handle(nvml, props, dev.index)
        return read_load(nvml, handle, os.getpid(), _own_reserved(torch, dev),
                         expected_pids())
    except Exception as exc:  # noqa: BLE001
        return LoadReading(False, f"NVML could not read {dev} ({type(exc).__name__}: {exc})")
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass


def _others_text(r: LoadReading, device: str) -> str:
    n = r.other_count
    names = ", ".join(p.label() for p in r.others[:3]) + (", …" if len(r.others) > 3 else "")
    head = f"{n} other process{'es' if n != 1 else ''} use{'s' if n == 1 else ''} {device}"
    self_hint = (" (one of them may be this process: inside a container NVML lists the "
                 "host's pids)") if r.unnamed_self else ""
    return f"{head} ({names}){self_hint}" if r.others else head


def busy_warning(r: LoadReading, device: str) -> str | None:
    """Before the long work: another process on the device, or kernels running."""
    if not r.available or not r.busy:
        return None
    parts = [_others_text(r, device)] if r.other_count else [f"{device} is busy"]
    if r.utilization_pct is not None:
        parts.append(f"utilisation {r.utilization_pct} %")
    return (f"{', '.join(parts)}: the ceilings will read low; stop (Ctrl-C) and rerun on "
            f"an idle GPU")


def device_load(before: LoadReading, after: LoadReading, window_s: float) -> dict[str, Any]:
    """The extras' `device_load`: both readings, the throttle reasons seen and the time held
    below application clocks for power/thermal reasons during the run."""
    if not before.available and not after.available:
        return {"available": False, "method": before.why or after.why}
    throttled = {k: (after.violation_ns[k] - before.violation_ns[k]) / 1e9
                 for k in after.violation_ns if k in before.violation_ns}
    words = list(dict.fromkeys(decode_reasons(before.reasons) + decode_reasons(after.reasons)
                               + [f"{k} violation" for k, s in throttled.items() if s > 0]))
    pids = {p.pid: p for p in before.others + after.others}   # the later size wins
    seen_before, seen_after = {p.pid for p in before.others}, {p.pid for p in after.others}
    return {
        "available": True,
        "other_processes": [{"pid": p.pid, "used_bytes": p.used_bytes,
                             "before": p.pid in seen_before, "after": p.pid in seen_after}
                            for p in pids.values()],
        "other_count_before": before.other_count if before.available else None,
        "other_count_after": after.other_count if after.available else None,
        "utilization_before": before.utilization_pct,
        "utilization_after": after.utilization_pct,
        "memory_others_bytes_before": before.others_bytes if before.available else None,
        "memory_others_bytes_after": after.others_bytes if after.available else None,
        "throttle_reasons": words,
        "throttled_s": throttled, "window_s": window_s,
        "before": before.to_dict(), "after": after.to_dict(),
        "method": ("NVML before and after the probe: nvmlDeviceGetComputeRunningProcesses "
                   "(this pid excluded), nvmlDeviceGetUtilizationRates (utilization_after "
                   "includes the probe's own last kernels), nvmlDeviceGetMemoryInfo, "
                   "nvmlDeviceGetCurrentClocksEventReasons (bits decoded), "
                   "nvmlDeviceGetViolationStatus power/thermal (time below application "
                   "clocks, the difference over the run); a job that started and ended "
                   "between the two readings is not seen"),
    }


def load_notes(load: dict[str, Any], device: str) -> list[str]:
    """Notes for the measured roof: other processes on the device, clocks held down."""
    if not load.get("available"):
        return []
    notes = []
    others = load["other_processes"]
    count = max(load.get("other_count_before") or 0, load.get("other_count_after") or 0)
    if count:
        names = ", ".join(f"pid {p['pid']}" + (f": {si(p['used_bytes'], 'B')}"
                                               if p["used_bytes"] is not None else "")
                          for p in others[:3]) + (", …" if len(others) > 3 else "")
        util = load.get("utilization_before")
        util_text = f"; utilisation {util} % before it started" if util is not None else ""
        when = ("while the probe ran" if load.get("other_count_before")
                else "by the end of the probe (not at its start)")
        notes.append(f"{count} other process{'es' if count != 1 else ''} used {device} "
                     f"{when} ({names}{util_text}): measured ceilings read low; rerun on an "
                     f"idle GPU")
    elif (load.get("utilization_before") or 0) >= BUSY_UTILIZATION:
        notes.append(f"{device} was {load['utilization_before']} % busy before the probe "
                     f"started, with no other process listed (another VM, MIG or MPS "
                     f"neighbour?): measured ceilings may read low")
    window = load.get("window_s") or 0.0
    held = {k: s for k, s in load.get("throttled_s", {}).items()
            if window > 0 and s > THROTTLED_SHARE * window}
    limiting = [w for w in load.get("throttle_reasons", []) if w in LIMITING]
    if held or limiting:
        parts = [f"{k} limits held the clocks below application clocks for {s:.1f} s of "
                 f"{window:.0f} s" for k, s in held.items()]
        if limiting:
            parts.append(f"clock event reasons: {', '.join(limiting)}")
        notes.append(f"{'; '.join(parts)}: ceilings measured under throttling are honest "
                     f"for this card as it runs, but below what its nominal clocks give")
    return notes

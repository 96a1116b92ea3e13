"""The device memory an `rooflab llm` fit is judged against, and where it came from.

--memory wins; else the catalog device's memory_gb (decimal GB, as the vendor sells it),
never a CPU's, which is its platform's maximum RAM (review 19d N1); else a probed
profile's host RAM (review 18d G), or the cgroup or `ulimit -v` limit it was probed under
where that is less (a container's 4 GiB on a 24 GiB host; s26 fC). --gpu-mem-util takes
a fraction of the capacity, as vLLM's gpu_memory_utilization does of the total the driver
reports (the catalog's usable_memory_mib: nvidia-smi's total, review 18d D).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..units import parse_memory, si

# vLLM's default gpu_memory_utilization (EngineArgs / CacheConfig): the share of the
# total device memory the engine may take for weights, activations and the KV cache
VLLM_GPU_MEM_UTIL = 0.9


def check_gpu_mem_util(util: float | None) -> None:
    if util is not None and not 0 < util <= 1:
        raise InputError(f"--gpu-mem-util is the share of the device memory the engine may "
                         f"use, as vLLM's gpu_memory_utilization: a number in (0, 1], e.g. "
                         f"0.9; got {util:g}")


def device_capacity(dev, on: str, memory: str | None, util: float | None = None
                    ) -> tuple[float | None, str, tuple[str, ...]]:
    """(bytes, words for the memory line, notes): the capacity of one device for the fit,
    None where it is not known."""
    check_gpu_mem_util(util)
    if memory:
        given = parse_memory(memory, "--memory")
        if util is None:
            return given, "", ()
        return util * given, f"{util:g} x --memory {si(given, 'B')}", ()
    mem = getattr(dev, "fit_memory_bytes", None)
    if mem is not None:
        return _catalog_capacity(dev, util)
    total, notes = host_memory(on)
    if total is None:
        notes = (platform_max_note(dev),) if getattr(dev, "memory_is_platform_max",
                                                       False) else ()
        return None, "", notes
    if util is None:
        return total, "", notes
    return util * total, f"{util:g} x the host's {si(total, 'B')}", notes


def _catalog_capacity(dev, util: float | None) -> tuple[float, str, tuple[str, ...]]:
    """A catalog GPU's: memory_gb as sold, or util x the driver's total where known."""
    usable = dev.usable_memory_bytes
    if util is not None:
        whole, what = ((usable, driver_tool(dev) + "'s") if usable else
                       (dev.memory_bytes, "the catalog's"))
        return (util * whole, f"{util:g} x {what} {si(whole, 'B')}, as vLLM's "
                f"gpu_memory_utilization", ())
    if not usable:
        return dev.memory_bytes, "", ()
    vllm = VLLM_GPU_MEM_UTIL * usable
    return dev.memory_bytes, (
        f"decimal GB as sold; {driver_tool(dev)} has {si(usable, 'B')}, vLLM's "
        f"{VLLM_GPU_MEM_UTIL:g} of it {si(vllm, 'B')}: --gpu-mem-util "
        f"{VLLM_GPU_MEM_UTIL:g}"), ()


def driver_tool(dev) -> str:
    """What reports the driver's total on this vendor's GPU: nvidia-smi, or rocm-smi on an
    AMD Instinct (the same bytes torch's total_memory gives), review s28 R4 F15."""
    return "rocm-smi" if getattr(dev, "vendor", "") == "AMD" else "nvidia-smi"


def platform_max_note(dev) -> str:
    """Why a catalog CPU's run has no fit: its memory_gb is the platform's maximum."""
    return (f"no fit or largest batch: {dev.name}'s {si(dev.memory_bytes, 'B')} in the "
            f"catalog is the most its platform takes, not the RAM a server has installed; "
            f"give the installed (or free) RAM as --memory, e.g. --memory 512GB, or --on "
            f"a profile of this machine (`rooflab probe`), whose host RAM is used")


def host_memory(spec: str) -> tuple[float | None, tuple[str, ...]]:
    """A probed profile's host RAM (host.memory_bytes), or the limit the probe ran under
    where it is less (host.memory_limit_bytes), with the note that says which; or
    (None, ()) where --on is no profile or records none: a CPU run's device memory is the
    host's (review 18d G)."""
    from ..files import load_json
    from ..hardware.resolve import split_threads
    from ..model.document_parts import profile_part

    path = split_threads(spec)[0] if split_threads(spec) else spec
    if not path.lower().endswith(".json") or not Path(path).is_file():
        return None, ()
    host = (profile_part(load_json(path)) or {}).get("host") or {}
    total = host.get("memory_bytes")
    if not isinstance(total, (int, float)) or total <= 0:
        return None, ()
    cap = host.get("memory_limit_bytes")
    if isinstance(cap, (int, float)) and 0 < cap < total:
        # probed under a container's limit (or `ulimit -v`): the host's RAM is not this
        # process's to fill; the probe sized its arrays by the same limit (memory_limit.py)
        which = host.get("memory_limit_source") or "a memory limit"
        return float(cap), (f"the device memory is the limit {path} was probed under: "
                            f"{si(cap, 'B')} ({which}), less than the host's "
                            f"{si(total, 'B')} of RAM; the process that serves the model "
                            f"shares it with its runtime; give what is free as --memory",)
    # a profile from before s26 records no limit either way: it says nothing of one
    none = ("; it was probed under no cgroup or `ulimit -v` limit"
            if "memory_limit_bytes" in host else "")
    avail = host.get("memory_available_bytes")
    free = (f" ({si(avail, 'B')} was available when it was probed)"
            if isinstance(avail, (int, float)) and avail > 0 else "")
    return float(total), (f"the device memory is the host's RAM as {path} records it "
                          f"({si(total, 'B')}), all of it: the OS and other processes hold "
                          f"part{free}{none}; give what is free as --memory (MemAvailable "
                          f"in /proc/meminfo)",)

"""Which device this is and what state it is in: torch.cuda properties and NVML, read only.

The probe never sets clocks, power limits or application clocks (METHOD.md: measure the
card as you find it). It reads clocks before and after so a reader can see throttling.
On PyTorch's CPU device the same fields are filled from what `rooflab probe` reads about
the host (hardware.host.detect_host).
"""

from __future__ import annotations

import os
import platform
import re
from pathlib import Path
from typing import Any

from ...errors import DeviceError, InputError
from .board import board_model, devfreq_clocks, power_mode
from .mig import mig_profile

_DEVICE_RE = re.compile(r"^(cuda|cpu)(?::(\d+))?$")

# L1 data cache + shared memory per SM, bytes (CUDA C++ Programming Guide, "Compute
# Capabilities" tables: 256 KB on 9.0, 192 KB on 8.0, 128 KB on 8.6/8.9/7.5, 128 KB on 7.0).
L1_PER_SM = {(9, 0): 256 << 10, (8, 0): 192 << 10, (10, 0): 256 << 10}
DEFAULT_L1_PER_SM = 128 << 10
# ROCm builds of PyTorch answer through torch.cuda, but major.minor there is the gfx version
# (gfx942 -> 9.4), not a CUDA compute capability. Vector L1 per CU by LLVM target (ROCm "GPU
# hardware specifications", https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html:
# 16 KiB on MI100/MI200, 32 KiB on MI300/MI350); other targets: not known, not guessed.
AMD_L1_PER_CU = {"gfx908": 16 << 10, "gfx90a": 16 << 10, "gfx940": 32 << 10,
                 "gfx941": 32 << 10, "gfx942": 32 << 10, "gfx950": 32 << 10}


def hip_version(torch) -> str | None:
    """ROCm's HIP version when this PyTorch is a ROCm build (torch.version.hip), else None."""
    return getattr(getattr(torch, "version", None), "hip", None) or None


def gcn_arch(props) -> str | None:
    """'gfx942' from a ROCm device's gcnArchName ('gfx942:sramecc+:xnack-'), else None."""
    name = str(getattr(props, "gcnArchName", "") or "").split(":")[0].strip()
    return name or None


def parse_torch_device(device: str) -> tuple[str, int | None]:
    """A PyTorch device string -> (kind, index): 'cuda' -> ('cuda', None), 'cuda:1' ->
    ('cuda', 1), 'cpu' -> ('cpu', None). cli.probe.parse_device_option reads the --device
    flag (which also takes 'torch-cpu') before this."""
    m = _DEVICE_RE.match(str(device).strip().lower())
    if not m or (m.group(1) == "cpu" and m.group(2) is not None):
        raise InputError(f"device must be 'cuda', 'cuda:N' or 'cpu' (PyTorch's CPU device, "
                         f"a dry run); got '{device}'")
    return m.group(1), (int(m.group(2)) if m.group(2) is not None else None)


# How to go on without a GPU, said by both verbs that open one: `rooflab bench --device
# cuda` was told to "probe the CPU with `rooflab probe`", another verb than the one it ran
# (s37 H); both measure the CPU when --device is left out.
CPU_INSTEAD = "or measure the CPU instead: leave out --device (`rooflab probe`, `rooflab bench`)"


def open_device(torch, device: str):
    """The torch.device to probe, or DeviceError saying why it cannot be used."""
    kind, index = parse_torch_device(device)
    if kind == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available() and hip_version(torch):
        raise DeviceError(
            "no GPU is visible (torch.cuda.is_available() is False) to this ROCm build of "
            f"PyTorch (HIP {hip_version(torch)}). Check `rocm-smi` or `amd-smi list`, that "
            "you are in the video and render groups, and HIP_VISIBLE_DEVICES / "
            f"ROCR_VISIBLE_DEVICES, {CPU_INSTEAD}")
    if not torch.cuda.is_available():
        build = torch.version.cuda or "none (a CPU-only build of PyTorch)"
        raise DeviceError(
            "no CUDA device is visible (torch.cuda.is_available() is False); PyTorch's CUDA "
            f"version is {build}. Check `nvidia-smi`, the driver and CUDA_VISIBLE_DEVICES, "
            f"install a CUDA build of PyTorch, {CPU_INSTEAD}")
    count = torch.cuda.device_count()
    index = torch.cuda.current_device() if index is None else index
    if index >= count:
        raise DeviceError(f"device cuda:{index} does not exist: {count} CUDA device(s) visible "
                          f"(cuda:0 .. cuda:{count - 1}); pick one of those")
    return torch.device("cuda", index)


def _nvml_handle(nvml, props, index: int):
    uuid = getattr(props, "uuid", None)
    if uuid is not None:
        try:
            return nvml.nvmlDeviceGetHandleByUUID(f"GPU-{uuid}")
        except Exception:  # noqa: BLE001 — older drivers spell UUIDs differently
            pass
    if hasattr(props, "pci_bus_id"):
        bus = f"{getattr(props, 'pci_domain_id', 0):08x}:{props.pci_bus_id:02x}:" \
              f"{getattr(props, 'pci_device_id', 0):02x}.0"
        try:
            return nvml.nvmlDeviceGetHandleByPciBusId(bus)
        except Exception:  # noqa: BLE001
            pass
    # CUDA_VISIBLE_DEVICES can renumber devices; the index is the last resort.
    return nvml.nvmlDeviceGetHandleByIndex(index)


def _try(fn, *args):
    try:
        return fn(*args)
    except Exception:  # noqa: BLE001 — NVML raises per unsupported query; keep the rest
        return None


def nvml_state(props, index: int) -> dict[str, Any]:
    """Clocks (MHz), power (W), temperature (C) and driver through NVML; {} if unavailable."""
    try:
        import pynvml as nvml
        nvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001 — no library, no driver, no permission
        return {"nvml": f"unavailable: {exc}"}
    try:
        h = _nvml_handle(nvml, props, index)
        state = {
            "sm_clock_mhz": _try(nvml.nvmlDeviceGetClockInfo, h, nvml.NVML_CLOCK_SM),
            "mem_clock_mhz": _try(nvml.nvmlDeviceGetClockInfo, h, nvml.NVML_CLOCK_MEM),
            "max_sm_clock_mhz": _try(nvml.nvmlDeviceGetMaxClockInfo, h, nvml.NVML_CLOCK_SM),
            "max_mem_clock_mhz": _try(nvml.nvmlDeviceGetMaxClockInfo, h, nvml.NVML_CLOCK_MEM),
            "app_sm_clock_mhz": _try(nvml.nvmlDeviceGetApplicationsClock, h, nvml.NVML_CLOCK_SM),
            "temperature_c": _try(nvml.nvmlDeviceGetTemperature, h, nvml.NVML_TEMPERATURE_GPU),
        }
        power = _try(nvml.nvmlDeviceGetPowerUsage, h)
        limit = _try(nvml.nvmlDeviceGetEnforcedPowerLimit, h)
        state["power_w"] = power / 1000 if power is not None else None
        state["power_limit_w"] = limit / 1000 if limit is not None else None
        reasons = _try(getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
                       or nvml.nvmlDeviceGetCurrentClocksThrottleReasons, h)
        state["clock_event_reasons"] = reasons
        driver = _try(nvml.nvmlSystemGetDriverVersion)
        state["driver"] = driver.decode() if isinstance(driver, bytes) else driver
        return state
    except Exception as exc:  # noqa: BLE001
        return {"nvml": f"unavailable: {exc}"}
    finally:
        _try(nvml.nvmlShutdown)


def _cpu_mhz() -> float | None:
    try:
        mhz = [float(line.split(":")[1]) for line in Path("/proc/cpuinfo").read_text().splitlines()
               if line.startswith("cpu MHz")]
    except (OSError, ValueError, IndexError):
        return None
    return sum(mhz) / len(mhz) if mhz else None


def read_clocks(torch, dev) -> dict[str, Any]:
    """The device's clocks and power now (read only)."""
    if dev.type == "cuda" and hip_version(torch):
        # NVML is NVIDIA's library; on ROCm it cannot see the device (a stale pynvml could
        # even answer for another card). Say so rather than report nothing or a wrong card.
        # ROCm's own library reads them where it is installed (amd_smi, imported lazily)
        from .amd_smi import amdsmi_state

        return {"nvml": "not used on ROCm (NVIDIA's library); clocks and power from amdsmi",
                **amdsmi_state(dev.index or 0)}
    if dev.type == "cuda":
        props = torch.cuda.get_device_properties(dev)
        state = nvml_state(props, dev.index)
        if "nvml" in state:
            # No NVML (a Jetson has no libnvidia-ml): the clock from sysfs where it is.
            state.update(devfreq_clocks())
        return state
    return {"cpu_mhz_mean": _cpu_mhz()}


def _cpu_fields() -> tuple[str, float | None, dict[str, float]]:
    """The CPU's name, memory (bytes) and L1d/L2 per-core and L3 sizes as `rooflab probe`
    reads them (hardware.host.detect_host): lscpu's "Neoverse-V1" on Arm Linux, the
    registry's name on Windows, sysctl's on macOS. Reading /proc/cpuinfo here named the CPU
    "aarch64" on Graviton and "AMD64 Family 25 Model 97 ..." on Windows (review s23 r3 F9)."""
    from ...hardware.host import detect_host

    host = detect_host()
    sizes = {"L1": host.caches.l1d, "L2": host.caches.l2, "L3": host.caches.l3}
    return (host.cpu_model, float(host.memory_bytes) if host.memory_bytes else None,
            {k: float(v) for k, v in sizes.items() if v})


def _common(torch) -> dict[str, Any]:
    try:
        import importlib.metadata as md
        triton = md.version("triton")
    except Exception:  # noqa: BLE001 — not installed
        triton = None
    # no host name: profiles are shared and checked in, and nothing reads one (review s23
    # r2 F6; the CPU probe's profile has none either)
    return {"platform": platform.platform(),
            "python": platform.python_version(), "torch": torch.__version__,
            "cuda": torch.version.cuda, "triton": triton,
            # The catalog match falls back on it when the GPU's own name is ambiguous.
            "board_model": board_model(),
            **({"hip": hip_version(torch)} if hip_version(torch) else {}),
            # A Jetson's nvpmodel mode (its GPU cap may be under the catalog's clock);
            # the key only where the mode was read.
            **({"power_mode": mode} if (mode := power_mode()) else {})}


def _integrated(props) -> bool | None:
    """cudaDeviceProp.integrated as a bool; None where this torch does not report it (the
    catalog match then still may use the board model)."""
    flag = getattr(props, "is_integrated", None)
    return None if flag is None else bool(flag)


def identify(torch, dev) -> dict[str, Any]:
    """Identity of the device: the same keys on CUDA and on the CPU device (a ROCm build
    adds `gcn_arch` and `hip`, with backend "rocm" and no compute capability);
    `mig_profile` is the MIG profile the name carries ("1g.10gb"), else None."""
    host = _common(torch)
    if dev.type == "cuda" and hip_version(torch):
        p = torch.cuda.get_device_properties(dev)
        arch = gcn_arch(p)
        l2 = getattr(p, "L2_cache_size", None) or getattr(p, "l2_cache_size", None)
        per_cu = AMD_L1_PER_CU.get(arch or "")
        l1 = float(per_cu * p.multi_processor_count) if per_cu else None
        host.update(name=p.name, device=str(dev), backend="rocm", threads=None,
                    compute_capability=None, gcn_arch=arch,
                    integrated=_integrated(p),
                    multiprocessors=p.multi_processor_count, memory_bytes=float(p.total_memory),
                    l2_bytes=float(l2) if l2 else None, l1_bytes=l1,
                    caches={**({"L1": l1} if l1 else {}), **({"L2": float(l2)} if l2 else {})})
    elif dev.type == "cuda":
        p = torch.cuda.get_device_properties(dev)
        cc = (p.major, p.minor)
        l2 = getattr(p, "L2_cache_size", None) or getattr(p, "l2_cache_size", None)
        host.update(name=p.name, device=str(dev), backend="cuda", threads=None,
                    compute_capability=f"{p.major}.{p.minor}",
                    # cudaDeviceProp.integrated: the GPU shares the host's DRAM (Jetson).
                    integrated=_integrated(p),
                    multiprocessors=p.multi_processor_count, memory_bytes=float(p.total_memory),
                    l2_bytes=float(l2) if l2 else None,
                    l1_bytes=float(L1_PER_SM.get(cc, DEFAULT_L1_PER_SM) * p.multi_processor_count),
                    caches={"L1": float(L1_PER_SM.get(cc, DEFAULT_L1_PER_SM)
                                        * p.multi_processor_count),
                            **({"L2": float(l2)} if l2 else {})})
    else:
        cpu_name, mem, caches = _cpu_fields()
        cores = os.cpu_count() or 1
        host.update(name=f"PyTorch CPU device ({cpu_name})", device="cpu", backend="cpu",
                    compute_capability=None, integrated=None, multiprocessors=cores,
                    memory_bytes=mem,
                    l2_bytes=caches.get("L2"), l1_bytes=caches.get("L1"),
                    threads=torch.get_num_threads(),
                    # Shared L3 counts once; per-core L1/L2 scale with the threads used.
                    caches={k: (v if k == "L3" else v * torch.get_num_threads())
                            for k, v in caches.items()})
    # "1g.10gb" on a MIG slice: the catalog match then takes its share of the card's roof.
    host["mig_profile"] = getattr(mig_profile(host["name"]), "profile", None)
    return host

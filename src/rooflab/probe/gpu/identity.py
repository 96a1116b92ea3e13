"""Which device this is and what state it is in: torch.cuda properties and NVML, read only.

The probe never sets clocks, power limits or application clocks (METHOD.md: measure the
card as you find it). It reads clocks before and after so a reader can see throttling.
On PyTorch's CPU device the same fields are filled from /proc and /sys where they exist.
"""

from __future__ import annotations

import os
import platform
import re
import socket
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...errors import DeviceError, InputError

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


def parse_device(device: str) -> tuple[str, int | None]:
    """'cuda' -> ('cuda', None), 'cuda:1' -> ('cuda', 1), 'cpu' -> ('cpu', None)."""
    m = _DEVICE_RE.match(str(device).strip().lower())
    if not m or (m.group(1) == "cpu" and m.group(2) is not None):
        raise InputError(f"device must be 'cuda', 'cuda:N' or 'cpu' (PyTorch's CPU device, "
                         f"a dry run); got '{device}'")
    return m.group(1), (int(m.group(2)) if m.group(2) is not None else None)


def open_device(torch, device: str):
    """The torch.device to probe, or DeviceError saying why it cannot be used."""
    kind, index = parse_device(device)
    if kind == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available() and hip_version(torch):
        raise DeviceError(
            "no GPU is visible (torch.cuda.is_available() is False) to this ROCm build of "
            f"PyTorch (HIP {hip_version(torch)}). Check `rocm-smi` or `amd-smi list`, that "
            "you are in the video and render groups, and HIP_VISIBLE_DEVICES / "
            "ROCR_VISIBLE_DEVICES, or probe the CPU with `rooflab probe`")
    if not torch.cuda.is_available():
        build = torch.version.cuda or "none (a CPU-only build of PyTorch)"
        raise DeviceError(
            "no CUDA device is visible (torch.cuda.is_available() is False); PyTorch's CUDA "
            f"version is {build}. Check `nvidia-smi`, the driver and CUDA_VISIBLE_DEVICES, "
            "install a CUDA build of PyTorch, or probe the CPU with `rooflab probe`")
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


# Where a board names itself: the device tree's model string, NUL-terminated ("NVIDIA
# Jetson AGX Orin Developer Kit"). On a Jetson torch names the GPU just "Orin" for every
# Orin module; this string tells them apart. Absent on x86 (no device tree).
BOARD_MODEL = Path("/proc/device-tree/model")
# sysfs root for the GPU's devfreq node, where NVML does not exist (Jetson: no
# libnvidia-ml). Module attributes, read at call time, so tests can point them elsewhere.
SYSFS = Path("/sys")
# GPU devfreq nodes by L4T release, all also linked under /sys/class/devfreq/<node>:
# /sys/devices/gpu.0/devfreq/57000000.gpu (Nano, L4T R32), /sys/devices/17000000.gv11b/
# devfreq/17000000.gv11b (Xavier), /sys/devices/17000000.ga10b/devfreq/17000000.ga10b (Orin,
# L4T R35), .../17000000.gpu/devfreq/17000000.gpu (Orin, L4T R36 / JetPack 6). Other
# devfreq nodes (vic, nvdec, DLA, EMC) are not the GPU: only these suffixes are read.
_GPU_DEVFREQ_SUFFIXES = ("gpu", "ga10b", "gv11b", "gp10b", "gm20b")


def board_model(path: Path | None = None) -> str | None:
    """The device tree's model string ('NVIDIA Jetson AGX Orin Developer Kit'), trailing
    NUL dropped; None where there is none (x86) or it cannot be read."""
    try:
        raw = (path or BOARD_MODEL).read_bytes()
    except OSError:
        return None
    text = raw.replace(b"\0", b" ").decode("utf-8", errors="replace").strip()
    return text or None


def _gpu_devfreq_nodes(root: Path) -> list[Path]:
    """The GPU's devfreq folders under a sysfs root, first the classic path, no repeats."""
    found = sorted((root / "devices" / "gpu.0" / "devfreq").glob("*"))
    found += [d for d in sorted((root / "class" / "devfreq").glob("*"))
              if d.name.rsplit(".", 1)[-1] in _GPU_DEVFREQ_SUFFIXES]
    seen, out = set(), []
    for d in found:
        real = d.resolve()
        if real not in seen and (d / "cur_freq").exists():
            seen.add(real)
            out.append(d)
    return out


def _hz_file_mhz(path: Path) -> float | None:
    try:
        return int(path.read_text().split()[0]) / 1e6   # devfreq files are in Hz
    except (OSError, ValueError, IndexError):
        return None


def devfreq_clocks(root: Path | None = None) -> dict[str, Any]:
    """The GPU clock (MHz) from sysfs devfreq (cur_freq, max_freq, min_freq: Hz in the
    files), for GPUs without NVML (Jetson); says so when no node is found. Power and
    temperature are not read here (on a Jetson: `tegrastats`)."""
    root = root or SYSFS
    nodes = _gpu_devfreq_nodes(root)
    if not nodes:
        return {"clocks_source": f"not read: no GPU devfreq node under {root} "
                                 f"(devices/gpu.0/devfreq/*, class/devfreq/*.gpu|.ga10b|...)"}
    node = nodes[0]
    return {"sm_clock_mhz": _hz_file_mhz(node / "cur_freq"),
            "max_sm_clock_mhz": _hz_file_mhz(node / "max_freq"),
            "min_sm_clock_mhz": _hz_file_mhz(node / "min_freq"),
            "governor": _text(node / "governor"),
            "clocks_source": f"sysfs devfreq {node} (cur_freq, max_freq, min_freq)"}


def _text(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


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
        return {"nvml": "not used on ROCm (NVIDIA's library); clocks and power not read: "
                        "see `amd-smi metric`"}
    if dev.type == "cuda":
        props = torch.cuda.get_device_properties(dev)
        state = nvml_state(props, dev.index)
        if "nvml" in state:
            # No NVML (a Jetson has no libnvidia-ml): the clock from sysfs where it is.
            state.update(devfreq_clocks())
        return state
    return {"cpu_mhz_mean": _cpu_mhz()}


def _cpu_caches() -> dict[str, float]:
    """Per-core L1d/L2 and shared L3 sizes from sysfs (bytes); {} when not readable."""
    out: dict[str, float] = {}
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for idx in sorted(base.glob("index*")):
        try:
            level = (idx / "level").read_text().strip()
            kind = (idx / "type").read_text().strip()
            size = (idx / "size").read_text().strip().upper()
        except OSError:
            continue
        if kind == "Instruction":
            continue
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1:], 1)
        out[f"L{level}"] = float(int(size.rstrip("KMG")) * mult)
    return out


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _common(torch) -> dict[str, Any]:
    try:
        import importlib.metadata as md
        triton = md.version("triton")
    except Exception:  # noqa: BLE001 — not installed
        triton = None
    return {"hostname": socket.gethostname(), "platform": platform.platform(),
            "python": platform.python_version(), "torch": torch.__version__,
            "cuda": torch.version.cuda, "triton": triton,
            # The catalog match falls back on it when the GPU's own name is ambiguous.
            "board_model": board_model(),
            **({"hip": hip_version(torch)} if hip_version(torch) else {})}


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
        caches = _cpu_caches()
        cores = os.cpu_count() or 1
        mem = None
        try:
            kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text()
                      .splitlines() if line.startswith("MemTotal"))
            mem = float(kb * 1024)
        except (OSError, StopIteration, ValueError):
            pass
        host.update(name=f"PyTorch CPU device ({_cpu_name()})", device="cpu", backend="cpu",
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


# Packages whose dies are separate devices to software: the MI250X's two graphics compute
# dies each show as one GPU with half the package's memory, bandwidth and compute ("AMD
# Instinct MI250 microarchitecture", ROCm docs: 1.6 TB/s and 64 GB per GCD, each with its
# own PCIe x16 link). ROCm names each die "AMD Instinct MI250X / MI250" (an MI250's die,
# 104 CUs to the MI250X's 110, gets the same name: its compute is 104/110 of this).
DIES_PER_PACKAGE = {"AMD Instinct MI250X": 2}


def _one_die(dev, roof, memory_bytes: float | None):
    """The nominal roof of one die when the device shows 1/n of a multi-die entry's memory
    (derived: the package figure / n; the host link is per die already), else `roof`."""
    n = DIES_PER_PACKAGE.get(dev.name)
    if not n or not memory_bytes or not dev.memory_bytes \
            or not 0.8 < memory_bytes * n / dev.memory_bytes < 1.2:
        return roof, dev.name
    why = (f"one of the {n} dies of the {dev.name} (each is its own device): the package's "
           f"datasheet figure / {n}")

    def part(c):
        if c.level == "PCIe":
            return c
        return replace(c, value=c.value / n, provenance="derived",
                       source=f"{why}; {c.source}".rstrip("; "))
    name = f"{dev.name}, one die"
    return replace(roof, name=name, compute=tuple(map(part, roof.compute)),
                   memory=tuple(map(part, roof.memory)), notes=roof.notes + (why,)), name


# --- a MIG slice: its share of the card -------------------------------------------------
# CUDA names a MIG device "<card> MIG <g>g.<GB>gb" ("NVIDIA A100-SXM4-80GB MIG 1g.10gb"; a
# compute instance of part of it "MIG 1c.3g.40gb"). NVIDIA MIG User Guide, "Supported MIG
# Profiles": a card has 7 compute slices and 8 memory slices; a profile's memory and L2
# are its memory slices / 8 (A100 80GB: 1g.10gb 1/8, 2g.20gb 2/8, 3g.40gb 4/8, 7g.80gb
# 8/8), its SMs its compute slices' (A100: 14 per slice, 98 in a 7g of the card's 108).
_MIG_RE = re.compile(r"\s*\bMIG\s+(?:\d+c\.)?(\d+)g\.(\d+)gb\b(?:\+me)?", re.IGNORECASE)
MIG_COMPUTE_SLICES = 7
MIG_MEMORY_SLICES = 8
# Memory levels a slice owns its share of; the host link (PCIe) is the card's, not split.
_MIG_SPLIT_LEVELS = ("DRAM", "L2")


@dataclass(frozen=True)
class MigProfile:
    """A MIG profile read from a device name."""

    profile: str        # "1g.10gb" (compute-instance prefix and "+me" dropped)
    slices: int         # compute slices (GPCs), of MIG_COMPUTE_SLICES
    memory_gb: int      # the profile's memory, GB as NVIDIA rounds it
    card: str           # the device name less the profile: the whole card's name


def mig_profile(name: str) -> MigProfile | None:
    """'NVIDIA A100-SXM4-80GB MIG 1g.10gb' -> MigProfile('1g.10gb', 1, 10, 'NVIDIA
    A100-SXM4-80GB'); None for a name without a MIG profile (a whole card)."""
    m = _MIG_RE.search(name or "")
    if m is None or not 1 <= int(m.group(1)) <= MIG_COMPUTE_SLICES or int(m.group(2)) <= 0:
        return None
    card = (name[:m.start()] + name[m.end():]).strip()
    return MigProfile(f"{int(m.group(1))}g.{int(m.group(2))}gb", int(m.group(1)),
                      int(m.group(2)), card)


def mig_memory_slices(memory_gb: float, card_gb: float | None) -> int | None:
    """The profile's memory slices (eighths of the card): its GB over the card's, to the
    nearest eighth (H200 141GB: 1g.18gb -> 1, 3g.71gb -> 4); None when the card's size is
    unknown or the share is no whole eighth within a quarter slice (not this card's)."""
    if not card_gb or card_gb <= 0:
        return None
    share = memory_gb / card_gb * MIG_MEMORY_SLICES
    n = round(share)
    return n if 1 <= n <= MIG_MEMORY_SLICES and abs(share - n) <= 0.25 else None


def mig_roof(roof, mig: MigProfile, *, card_sms: int | None, slice_sms: int | None,
             card_gb: float | None):
    """(the slice's nominal Roof, its name): compute ceilings x slice SMs / card SMs (both
    known; else compute slices / 7: a 7g has fewer SMs than the card, so that reads high),
    DRAM and L2 x memory slices / 8; the host link as the card's. Every scaled ceiling is
    "derived", its method saying how. Memory left at the card's figure (with a note) when
    the profile's GB does not give whole eighths of the card's."""
    tag = f"MIG {mig.profile}"
    if card_sms and slice_sms and slice_sms <= card_sms:
        c_num, c_den, c_how = slice_sms, card_sms, f"{slice_sms} of {card_sms} SMs"
    else:
        unknown = "the slice's SM count not read" if card_sms else \
            "the catalog gives no SM count for the card"
        c_num, c_den = mig.slices, MIG_COMPUTE_SLICES
        c_how = f"{mig.slices} of {MIG_COMPUTE_SLICES} compute slices ({unknown})"
    slices = mig_memory_slices(mig.memory_gb, card_gb)
    notes = [f"{tag}: a slice of the {roof.name}; compute x {c_how}"]

    def compute(c):
        return replace(c, value=c.value * c_num / c_den, provenance="derived",
                       method=f"{tag}: {c_how} x {c.value / 1e12:g} TFLOP/s")

    def memory(c):
        if slices is None or c.level not in _MIG_SPLIT_LEVELS:
            return c
        return replace(c, value=c.value * slices / MIG_MEMORY_SLICES, provenance="derived",
                       method=f"{tag}: {slices} of {MIG_MEMORY_SLICES} memory slices x "
                              f"{c.value / 1e9:g} GB/s")
    if slices is None:
        size = f"the card's {card_gb:g} GB" if card_gb else "the card, whose size is unknown"
        notes.append(f"{tag}: {mig.memory_gb} GB is no whole eighth of {size}: memory "
                     f"ceilings left at the whole card's")
    else:
        notes.append(f"{tag}: DRAM and L2 x {slices} of {MIG_MEMORY_SLICES} memory slices "
                     f"({mig.memory_gb} GB of {card_gb:g}); the host link is the card's")
    name = f"{roof.name} {tag} (derived)"
    return replace(roof, name=name, compute=tuple(map(compute, roof.compute)),
                   memory=tuple(map(memory, roof.memory)),
                   notes=roof.notes + tuple(notes)), name


def catalog_roof(name: str, cc: str | None = None, *, memory_bytes: float | None = None):
    """(nominal Roof, catalog name) for a device name, or (None, reason) when unmatched or
    when the entry's compute capability differs from the device's (a wrong match).
    `memory_bytes` (the device's own) tells one die of a multi-die package (MI250X) from the
    package: its roof is then the package's figures divided among the dies."""
    try:
        from ...hardware.catalog import match_device_name
    except ImportError:
        return None, "the hardware catalog is not available in this rooflab"
    try:
        dev = match_device_name(name)
    except Exception as exc:  # noqa: BLE001 — a catalog bug must not lose a measurement
        return None, f"catalog lookup failed: {exc}"
    if dev is None:
        return None, f"no catalog entry matches '{name}'"
    if cc and dev.compute_capability and dev.compute_capability != cc:
        return None, (f"catalog entry '{dev.name}' (compute capability "
                      f"{dev.compute_capability}) matched '{name}', but this device is {cc}: "
                      f"not used")
    link = dev.host_link_ceiling
    # The probe measures the host link too: its nominal figure goes beside it (the catalog's
    # own roofs leave links out, so charts of datasheet roofs stay cache/DRAM only).
    roof = replace(dev.roof, memory=dev.roof.memory + (link,)) if link else dev.roof
    return _one_die(dev, roof, memory_bytes)


@dataclass(frozen=True)
class CatalogMatch:
    """The catalog entry behind the probe's nominal roof and how it was found."""

    roof: Any | None              # the nominal Roof, None when no entry is used
    entry: str | None             # the catalog name
    how: str | None               # "matched by the device name ..." / "... board model ..."
    note: str | None              # why there is no nominal roof
    unified_memory: bool = False  # the entry's GPU shares DRAM with the CPU (Jetson)
    mig_profile: str | None = None  # "1g.10gb" when the device is a MIG slice


def _catalog_unified(text: str) -> bool:
    try:
        from ...hardware.catalog import match_device_name
        return bool(getattr(match_device_name(text), "unified_memory", False))
    except Exception:  # noqa: BLE001 — a catalog bug must not lose a measurement
        return False


def _entries_named(name: str, cc: str | None) -> list[Any]:
    """Catalog entries (of this compute capability) whose names hold every word of `name`:
    the six Jetson Orins for 'Orin'. More than one means the name cannot decide."""
    try:
        from ...hardware.catalog import all_devices
        from ...hardware.names import tokens
    except ImportError:
        return []
    words = set(tokens(name))
    return [d for d in all_devices() if words and words <= set(tokens(d.name))
            and (cc is None or d.compute_capability in (None, cc))]


# --- the device's memory decides between modules of one name ------------------------------
# A Jetson module's "GB" is binary (16 GB of LPDDR5 = 16 GiB) and torch's total_memory is
# the kernel's view, less carve-outs (firmware, display, camera): an Orin NX 16GB reports
# 14.15 GiB (deviceQuery: 15189422080 bytes), an 8 GB module about 7.4 GiB. Never more.
# Tolerance 25 % under the nominal size: room for a 4 GB module's proportionally larger
# carve-out, while sizes a factor 2 apart (4, 8, 16, 32, 64 GB) never share a reading.
MEMORY_TOLERANCE = 0.25
GIB = float(1 << 30)
# Orin products at the memory size of a catalog module that are not themselves an entry:
# (name, GB, the catalog entry with the same roof, or None for another roof). The first
# Jetson AGX Orin Developer Kit (2022) has 32 GB with the 64GB module's GPU (the 64GB
# entry's roof); the AGX Orin Industrial (JAOi, DS-10662-001: 64 GB, GPU 1.185 GHz) has
# another. Their sizes cannot decide: 30 GiB or 61 GiB alone names no one roof. The SM
# count can, in part: an optional 4th field gives a product's SMs where no same-roof entry
# does (the Industrial module: 2048 CUDA cores, 16 SMs, as the 64GB), so a 14-SM device
# reporting 30 GiB is the AGX Orin 32GB, not the 2022 kit (16 SMs, the 64GB's GPU).
OFF_CATALOG = (("Jetson AGX Orin Developer Kit (2022, 32 GB)", 32, "NVIDIA Jetson AGX Orin 64GB"),
               ("Jetson AGX Orin Industrial", 64, None, 16))
# Words of a board model that make another product than a catalog entry (names.VARIANTS,
# and 'industrial'); 'super' is not one on a Jetson board: it is the same module run in
# MAXN_SUPER ("... Developer Kit Super"), the mode the catalog's Orin NX and Nano 8GB use.
_OTHER_PRODUCT = frozenset({"industrial"})


def _fits(gb: float, memory_bytes: float, tolerance: float) -> bool:
    """The reported memory is at most `gb` GiB and at most `tolerance` under it."""
    return (1 - tolerance) * gb <= memory_bytes / GIB <= gb


def _nominal_gb(device) -> float | None:
    mem = getattr(device, "memory_bytes", None)
    return mem / 1e9 if mem else None      # the catalog stores GB as 1e9 bytes


def pick_by_memory(candidates, memory_bytes: float | None, *, others=OFF_CATALOG,
                   tolerance: float = MEMORY_TOLERANCE):
    """Of several catalog entries that fit a device's name, the one whose nominal memory
    is nearest at or above the device's reported `memory_bytes` and within `tolerance`
    under it; None when no size fits, or when products with different roofs share the
    size that fits (Orin Nano 8GB and Orin NX 8GB both fit 7.4 GiB: the name must tell
    them apart first, else nothing is picked). `others`: (name, GB, same-roof entry name
    or None[, SMs]) for products that are not catalog entries; those whose family (name less
    size) is one of a candidate's count as rivals at their size. Pure: candidates need
    .name and .memory_bytes (GB x 1e9)."""
    from ...hardware.names import tokens, without_size

    if not memory_bytes or memory_bytes <= 0 or not candidates:
        return None
    sized = [(gb, d.name, d) for d in candidates if (gb := _nominal_gb(d))]
    families = {without_size(d.name) for d in candidates}
    sized += [(gb, same or name, None) for name, gb, same, *_ in others
              if any(f <= set(tokens(name)) for f in families)]
    fitting = sorted({gb for gb, _, _ in sized if _fits(gb, memory_bytes, tolerance)})
    if not fitting:
        return None
    at = [(roof, d) for gb, roof, d in sized if gb == fitting[0]]
    if len({roof for roof, _ in at}) != 1:
        return None
    roof = at[0][0]
    return next((d for d in candidates if d.name == roof), None)


def _holds(entry: str, memory_bytes: float, tolerance: float = MEMORY_TOLERANCE) -> bool:
    """Whether a device reporting `memory_bytes` can be the catalog entry `entry` (its
    own size, or a size another product with its roof comes in)."""
    try:
        from ...hardware.catalog import lookup
        gb = _nominal_gb(lookup(entry))
    except Exception:  # noqa: BLE001 — a catalog bug must not lose a measurement
        return True
    sizes = ([gb] if gb else []) + [g for _, g, same, *_ in OFF_CATALOG if same == entry]
    return not sizes or any(_fits(g, memory_bytes, tolerance) for g in sizes)


def _board_family(name: str, cc: str | None, board: str | None) -> list[Any]:
    """The entries fitting the device name that the board model names less a memory size
    ('NVIDIA Jetson Orin NX Engineering Reference Developer Kit': both Orin NX); without
    a board, all that fit the name. A board naming another product ('Industrial') or
    none of them: none."""
    named = _entries_named(name, cc)
    if not board:
        return named
    from ...hardware.names import VARIANTS, tokens, without_size

    said = set(tokens(board))
    other = (VARIANTS - {"super"}) | _OTHER_PRODUCT
    out = []
    for d in named:
        own = {t for label in (d.name, *d.aliases) for t in tokens(label)}
        if without_size(d.name) <= said and not (said - own) & other:
            out.append(d)
    return out


def _entry_sms(entry: str | None) -> int | None:
    """The catalog entry's SM count, None where it gives none (or there is no such entry)."""
    return getattr(_entry_device(entry), "sms", None) if entry else None


def _entry_device(entry: str | None):
    """The catalog entry named `entry`, None where there is none."""
    try:
        from ...hardware.catalog import all_devices
        return next((d for d in all_devices() if d.name == entry), None)
    except Exception:  # noqa: BLE001 — a catalog bug must not lose a measurement
        return None


def _match_mig(name: str, mig: MigProfile, cc: str | None, sms: int | None) -> CatalogMatch:
    """A MIG slice: the whole card by the name less the profile, then the slice's share of
    its nominal roof (mig_roof). The card's SM count is not the slice's, so it is not
    checked for equality; it is used for the share. A slice reporting more SMs than the
    card has cannot be a slice of it."""
    card, entry = catalog_roof(mig.card, cc)
    if card is None:
        return CatalogMatch(None, None, None, f"a MIG {mig.profile} slice, but {entry}",
                            mig_profile=mig.profile)
    dev = _entry_device(entry)
    card_sms = getattr(dev, "sms", None)
    if sms and card_sms and sms > card_sms:
        return CatalogMatch(None, None, None,
                            f"'{name}' names a MIG {mig.profile} slice of {entry}, but the "
                            f"device has {sms} SMs, more than the card's {card_sms}: not used",
                            mig_profile=mig.profile)
    roof, got = mig_roof(card, mig, card_sms=card_sms, slice_sms=sms,
                         card_gb=_nominal_gb(dev) if dev is not None else None)
    return CatalogMatch(roof, got,
                        f"matched as a MIG slice: the device name '{name}' less 'MIG "
                        f"{mig.profile}' names {entry}; its nominal roof scaled to the "
                        f"slice's share ({'; '.join(roof.notes[-2:])})", None,
                        mig_profile=mig.profile)


def _sms_fit(device, sms: int | None) -> bool:
    """Whether a catalog entry can be a device with `sms` SMs: it gives no count, or the
    same one (nothing is checked when the device's count is unknown)."""
    own = getattr(device, "sms", None)
    return not sms or not own or own == sms


def _sms_clash(entry: str | None, sms: int | None) -> str | None:
    """'the device has 14 SMs, X has 16' when the entry's SM count is not the device's."""
    own = _entry_sms(entry)
    if sms and own and own != sms:
        return f"the device has {sms} SMs, {entry} has {own}"
    return None


def _rivals(sms: int | None) -> tuple:
    """OFF_CATALOG less the products whose SM count (their own, or their same-roof
    entry's) is known and is not the device's."""
    if not sms:
        return OFF_CATALOG
    out = []
    for rival in OFF_CATALOG:
        own = rival[3] if len(rival) > 3 else _entry_sms(rival[2])
        if not own or own == sms:
            out.append(rival)
    return tuple(out)


def _by_memory(name: str, cc: str | None, board: str | None, memory_bytes: float | None,
               sms: int | None = None):
    """(entry, family) when the device's memory picks one of the entries its name and
    board fit (and its SM count, where both it and the entry give one); (None, family)
    otherwise."""
    family = [d for d in _board_family(name, cc, board) if _sms_fit(d, sms)]
    if memory_bytes and family:
        return pick_by_memory(family, memory_bytes, others=_rivals(sms)), family
    return None, family


def match_catalog(name: str, cc: str | None = None, *, memory_bytes: float | None = None,
                  board: str | None = None, sms: int | None = None,
                  integrated: bool | None = None) -> CatalogMatch:
    """The nominal roof by the device's name, else by the board's model string (a Jetson
    is just "Orin" to torch; /proc/device-tree/model names the module), else by the
    device's memory among the entries the name (and board) fit: the NX developer kit or
    a bare "Orin" in a container (no device tree) with 14.2 GiB is the Orin NX 16GB.
    Memory also overrules a board model that names a module of another size (a 4 GB
    Orin Nano on the Nano developer kit's carrier). `sms` (torch's multi_processor_count)
    rules out every candidate whose catalog SM count differs: an AGX Orin 32GB module (14
    SMs) on the developer kit's carrier is not the 64GB (16). The board model is used only
    on an integrated GPU, or where `integrated` is unknown (None): a discrete GPU in a
    Jetson's PCIe slot is not the module. A MIG slice ('... MIG 1g.10gb') gets its share of
    the whole card's roof (_match_mig). Never a guess: when none decides, no roof and a
    note saying so."""
    mig = mig_profile(name)
    if mig is not None:
        # A slice's SMs are its share of the card's, never the card's count: its own path.
        return _match_mig(name, mig, cc, sms)
    rejected: list[str] = []     # candidates named by the name or board, and why not used
    roof, got = catalog_roof(name, cc, memory_bytes=memory_bytes)
    if roof is not None:
        clash = _sms_clash(got, sms)
        if clash is None:
            return CatalogMatch(roof, got, f"matched by the device name '{name}'", None,
                                _catalog_unified(name))
        got = f"the device name '{name}' names {got}, but {clash}"
        rejected.append(got)
    mem = f"{memory_bytes / GIB:.2f} GiB" if memory_bytes else None
    if board and integrated is False:
        got = (f"{got}; the board model '{board}' is not used: the device does not report "
               f"itself integrated (a discrete GPU is not the board's own)")
        board = None
    if board:
        by_board, board_got = catalog_roof(board, cc, memory_bytes=memory_bytes)
        clash = _sms_clash(board_got, sms) if by_board is not None else None
        if by_board is not None and clash is None \
                and (not memory_bytes or _holds(board_got, memory_bytes)):
            return CatalogMatch(by_board, board_got,
                                f"matched by the board model '{board}' ({BOARD_MODEL}); the "
                                f"device name alone did not decide ({got})", None,
                                _catalog_unified(board))
        if by_board is not None:
            why = clash or f"this device's {mem} cannot be its memory"
            rejected.append(f"the board model '{board}' names {board_got}, but {why}")
            got = f"{got}; {rejected[-1]}"
        else:
            got = f"{got}; nor does the board model '{board}' ({board_got})"
    picked, family = _by_memory(name, cc, board, memory_bytes, sms)
    if picked is not None:
        roof, entry = catalog_roof(picked.name, cc, memory_bytes=memory_bytes)
        if roof is not None:
            among = ", ".join(d.name for d in family)
            whose = f"the board model '{board}'" if board else f"the device name '{name}'"
            if sms and any(getattr(d, "sms", None) for d in family):
                whose += f" and the device's {sms} SMs"
            overruled = f" ({'; '.join(rejected)})" if rejected else ""
            return CatalogMatch(roof, entry,
                                f"matched by the device memory: {mem} (torch's total_memory) "
                                f"fits {entry}'s {_nominal_gb(picked):g} GB (at most "
                                f"{MEMORY_TOLERANCE:.0%} under it) and no other of the "
                                f"entries {whose} {'fit' if ' and ' in whose else 'fits'} "
                                f"({among}){overruled}", None,
                                _catalog_unified(picked.name))
    several = _entries_named(name, cc)
    if len(several) > 1:
        tell = "the board model does not tell" if board else "there is no board model to tell"
        size = (f", nor does the device memory ({mem}) name one of them"
                if mem else ", and no device memory was given")
        if sms and any(d.sms for d in several):
            fit = [d.name for d in several if _sms_fit(d, sms)]
            size += (f"; its {sms} SMs fit {len(fit)} of them"
                     + (f" ({', '.join(fit)})" if fit else ""))
        got = (f"{got}: '{name}' names {len(several)} catalog entries "
               f"({', '.join(d.name for d in several)}) and {tell} them apart{size}; not "
               f"guessed, so no nominal roof")
    return CatalogMatch(None, None, None, got)

"""Jetson board helpers: the device tree's model string and the GPU clock from sysfs devfreq.

Where NVML does not exist (a Jetson has no libnvidia-ml) these are what the probe reads
instead; on x86 there is no device tree and no GPU devfreq node, and both say so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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

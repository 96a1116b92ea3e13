"""Jetson board helpers: the device tree's model string, the GPU clock from sysfs devfreq
and the nvpmodel power mode.

Where NVML does not exist (a Jetson has no libnvidia-ml) these are what the probe reads
instead; on x86 there is no device tree and no GPU devfreq node, and both say so.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...units import fmt_pct

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
# The Jetson power mode (nvpmodel), read from its files, never by running `nvpmodel` (whose
# -m sets a mode). NVPMODEL_STATUS is what nvpmodel writes when it sets one: "pmode:0002"
# (often followed by " fmode:..."), the mode's ID. NVPMODEL_CONF defines the modes: a
# block opens with "< POWER_MODEL ID=2 NAME=15W >" and its lines set limits,
# "GPU MAX_FREQ 612000000" (Hz; -1 or 0, as the confs write "no limit" for CPUs and EMC,
# is read as no cap) and "TPC_POWER_GATING TPC_PG_MASK 0" (bits of power-gated TPCs);
# other "< ... >" lines ("< PARAM ... >", "< PM_CONFIG DEFAULT=2 >") close it. Module
# attributes, read at call time, so tests point them at a fake tree.
NVPMODEL_STATUS = Path("/var/lib/nvpmodel/status")
NVPMODEL_CONF = Path("/etc/nvpmodel.conf")
_PMODE = re.compile(r"\bpmode\s*:\s*(\d+)")
_POWER_MODEL = re.compile(r"^<\s*POWER_MODEL\s+ID\s*=\s*(\d+)\s+NAME\s*=\s*([^\s>]+)\s*>")
_GPU_MAX = re.compile(r"^GPU\s+MAX_FREQ\s+(-?\d+)\s*$")
_TPC_MASK = re.compile(r"^TPC_POWER_GATING\s+TPC_PG_MASK\s+(\w+)\s*$")


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


def power_mode(status: Path | None = None, conf: Path | None = None) -> dict[str, Any] | None:
    """The Jetson power mode the board runs in, from nvpmodel's files (read only): {"id": 2,
    "name": "15W", "gpu_max_freq_mhz": 612.0, "tpc_pg_mask": 0, "source": ...}; the name,
    GPU cap and TPC mask only where the conf's block for that ID gives them (a cap of -1
    or 0 is no cap: None). None where the status file is absent or holds no "pmode:"
    (not a Jetson, or nvpmodel never ran): nothing is guessed."""
    status, conf = status or NVPMODEL_STATUS, conf or NVPMODEL_CONF
    m = _PMODE.search(_text(status) or "")
    if m is None:
        return None
    mode_id = int(m.group(1))
    block = _mode_block(conf, mode_id)
    out: dict[str, Any] = {"id": mode_id, "name": None, "gpu_max_freq_mhz": None,
                           "tpc_pg_mask": None,
                           "source": f"{status} (pmode:{m.group(1)})"}
    if block is None:
        out["source"] += f"; no POWER_MODEL ID={mode_id} block read in {conf}"
        return out
    name, lines = block
    out["name"] = name
    out["source"] += f"; {conf} (POWER_MODEL ID={mode_id} NAME={name})"
    for line in lines:
        if (g := _GPU_MAX.match(line)) and int(g.group(1)) > 0:
            out["gpu_max_freq_mhz"] = int(g.group(1)) / 1e6   # the conf gives Hz
        elif (k := _TPC_MASK.match(line)):
            try:
                out["tpc_pg_mask"] = int(k.group(1), 0)
            except ValueError:
                pass
    return out


def _mode_block(conf: Path, mode_id: int) -> tuple[str, list[str]] | None:
    """(NAME, the block's lines) of "< POWER_MODEL ID=mode_id NAME=... >" in the conf;
    None where the file or the block is missing."""
    text = _text(conf)
    if text is None:
        return None
    name, lines = None, []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("<"):
            if name is not None:
                break                        # the next block: ours is complete
            head = _POWER_MODEL.match(line)
            if head and int(head.group(1)) == mode_id:
                name = head.group(2)
        elif name is not None and line and not line.startswith("#"):
            lines.append(line)
    return (name, lines) if name is not None else None


def power_mode_note(mode: dict[str, Any] | None, nominal_mhz: float | None) -> str | None:
    """"power mode 15W caps the GPU at 612 MHz, 47 % of the 1300 MHz the nominal roof
    assumes ..." when the mode's GPU cap is below the clock the catalog's peaks assume (the
    compute roof scales with the clock: derived); a power-gated TPC mask is said too. None
    when either clock is unknown and no TPC is gated: nothing is said that was not read."""
    if not mode:
        return None
    label = mode.get("name") or f"ID {mode['id']}"
    parts = []
    cap = mode.get("gpu_max_freq_mhz")
    if cap and nominal_mhz and cap < nominal_mhz:
        parts.append(f"caps the GPU at {cap:g} MHz, {fmt_pct(100 * cap / nominal_mhz)} of the "
                     f"{nominal_mhz:g} MHz the nominal roof assumes: compute peaks scale "
                     f"with the clock")
    mask = mode.get("tpc_pg_mask")
    if mask:
        parts.append(f"power-gates {bin(mask).count('1')} TPC(s) (TPC_PG_MASK {mask:#x}; "
                     f"2 SMs each)")
    if not parts:
        return None
    return f"power mode {label} {' and '.join(parts)} (nvpmodel: {mode['source']})"

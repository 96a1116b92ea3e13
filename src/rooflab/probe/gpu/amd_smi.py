"""What ROCm's own library (amdsmi, the Python module that ships with ROCm) tells the probe on
an AMD GPU: clocks, power and compute partition (read_clocks' keys, as NVML gives them on
NVIDIA), and whether the GPU has an xGMI link to another (the comm probe's link name).
amdsmi is imported when called, never at import time: a ROCm torch without it, or a CUDA
machine, gets a note saying what was not read (review s28 R4 F7).

API used (ROCm/amdsmi py-interface/amdsmi_interface.py): amdsmi_init, amdsmi_shut_down,
amdsmi_get_processor_handles, amdsmi_get_clock_info(h, AmdSmiClkType.GFX) -> {"clk" (or
"cur_clk"), "max_clk", ...} in MHz, amdsmi_get_power_info(h) -> {"current_socket_power" or
"average_socket_power", "power_limit", ...} in W, amdsmi_get_gpu_compute_partition(h) ->
"SPX"/"DPX"/"CPX", amdsmi_topo_get_link_type(h1, h2) -> {"hops", "type"}.
"""

from __future__ import annotations

from typing import Any

NO_AMDSMI = ("amdsmi (ROCm's Python module) is not importable: clocks, power and compute "
             "partition not read; install it from /opt/rocm/share/amd_smi (pip install .) or "
             "see `amd-smi metric`")


def _first(d: Any, *keys: str) -> Any:
    """The first key present with a number ('N/A' from amdsmi is no number)."""
    if not isinstance(d, dict):
        return None
    for k in keys:
        v = d.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return v
    return None


def _handle(amdsmi, index: int):
    handles = amdsmi.amdsmi_get_processor_handles()
    # HIP_VISIBLE_DEVICES can renumber devices; the index is the best this can do
    return handles, handles[index]


def amdsmi_state(index: int) -> dict[str, Any]:
    """The GPU's clock (MHz), power (W) and compute partition through amdsmi, in
    nvml_state's keys; {"amdsmi": why} when amdsmi is absent or fails."""
    try:
        import amdsmi
    except Exception:  # noqa: BLE001 - not installed, or its library not found
        return {"amdsmi": NO_AMDSMI}
    try:
        amdsmi.amdsmi_init()
    except Exception as exc:  # noqa: BLE001 - no driver, no permission
        return {"amdsmi": f"unavailable: {exc}"}
    try:
        _, h = _handle(amdsmi, index)
        state: dict[str, Any] = {}
        gfx = getattr(getattr(amdsmi, "AmdSmiClkType", None), "GFX", None)
        clock = _call(amdsmi.amdsmi_get_clock_info, h, gfx) if gfx is not None else None
        state["sm_clock_mhz"] = _first(clock, "clk", "cur_clk")
        state["max_sm_clock_mhz"] = _first(clock, "max_clk")
        power = _call(amdsmi.amdsmi_get_power_info, h)
        state["power_w"] = _first(power, "current_socket_power", "average_socket_power")
        state["power_limit_w"] = _first(power, "power_limit")
        part = _call(getattr(amdsmi, "amdsmi_get_gpu_compute_partition", None), h)
        state["compute_partition"] = part if isinstance(part, str) else None
        return state
    except Exception as exc:  # noqa: BLE001
        return {"amdsmi": f"unavailable: {exc}"}
    finally:
        _call(amdsmi.amdsmi_shut_down)


def _call(fn, *args):
    if fn is None:
        return None
    try:
        return fn(*args)
    except Exception:  # noqa: BLE001 - amdsmi raises per unsupported query; keep the rest
        return None


def _xgmi_code(amdsmi) -> int | None:
    """amdsmi's number for an xGMI link (AmdSmiLinkType, AmdSmiIoLinkType in older ROCm)."""
    for enum in ("AmdSmiLinkType", "AmdSmiIoLinkType"):
        cls = getattr(amdsmi, enum, None)
        for name in ("AMDSMI_LINK_TYPE_XGMI", "XGMI"):
            member = getattr(cls, name, None)
            if member is not None:
                return int(member)
    return None


def xgmi_active(index: int) -> bool | None:
    """True when amdsmi reports an xGMI link from this GPU to another, False when it
    reports none (PCIe only), None when amdsmi is absent or cannot tell."""
    try:
        import amdsmi
    except Exception:  # noqa: BLE001
        return None
    try:
        amdsmi.amdsmi_init()
    except Exception:  # noqa: BLE001
        return None
    try:
        handles, me = _handle(amdsmi, index)
        code = _xgmi_code(amdsmi)
        for other in handles:
            if other is me:
                continue
            kind = (_call(amdsmi.amdsmi_topo_get_link_type, me, other) or {}).get("type")
            kind = getattr(kind, "value", kind)   # an enum member, or a ctypes number
            if kind is not None and ((code is not None and int(kind) == code)
                                     or "XGMI" in str(kind).upper()):
                return True
        return False if len(handles) > 1 else None
    except Exception:  # noqa: BLE001
        return None
    finally:
        _call(amdsmi.amdsmi_shut_down)


def xgmi_by_name(name: str) -> bool:
    """Without amdsmi: whether the catalog's entry for this GPU name joins its GPUs by xGMI
    (an MI300X platform's full mesh, an MI250X's dies: [device.links]); False for any
    other name, a Radeon card on PCIe included."""
    from ...hardware.catalog import match_device_name

    dev = match_device_name(name or "")
    return bool(dev is not None and getattr(dev, "links", None))

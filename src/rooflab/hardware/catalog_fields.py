"""The fields of a catalog entry and their checks (split from hardware/catalog.py, which
builds each Device from them): the kinds, the fields every entry, a CPU and an Apple chip
may carry with their types, the required ones, the host link's words, and the peak tables'
<precision>_<unit> keys. A bad entry is a ParseError naming the file, the entry and the
field."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import ParseError
from ..units import PRECISIONS, UNITS

KINDS = ("gpu", "accelerator", "cpu")
_COMMON = {"name": str, "vendor": str, "kind": str, "aliases": list, "source": str,
           "notes": list, "memory_gb": float, "usable_memory_mib": float,
           "memory_gbps": float, "l2_mib": float,
           "llc_mib": float, "llc_gbps": float, "interconnect": str,
           "interconnect_gbps": float, "tdp_w": float, "overhead_us": float,
           "overhead_reason": str, "tflops": dict, "sparse_tflops": dict,
           "compute_capability": str, "host_link": str, "sms": int,
           "software_devices": int, "links": dict}
_CPU = {"microarch": str, "cores": int, "base_ghz": float, "boost_ghz": float,
        "all_core_ghz": float,
        "e_microarch": str, "e_cores": int, "e_base_ghz": float,
        "memory_channels": int, "memory_mts": float}
_APPLE = {"gpu_cores": int, "gpu_ghz": float}
_REQUIRED = ("name", "vendor", "kind", "source", "memory_gb", "interconnect",
             "interconnect_gbps")
_HOST_LINK = re.compile(r"^PCIe Gen([3-6]) x(1|2|4|8|16)$")


# --- loading and validation -------------------------------------------------------------
def _where(index: int, raw: Mapping[str, Any]) -> str:
    return f"entry {index + 1} ('{raw.get('name', '?')}')"


def _fail(fname: str, where: str, message: str) -> ParseError:
    return ParseError(f"{where}: {message}", path=f"rooflab/hardware/data/{fname}")


def _check_types(fname: str, where: str, raw: Mapping[str, Any]) -> None:
    allowed = {**_COMMON, **_CPU, **_APPLE}
    for key, value in raw.items():
        if key not in allowed:
            raise _fail(fname, where, f"unknown field '{key}' (allowed: {', '.join(allowed)})")
        want = allowed[key]
        ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
              if want is float else isinstance(value, want)
              and not (want is int and isinstance(value, bool)))
        if not ok:
            raise _fail(fname, where, f"field '{key}' must be {want.__name__}; got {value!r}")
        if want in (int, float) and not value > 0:
            raise _fail(fname, where, f"field '{key}' must be positive; got {value!r}")
        if want is list and not all(isinstance(item, str) for item in value):
            raise _fail(fname, where, f"field '{key}' must be a list of strings")
    for key in _REQUIRED:
        if key not in raw:
            raise _fail(fname, where, f"missing field '{key}'")
    if raw["kind"] not in KINDS:
        raise _fail(fname, where, f"kind must be one of {KINDS}; got '{raw['kind']}'")
    if not str(raw["source"]).startswith("https://"):
        raise _fail(fname, where, "source must be an https:// URL of the vendor datasheet")
    if "host_link" in raw and not _HOST_LINK.match(raw["host_link"]):
        raise _fail(fname, where, f"host_link must read like 'PCIe Gen5 x16' (generation 3-6, "
                                  f"1-16 lanes); got '{raw['host_link']}'")


def _peaks(fname: str, where: str, table: Mapping[str, Any], what: str) -> dict[str, float]:
    """{'bf16_tensor': 989.5} -> {'bf16 tensor': 9.895e14}; keys checked against the vocabulary."""
    out = {}
    for key, tflops in table.items():
        prec, _, unit = key.rpartition("_")
        if prec not in PRECISIONS or unit not in UNITS:
            raise _fail(fname, where, f"[{what}] key '{key}' must be <precision>_<unit> with "
                        f"precision in {PRECISIONS} and unit in {UNITS}")
        if isinstance(tflops, bool) or not isinstance(tflops, (int, float)) or tflops <= 0:
            raise _fail(fname, where, f"[{what}] {key} must be a positive number; got {tflops!r}")
        out[f"{prec} {unit}"] = float(tflops) * 1e12
    return out

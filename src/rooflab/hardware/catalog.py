"""The nominal hardware catalog: datasheet roofs read from hardware/data/*.toml.

Each TOML file holds `[[device]]` entries (one per device, with its source URL). Values
there carry their unit in the key (`memory_gbps`, `[device.tflops]`); everything is
converted to SI base units here. CPU entries store the inputs of their peaks (cores,
clock, microarchitecture, memory channels) and the peaks are derived on load through
`cpu_nominal.cpu_nominal_roof`. Entries are validated on load; a bad entry raises
ParseError naming the file, the entry and the field.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any

from ..errors import ParseError
from ..model.ceiling import Ceiling, Roof
from ..model.comm_link import link_problem
from ..model.dies import note as dies_note
from .catalog_fields import _APPLE, _CPU, _HOST_LINK, _check_types, _fail, _peaks, _where
from .cpu_arch import ARCHS
from .cpu_nominal import catalog_clock, cpu_nominal_roof
from .names import DeviceIndex

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

GPU_OVERHEAD_S = 5e-6
GPU_OVERHEAD_REASON = ("nominal: a typical kernel-launch cost (seed 004: 5-10 us per "
                       "launch); measure it with `rooflab probe`")
_DDR_CHANNEL_BYTES = 8  # one 64-bit DDR channel moves 8 bytes per transfer

# PCIe per lane and direction: transfer rate (GT/s) x line-code efficiency / 8 bits.
# Gen3-5 use 128b/130b; Gen6 (PAM4, FLIT mode) carries 242 payload bytes in 256 (PCI-SIG).
PCIE_LANE = {3: (8, 128 / 130), 4: (16, 128 / 130), 5: (32, 128 / 130), 6: (64, 242 / 256)}


@dataclass(frozen=True)
class Device:
    """One catalog entry, in SI units. `roof` holds dense peaks only; `sparse` is apart."""

    name: str
    vendor: str
    kind: str
    roof: Roof
    memory_bytes: float
    memory_bytes_per_s: float
    l2_bytes: float | None
    interconnect: str
    interconnect_bytes_per_s: float
    tdp_w: float | None
    sparse: Mapping[str, float]   # precision -> FLOP/s with 2:4 sparsity (tensor units)
    source: str
    aliases: tuple[str, ...] = ()
    llc_bytes: float | None = None
    notes: tuple[str, ...] = ()
    inputs: Mapping[str, Any] = field(default_factory=dict)  # CPU peak inputs, as stored
    file: str = ""
    compute_capability: str | None = None   # NVIDIA GPUs: "9.0"
    host_link: str | None = None            # the link to the host CPU: "PCIe Gen5 x16"
    # GPUs: the streaming multiprocessors the product has (torch's multi_processor_count):
    # tells apart modules torch names alike (Jetson AGX Orin 64GB: 16, 32GB: 14); None
    # where the catalog does not say.
    sms: int | None = None
    # the capacity the driver reports (nvidia-smi's total, MiB), where the catalog has it:
    # memory_gb is the marketing figure in decimal GB (H100: 80e9 B; nvidia-smi 81,559 MiB
    # = 85.52e9 B), review 18d D
    usable_memory_bytes: float | None = None
    # how many devices software sees in one package: the MI250X's two dies are two GPUs,
    # each with half the memory, bandwidth and compute; the roof's note says it
    # (model/dies.py), so `rooflab choose` and rank() take one die, what one process runs on.
    # Read back only through that note (dies.software_devices(roof)), one rule everywhere
    # (review s20 x2 F7): a Roof, and a roof file saved from it, carries notes, not this
    software_devices: int = 1
    # xGMI topology where GPUs join without a switch (model/comm_link.xgmi_ring_link reads
    # it): link_gbps (one link, both directions), mesh (peers, one link each), die_links
    links: Mapping[str, float] = field(default_factory=dict)

    @property
    def memory_is_platform_max(self) -> bool:
        """Whether memory_gb is the most the platform takes, not what a device has: a CPU's
        is Intel ARK's / AMD's "max memory" per socket (4-6 TB on a Xeon 8480+ or EPYC
        9654), while a server has the DIMMs someone installed (review 19d N1)."""
        return self.kind == "cpu"

    @property
    def fit_memory_bytes(self) -> float | None:
        """The memory a model fit is judged against: the catalog's figure, None where it
        is a platform maximum (memory_is_platform_max: the installed RAM is not known)."""
        return None if self.memory_is_platform_max else self.memory_bytes

    @property
    def host_link_ceiling(self) -> Ceiling | None:
        """The host link's bandwidth per direction (level "PCIe"), derived from its
        generation and width: what a pinned host<->device copy can reach at most."""
        if self.host_link is None:
            return None
        return pcie_ceiling(self.host_link, self.source)

    @property
    def unified_memory(self) -> bool:
        """Whether the GPU shares its DRAM with the CPU (Jetson, Apple): the catalog's
        memory is then the whole system's, the OS's share included, and no link joins one
        device to the next (the catalog's "interconnect" is that memory)."""
        return self.interconnect.lower().startswith("unified memory")

    @property
    def top_compute(self) -> Ceiling:
        """The fastest ceiling of any precision, integer included (Roof.top_compute)."""
        return self.roof.top_compute

    def ridge(self, precision: str | None = None, unit: str | None = None,
              level: str = "DRAM") -> float:
        """P / B in FLOP/byte for a precision (None: the top float peak, as
        rooflab.ridge(roof): Roof.top_float_compute)."""
        peak = (self.roof.top_float_compute() if precision is None
                else self.roof.find_compute(precision, unit))
        if peak is None:
            raise KeyError(f"{self.name} has no {precision} {unit or ''} ceiling".strip())
        return peak.value / self.roof.bandwidth(level).value


def pcie_ceiling(link: str, source: str) -> Ceiling:
    """'PCIe Gen5 x16' -> 63.0 GB/s per direction (derived from the PCIe generation)."""
    m = _HOST_LINK.match(link)
    if m is None:
        raise ValueError(f"host link must read 'PCIe Gen<3-6> x<1|2|4|8|16>'; got '{link}'")
    gen, lanes = int(m.group(1)), int(m.group(2))
    rate, code = PCIE_LANE[gen]
    coding = "128/130" if gen < 6 else "242/256"
    return Ceiling(value=lanes * rate * 1e9 * code / 8, level="PCIe", provenance="derived",
                   source=source,
                   method=f"{link}: {lanes} lanes x {rate} GT/s x {coding} / 8 bits, per "
                          f"direction")


def _cpu_roof(fname: str, where: str, raw: Mapping[str, Any]) -> tuple[Roof, float]:
    """Derived compute peaks (cpu_arch) and DRAM = channels x MT/s x 8 bytes, or the
    vendor's memory_gbps where the memory is soldered LPDDR (Grace, Apple M): its channels
    are 16 bits wide and the vendor publishes the bandwidth, not a DIMM configuration."""
    if "tflops" in raw or "sparse_tflops" in raw:
        raise _fail(fname, where, "a cpu entry derives its peaks; remove [device.tflops] "
                    "and give microarch, cores and base_ghz")
    dimms = ("memory_channels", "memory_mts")
    needed = ("microarch", "cores", "base_ghz") + (() if "memory_gbps" in raw else dimms)
    for key in needed:
        if key not in raw:
            raise _fail(fname, where, f"a cpu entry needs '{key}' (or memory_gbps for "
                        f"the memory)" if key in dimms else f"a cpu entry needs '{key}'")
    for key in ("microarch", "e_microarch"):
        if key in raw and raw[key] not in ARCHS:
            raise _fail(fname, where, f"unknown {key} '{raw[key]}'; known: {', '.join(ARCHS)}")
    if "memory_gbps" in raw and any(key in raw for key in dimms):
        raise _fail(fname, where, "give either memory_gbps or memory_channels and "
                    "memory_mts, not both")
    if "memory_gbps" in raw:
        dram = raw["memory_gbps"] * 1e9
    else:
        dram = raw["memory_channels"] * raw["memory_mts"] * 1e6 * _DDR_CHANNEL_BYTES
    ghz, clock = catalog_clock(raw, raw["vendor"])   # all-core boost where published
    roof = cpu_nominal_roof(raw["name"], raw["cores"], ghz, ARCHS[raw["microarch"]], dram,
                            raw["source"], clock=clock)
    if "e_microarch" in raw:
        if "e_cores" not in raw or "e_base_ghz" not in raw:
            raise _fail(fname, where, "a hybrid cpu entry needs e_cores and e_base_ghz")
        e_roof = cpu_nominal_roof(raw["name"], raw["e_cores"], float(raw["e_base_ghz"]),
                                  ARCHS[raw["e_microarch"]], None, raw["source"],
                                  clock="base clock")
        roof = _add_compute(roof, e_roof)
    if "memory_gbps" in raw:
        dram_ceiling = Ceiling(value=dram, level="DRAM", provenance="nominal",
                               source=raw["source"])
    else:
        dram_ceiling = Ceiling(value=dram, level="DRAM", provenance="derived",
                               source=raw["source"],
                               method=f"{raw['memory_channels']} channels x "
                                      f"{raw['memory_mts']:g} MT/s x 8 bytes")
    return Roof(name=roof.name, kind="nominal", compute=roof.compute, memory=(dram_ceiling,),
                source=roof.source, notes=()), dram


def _add_compute(p: Roof, e: Roof) -> Roof:
    """P-core + E-core peaks of a hybrid CPU, per (precision, unit) both have."""
    e_by = {c.label: c for c in e.compute}
    merged = tuple(
        Ceiling(value=c.value + e_by[c.label].value, precision=c.precision, unit=c.unit,
                provenance="derived", source=c.source,
                method=f"P-cores: {c.method} + E-cores: {e_by[c.label].method}")
        for c in p.compute if c.label in e_by)
    return Roof(name=p.name, kind=p.kind, compute=merged, memory=p.memory, source=p.source)


def _apple_peaks(fname: str, where: str, raw: Mapping[str, Any]) -> dict[str, float]:
    if "gpu_cores" not in raw or "gpu_ghz" not in raw:
        raise _fail(fname, where, "an entry without [device.tflops] needs gpu_cores and "
                    "gpu_ghz (or a microarch for a cpu)")
    fp32 = raw["gpu_cores"] * 128 * 2 * round(raw["gpu_ghz"] * 1e9)   # whole hertz: no float noise
    return {"fp32 vector": fp32, "fp16 vector": fp32}


def _gpu_roof(fname: str, where: str, raw: Mapping[str, Any]) -> Roof:
    derived = "tflops" not in raw
    peaks = (_apple_peaks(fname, where, raw) if derived
             else _peaks(fname, where, raw["tflops"], "tflops"))
    if not peaks:
        raise _fail(fname, where, "[device.tflops] is empty")
    if "memory_gbps" not in raw:
        raise _fail(fname, where, "missing field 'memory_gbps'")
    method = (f"{raw.get('gpu_cores')} GPU cores x 128 ALUs x 2 x {raw.get('gpu_ghz')} GHz"
              if derived else "")
    compute = tuple(
        Ceiling(value=v, precision=k.split()[0], unit=k.split()[1],
                provenance="derived" if derived else "nominal", source=raw["source"],
                method=method)
        for k, v in peaks.items())
    memory = [Ceiling(value=raw["memory_gbps"] * 1e9, level="DRAM", source=raw["source"])]
    if "llc_gbps" in raw:
        level = "L2" if "l2_mib" not in raw else "L3"
        memory.append(Ceiling(value=raw["llc_gbps"] * 1e9, level=level, source=raw["source"]))
    if "overhead_us" in raw:
        # / 1e6, not * 1e-6: 10 us is 1e-05 s, not 9.999999999999999e-06
        overhead, reason = raw["overhead_us"] / 1e6, raw.get("overhead_reason", "nominal")
    else:
        overhead, reason = GPU_OVERHEAD_S, GPU_OVERHEAD_REASON
    return Roof(name=raw["name"], kind="nominal", compute=compute, memory=tuple(memory),
                overhead_s=overhead, overhead_source=reason, source=raw["source"])


def _device(fname: str, index: int, raw: Mapping[str, Any]) -> Device:
    where = _where(index, raw)
    _check_types(fname, where, raw)
    if raw["kind"] == "cpu":
        roof, dram = _cpu_roof(fname, where, raw)
        inputs = {k: raw[k] for k in _CPU if k in raw}
    else:
        roof = _gpu_roof(fname, where, raw)
        dram = raw["memory_gbps"] * 1e9
        inputs = {k: raw[k] for k in _APPLE if k in raw}
    sparse = {}
    # Structured sparsity (2:4) exists only on tensor/matrix units: keyed by precision.
    for label, value in _peaks(fname, where, raw.get("sparse_tflops", {}),
                               "sparse_tflops").items():
        prec, unit = label.split()
        dense = roof.find_compute(prec, unit)
        if unit != "tensor":
            raise _fail(fname, where, f"[sparse_tflops] {prec}_{unit}: sparse figures are "
                        "for tensor units only")
        if dense is not None and value < dense.value:
            raise _fail(fname, where, f"sparse {label} ({value:g}) is below the dense figure")
        sparse[prec] = value
    if bad := link_problem(raw.get("links", {})):
        raise _fail(fname, where, bad)
    mib = 2**20
    notes = tuple(raw.get("notes", ())) + roof.notes
    if raw.get("software_devices", 1) > 1:
        said = dies_note(raw["name"], raw["software_devices"])
        roof, notes = replace(roof, notes=(*roof.notes, said)), (*notes, said)
    return Device(
        name=raw["name"], vendor=raw["vendor"], kind=raw["kind"], roof=roof,
        memory_bytes=raw["memory_gb"] * 1e9, memory_bytes_per_s=dram,
        l2_bytes=raw["l2_mib"] * mib if "l2_mib" in raw else None,
        llc_bytes=(raw.get("llc_mib") or raw.get("l2_mib") or 0) * mib or None,
        interconnect=raw["interconnect"],
        interconnect_bytes_per_s=raw["interconnect_gbps"] * 1e9,
        tdp_w=float(raw["tdp_w"]) if "tdp_w" in raw else None, sparse=sparse,
        source=raw["source"], aliases=tuple(raw.get("aliases", ())),
        notes=notes, inputs=inputs, file=fname,
        software_devices=raw.get("software_devices", 1),
        compute_capability=raw.get("compute_capability"), host_link=raw.get("host_link"),
        sms=raw.get("sms"), links=dict(raw.get("links", {})),
        usable_memory_bytes=(raw["usable_memory_mib"] * mib if "usable_memory_mib" in raw
                             else None))


def parse_catalog_text(text: str, fname: str) -> tuple[Device, ...]:
    """Parse one catalog file's text (used on load and by tests with bad entries)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ParseError(f"invalid TOML: {exc}", path=f"rooflab/hardware/data/{fname}") from None
    entries = data.get("device", [])
    if not isinstance(entries, list):
        raise _fail(fname, "file", "devices must be [[device]] tables")
    return tuple(_device(fname, i, raw) for i, raw in enumerate(entries))


@functools.cache
def _index() -> DeviceIndex:
    devices: list[Device] = []
    folder = resources.files("rooflab.hardware") / "data"
    for item in sorted(folder.iterdir(), key=lambda p: p.name):
        if item.name.endswith(".toml"):
            devices.extend(parse_catalog_text(item.read_text(encoding="utf-8"), item.name))
    seen: dict[str, str] = {}
    for d in devices:
        if d.name in seen:
            raise ParseError(f"device '{d.name}' is listed twice ({seen[d.name]} and {d.file})")
        seen[d.name] = d.file
    return DeviceIndex(tuple(devices))


# --- the public API -----------------------------------------------------------------------
def all_devices() -> tuple[Device, ...]:
    """Every catalog entry, in file order."""
    return _index().devices


def lookup(name: str) -> Device:
    """Forgiving lookup ('h200', 'H200-SXM', 'NVIDIA H200'); HardwareNotFound lists the closest."""
    return _index().lookup(name)


def lookup_roof(name: str) -> Roof:
    """The device's nominal roof (dense peaks only)."""
    return lookup(name).roof


def match_device_name(text: str) -> Device | None:
    """A device for a driver/profiler name ('NVIDIA GeForce RTX 4090', 'Tesla T4'), or None."""
    return _index().match(text)


def is_unified_memory(text: str) -> bool:
    """Whether a device name (a driver's, a roof's, a typed one) matches a catalog device
    whose GPU shares DRAM with the CPU (a Jetson module, an Apple chip): one device, no
    PCIe host link and no link to a second one for --tp or --pp."""
    return bool(getattr(match_device_name(text), "unified_memory", False))


def devices_with_cc(cc: str) -> tuple[Device, ...]:
    """The catalog's GPUs of one compute capability ("8.9"): what a profile recorded on
    such a GPU can be judged against."""
    return tuple(d for d in all_devices() if d.compute_capability == cc)


# --- plain-data views (the CLI and other verbs print these) -------------------------------
def ridges(device: Device, level: str = "DRAM") -> tuple[dict[str, Any], ...]:
    """Ridge point P / B (FLOP/byte) of every dense compute ceiling against one memory level."""
    return roof_ridges(device.roof, level)


def roof_ridges(roof: Roof, level: str = "DRAM") -> tuple[dict[str, Any], ...]:
    """ridges of any roof (a catalog entry's, or a file's that `specs` prints beside them):
    one row per compute ceiling, the keys docs/specs.md names. InputError where the roof
    has no `level` ceiling."""
    bw = roof.bandwidth(level).value
    return tuple({"precision": c.precision, "unit": c.unit, "level": level,
                  "flop_per_s": c.value, "bytes_per_s": bw, "ridge": c.value / bw}
                 for c in roof.compute)


def top_float_compute(device: Device) -> Ceiling:
    """The fastest dense floating-point ceiling (integer TOPS are not FLOP/s):
    Roof.top_float_compute, the one the chart and rooflab.ridge(roof) use."""
    return device.roof.top_float_compute()


def device_to_dict(device: Device) -> dict[str, Any]:
    """The device's identity and datasheet numbers in SI units (the roof goes beside it)."""
    return {
        "name": device.name, "vendor": device.vendor, "kind": device.kind,
        "aliases": list(device.aliases), "source": device.source,
        "memory_bytes": device.memory_bytes, "memory_bytes_per_s": device.memory_bytes_per_s,
        "l2_bytes": device.l2_bytes, "llc_bytes": device.llc_bytes,
        "interconnect": device.interconnect,
        "interconnect_bytes_per_s": device.interconnect_bytes_per_s,
        "tdp_w": device.tdp_w, "compute_capability": device.compute_capability,
        "host_link": device.host_link, "sms": device.sms,
        "software_devices": device.software_devices,
        "host_link_bytes_per_s": (device.host_link_ceiling.value
                                  if device.host_link_ceiling else None),
        "sparse": [{"precision": k, "unit": "tensor", "flop_per_s": v}
                   for k, v in device.sparse.items()],
        "ridges": list(ridges(device)),
        "inputs": dict(device.inputs), "notes": list(device.notes),
    }

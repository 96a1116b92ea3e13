"""ERT's roofline.json read as rooflab roofs (Empirical Roofline Toolkit, e.g.
ebugger/Empirical-Roofline-Toolkit, Empirical_Roofline_Tool-1.1.0/Results/
roofline.edison.nersc.gov.01.json): `empirical.gbytes.data` / `empirical.gflops.data` are
[name, GB/s or GFLOP/s] pairs, the measured roof; `spec` has the same layout for the
ERT_SPEC_* figures of the config, the nominal roof. `--on ert.json` reads it as it reads a
profile (hardware.resolve). Split from import_roofs, which still exports these names.

GB is decimal (1e9 bytes), as ERT prints it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ..errors import ParseError
from ..model.ceiling import Ceiling, Roof
from ..units import LEVELS

# ERT's level names that are rooflab's DRAM (KNL's MCDRAM; the GPU builds' HBM is read by
# model.schema.level_name already)
_ERT_DRAM = ("MCDRAM", "MEM", "MEMORY", "HBM", "DRAM")
# a plateau ERT numbers past rooflab's L3 (L4, L5 ...): _extra_plateaus
_EXTRA_PLATEAU = re.compile(r"L([4-9]|[1-9]\d+)")
# ERT_PRECISION in the config (later ERT builds); 1.1.0's default build is double
_ERT_PRECISION = {"FP64": "fp64", "DOUBLE": "fp64", "FP32": "fp32", "SINGLE": "fp32",
                  "FP16": "fp16", "HALF": "fp16"}


# ---------------------------------------------------------------------------- ERT


def is_ert(data: object) -> bool:
    """Whether a parsed JSON document is ERT's roofline.json."""
    emp = data.get("empirical") if isinstance(data, Mapping) else None
    return isinstance(emp, Mapping) and ("gbytes" in emp or "gflops" in emp)


def ert_roofs(data: Mapping[str, Any], path: str) -> tuple[Roof, ...]:
    """The measured roof (`empirical`) and, where the config gave ERT_SPEC_* figures with a
    compute peak, the nominal one (`spec`). ParseError names the file and the field."""
    emp = data["empirical"]
    meta = emp.get("metadata") if isinstance(emp.get("metadata"), Mapping) else {}
    config = meta.get("CONFIG") if isinstance(meta.get("CONFIG"), Mapping) else {}
    precision = _ert_precision(config, path)
    version = str(meta.get("ERT_VERSION") or "?")
    host = _ert_host(meta)
    memory, dropped = _ert_memory(emp, "empirical", path, "measured", version, meta)
    compute = _ert_compute(emp, "empirical", path, "measured", version, meta, precision)
    for what, got, key in (("bandwidth", memory, "gbytes"), ("compute", compute, "gflops")):
        if not got:
            raise ParseError(f"empirical.{key}.data: no {what} figure; ERT's roofline.json "
                             f"lists [name, value] pairs there (rerun ERT, or make a roof "
                             f"from numbers: `rooflab specs import --dram 83GB/s --fp64 "
                             f"355GFLOP/s -o roof.json`)", path=path)
    measured = Roof(name=f"{host} ERT", kind="measured", compute=compute, memory=memory,
                    source=f"ERT {version} roofline.json ({path})",
                    notes=("ERT's empirical roof: for each ceiling the best of its runs over "
                           "processes x threads and FLOPs per element (the method names the "
                           f"winning run); FLOP/s read as "
                           f"{_precision_said(emp, path, precision, config)}", *dropped))
    spec = data.get("spec")
    if not isinstance(spec, Mapping):
        return (measured,)
    spec_memory, spec_dropped = _ert_memory(spec, "spec", path, "nominal", version, {})
    nominal = Roof(name=f"{host} ERT spec", kind="nominal",
                   compute=_ert_compute(spec, "spec", path, "nominal", version, {}, precision),
                   memory=spec_memory, source=f"ERT {version} config ERT_SPEC_* ({path})",
                   notes=spec_dropped)
    # a config without ERT_SPEC_GFLOPS has no peak to draw a nominal roof by
    return (measured, nominal) if nominal.compute else (measured,)


def _ert_host(meta: Mapping[str, Any]) -> str:
    """HOSTNAME is a string in some results and [name, aliases, addresses] in others."""
    host = meta.get("HOSTNAME")
    if isinstance(host, list) and host:
        host = host[0]
    return str(host) if isinstance(host, str) and host.strip() else "ERT machine"


def _ert_precision(config: Mapping[str, Any], path: str) -> str:
    raw = config.get("ERT_PRECISION")
    if raw is None:
        return "fp64"
    text = str(raw[0] if isinstance(raw, list) and raw else raw).strip().upper()
    if text not in _ERT_PRECISION:
        raise ParseError(f"empirical.metadata.CONFIG.ERT_PRECISION: '{text}' is none of "
                         f"{', '.join(_ERT_PRECISION)}", path=path)
    return _ERT_PRECISION[text]


def _ert_pairs(section: Mapping[str, Any], where: str, key: str,
               path: str) -> list[tuple[int, str, float]]:
    """(index, name, value) of `section[key].data`; [] where the section has none."""
    block = section.get(key)
    if block is None:
        return []
    data = block.get("data") if isinstance(block, Mapping) else None
    if not isinstance(data, list):
        raise ParseError(f"{where}.{key}.data: expected a list of [name, value] pairs; got "
                         f"{type(data).__name__}", path=path)
    pairs = []
    for i, pair in enumerate(data):
        ok = (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)
              and isinstance(pair[1], (int, float)) and not isinstance(pair[1], bool)
              and 0 < pair[1] < math.inf)   # Infinity: a ceiling error naming no file (s35 D)
        if not ok:
            raise ParseError(f"{where}.{key}.data[{i}]: expected [name, positive number] such "
                             f"as [\"DRAM\", 83.0]; got {pair!r:.80}", path=path)
        pairs.append((i, pair[0], float(pair[1])))
    return pairs


def _ert_run(emp_block: Mapping[str, Any], meta: Mapping[str, Any], version: str) -> str:
    """'ERT 1.1.0, 4 procs x 6 threads, 1 FLOP/element': the winning run, from the
    section's metadata (Edison's results) or the empirical one (later results)."""
    own = emp_block.get("metadata") if isinstance(emp_block, Mapping) else None
    own = own if isinstance(own, Mapping) else {}

    def pick(key):
        return own.get(key, meta.get(key))

    procs, threads, flops = pick("MPI_PROCS"), pick("OPENMP_THREADS"), pick("FLOPS")
    text = f"ERT {version}"
    if procs is not None and threads is not None:
        text += f", {procs} procs x {threads} threads"
    elif threads is not None or procs is not None:
        text += f", {threads} threads" if threads is not None else f", {procs} procs"
    if flops is not None:
        text += f", {flops} FLOP/element"
    return text


def _ert_memory(section, where, path, provenance, version,
                meta) -> tuple[tuple[Ceiling, ...], tuple[str, ...]]:
    """The bandwidth ceilings, one per level, and a note for each figure not used.

    HBM, MCDRAM, MEM and DRAM all read as rooflab's DRAM, and a KNL run measures MCDRAM
    beside DDR: where two of them are in one file, the one named DRAM (the level past
    every cache, which a working set larger than MCDRAM streams from) is kept and the
    other said in a note, in --on and `specs import` alike (review 15v F-f: the 900 GB/s
    MCDRAM judged a 400 MB stream). Two figures of one level with neither named so is a
    ParseError naming both."""
    found: dict[str, tuple[int, str, float]] = {}
    dropped: dict[str, str] = {}   # level -> the note on the figure not used for it
    extra: list[tuple[int, str, float]] = []   # ERT's L4, L5 ...: plateaus past L3
    for i, name, gbs in _ert_pairs(section, where, "gbytes", path):
        upper = name.strip().upper()
        level = "DRAM" if upper in _ERT_DRAM else upper
        if _EXTRA_PLATEAU.fullmatch(level):
            extra.append((i, name.strip(), gbs))
            continue
        if level not in LEVELS:
            raise ParseError(f"{where}.gbytes.data[{i}]: level '{name}' is none of "
                             f"{', '.join(LEVELS)} (or HBM/MCDRAM for DRAM); rename it to "
                             f"the level it measured, or remove [{name!r}, {gbs:g}] from "
                             f"{where}.gbytes.data", path=path)
        if level in found:
            keep, lost = _ert_keep(level, found[level], (i, name, gbs), where, path)
            dropped[level] = (f"{lost[1]} {lost[2]:g} GB/s ({where}.gbytes.data[{lost[0]}]) "
                              f"not used as {level}: the figure named '{keep[1]}' is (the "
                              f"memory past every cache)")
            found[level] = keep
        else:
            found[level] = (i, name, gbs)
    if extra and not found:
        i, name, gbs = extra[0]
        raise ParseError(f"{where}.gbytes.data[{i}]: level '{name}' is none of "
                         f"{', '.join(LEVELS)}, and no L1-L3 or DRAM figure is beside it "
                         f"(ERT names its plateaus L1 .. Ln, the last DRAM); rename it to "
                         f"the level it measured, e.g. [\"DRAM\", {gbs:g}]", path=path)
    extra_note = _extra_plateaus(extra, where)
    # the extra plateaus sit between L3 and DRAM: said on DRAM's ceiling (else the outermost
    # level kept), as `specs import` saves methods, not notes
    beside = "DRAM" if "DRAM" in found else max(found, key=LEVELS.index, default="")
    if extra_note and beside:
        dropped[beside] = f"{dropped[beside]}; {extra_note}" if beside in dropped else extra_note
    ceilings = []
    for level, (_i, name, gbs) in found.items():
        method = _method(where, "gbytes", name, gbs, "GB/s", section, meta, version)
        # the kept ceiling's method says it too: `specs import` saves methods, not notes
        ceilings.append(Ceiling(value=gbs * 1e9, level=level, provenance=provenance,
                                source=f"ERT {version} roofline.json",
                                method=method + (f"; {dropped[level]}" if level in dropped
                                                 else "")))
    return tuple(ceilings), tuple(dropped.values())


def _extra_plateaus(extra: list[tuple[int, str, float]], where: str) -> str:
    """The note on ERT's plateaus past L3 (L4, L5 ...), '' when there are none. ERT does
    not name caches: Scripts/summary.py counts the bandwidth plateaus of its sweep and names
    them L1 .. Ln, the last DRAM, so a noisy sweep (or an L4/eDRAM) gives an L4; a real
    Results.p100.01 sum reads 176.44 L1, 102.18 L2, 45.70 L3, 22.90 L4, 18.30 DRAM. rooflab's
    levels are L1 L2 L3 DRAM, so L1-L3 keep ERT's names and the rest are said, not used
    (the file was refused whole before: review s20 r6 F1)."""
    if not extra:
        return ""
    said = ", ".join(f"{name} {gbs:g} GB/s ({where}.gbytes.data[{i}])" for i, name, gbs in extra)
    return (f"{said} not used: ERT names the bandwidth plateaus it finds L1, L2, ... in "
            f"order, the last DRAM (they count plateaus, not the machine's caches), and "
            f"rooflab's levels are {', '.join(LEVELS)}")


def _ert_keep(level, first, second, where, path):
    """(kept, not used) of two figures read as one level: the one literally named it is
    kept; where neither or both are, a ParseError naming both."""
    named = [f for f in (first, second) if f[1].strip().upper() == level]
    if len(named) == 1:
        return named[0], (second if named[0] is first else first)
    raise ParseError(f"{where}.gbytes.data: both '{first[1]}' (data[{first[0]}]) and "
                     f"'{second[1]}' (data[{second[0]}]) read as {level}; keep one (name the "
                     f"memory past every cache DRAM)", path=path)


def _ert_compute(section, where, path, provenance, version, meta,
                 precision) -> tuple[Ceiling, ...]:
    return tuple(Ceiling(value=gf * 1e9, precision=_named_precision(name, precision),
                         unit="vector", provenance=provenance,
                         source=f"ERT {version} roofline.json",
                         method=_method(where, "gflops", name, gf, "GFLOP/s", section,
                                        meta, version))
                 for _i, name, gf in _ert_pairs(section, where, "gflops", path))


def _method(where, key, name, value, unit, section, meta, version) -> str:
    if where == "spec":
        config_key = "ERT_SPEC_GFLOPS" if key == "gflops" else f"ERT_SPEC_GBYTES_{name}"
        return f"ERT config {config_key} = {value:g} {unit} (datasheet figure typed into ERT)"
    return f"{_ert_run(section.get(key), meta, version)} ({where}.{key}: {name} {value:g} {unit})"


def _precision_said(section, path: str, default: str, config) -> str:
    """'fp64 (ERT's default build, double)', 'fp32 (the figure's name 'FP32 GFLOPs')': the
    precision of each compute figure and why, as its ceiling has it (review 15v F-g: the
    note said fp64 beside an fp32 ceiling)."""
    why = ("ERT_PRECISION in the config" if config.get("ERT_PRECISION") is not None
           else "ERT's default build, double")
    said = []
    for _i, name, _gf in _ert_pairs(section, "empirical", "gflops", path):
        got = _named_precision(name, "")
        said.append(f"{got} (the figure's name '{name}')" if got else f"{default} ({why})")
    return ", ".join(dict.fromkeys(said)) or f"{default} ({why})"


def _named_precision(name: str, default: str) -> str:
    """'GFLOPs' is the build's precision; a name that says one ('FP32 GFLOPs') is that one."""
    low = name.lower()
    for word, precision in (("fp64", "fp64"), ("double", "fp64"), ("fp32", "fp32"),
                            ("single", "fp32"), ("fp16", "fp16"), ("half", "fp16")):
        if word in low:
            return precision
    return default

"""Roofs other tools measured, read as rooflab roofs (review 14d K).

- ERT's roofline.json (Empirical Roofline Toolkit, e.g. ebugger/Empirical-Roofline-Toolkit,
  Empirical_Roofline_Tool-1.1.0/Results/roofline.edison.nersc.gov.01.json):
  `empirical.gbytes.data` / `empirical.gflops.data` are [name, GB/s or GFLOP/s] pairs, the
  measured roof; `spec` has the same layout for the ERT_SPEC_* figures of the config, the
  nominal roof. `--on ert.json` reads it as it reads a profile (hardware.resolve).
- likwid-bench's summary (RRZE-HPC/likwid, bench/likwid-bench.c): `Test: NAME`, `Using N
  threads`, `Size (Byte):` (`Size:` before 5.0), `Size per thread:`, `MFlops/s:`, `MByte/s:`
  for each run; `rooflab specs import run.txt@DRAM` makes its ceilings.
- numbers a user types (`specs import --dram 83GB/s --fp64 355GFLOP/s`), nominal unless
  the user says they measured them.

GB and MB are decimal (1e9, 1e6 bytes), as both tools print them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, ParseError
from ..model.ceiling import Ceiling, Roof
from ..units import LEVELS, parse_rate, parse_size

# ERT's level names that are rooflab's DRAM (KNL's MCDRAM; the GPU builds' HBM is read by
# model.schema.level_name already)
_ERT_DRAM = ("MCDRAM", "MEM", "MEMORY", "HBM", "DRAM")
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
              and pair[1] > 0)
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
    for i, name, gbs in _ert_pairs(section, where, "gbytes", path):
        upper = name.strip().upper()
        level = "DRAM" if upper in _ERT_DRAM else upper
        if level not in LEVELS:
            raise ParseError(f"{where}.gbytes.data[{i}]: level '{name}' is none of "
                             f"{', '.join(LEVELS)} (or HBM/MCDRAM for DRAM)", path=path)
        if level in found:
            keep, lost = _ert_keep(level, found[level], (i, name, gbs), where, path)
            dropped[level] = (f"{lost[1]} {lost[2]:g} GB/s ({where}.gbytes.data[{lost[0]}]) "
                              f"not used as {level}: the figure named '{keep[1]}' is (the "
                              f"memory past every cache)")
            found[level] = keep
        else:
            found[level] = (i, name, gbs)
    ceilings = []
    for level, (_i, name, gbs) in found.items():
        method = _method(where, "gbytes", name, gbs, "GB/s", section, meta, version)
        # the kept ceiling's method says it too: `specs import` saves methods, not notes
        ceilings.append(Ceiling(value=gbs * 1e9, level=level, provenance=provenance,
                                source=f"ERT {version} roofline.json",
                                method=method + (f"; {dropped[level]}" if level in dropped
                                                 else "")))
    return tuple(ceilings), tuple(dropped.values())


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


# ---------------------------------------------------------------------- likwid-bench


@dataclass(frozen=True)
class BenchRun:
    """One likwid-bench run's summary (bench/likwid-bench.c prints it after each test)."""

    kernel: str
    line: int                       # the `Test:` line, 1-based
    threads: int | None = None
    size_bytes: float | None = None          # `Size (Byte):` (all threads, all streams)
    size_per_thread: float | None = None
    mflops: float | None = None
    mbytes: float | None = None

    @property
    def is_peakflops(self) -> bool:
        """likwid's peakflops* kernels measure the FLOP peak (an L1-resident array): their
        MFlops/s is a compute ceiling; any other kernel's is its loop's, not a peak."""
        return self.kernel.lower().startswith("peakflops")


_FIELD = re.compile(r"^\s*(Test|Using|Size \(Byte\)|Size per thread|Size|MFlops/s|MByte/s)"
                    r"\s*:?\s*(.*?)\s*$")


def is_likwid_bench(text: str) -> bool:
    return "MByte/s:" in text and re.search(r"^\s*Test:", text, re.M) is not None


def parse_likwid_bench(text: str, path: str) -> list[BenchRun]:
    """Every run in a likwid-bench output (several runs may be concatenated)."""
    runs: list[dict] = []
    for n, line in enumerate(text.splitlines(), 1):
        m = _FIELD.match(line)
        if not m:
            continue
        key, value = m.groups()
        if key == "Test":
            runs.append({"kernel": value, "line": n})
        elif not runs:
            continue
        elif key == "Using":
            t = re.match(r"(\d+) threads?$", value)
            if t:
                runs[-1]["threads"] = int(t[1])
        else:
            field = {"Size (Byte)": "size_bytes", "Size": "size_bytes",
                     "Size per thread": "size_per_thread", "MFlops/s": "mflops",
                     "MByte/s": "mbytes"}[key]
            runs[-1][field] = _bench_number(value, key, path, n)
    if not runs or not any("mbytes" in r for r in runs):
        raise ParseError("no likwid-bench summary here (no 'Test:' and 'MByte/s:' lines); "
                         "give likwid-bench's output, e.g. `likwid-bench -t triad -w "
                         "S0:1GB > triad.txt`", path=path)
    for r in runs:
        if r.get("mbytes") is None and r.get("mflops") is None:
            raise ParseError(f"the run of '{r['kernel']}' has no 'MByte/s:' or 'MFlops/s:' "
                             f"line (cut short?)", path=path, line=r["line"])
    return [BenchRun(**r) for r in runs]


def _bench_number(value: str, key: str, path: str, line: int) -> float:
    try:
        got = float(value.split()[0])
    except (ValueError, IndexError):
        got = float("nan")
    if not got >= 0:
        raise ParseError(f"'{key}:' should be a number; got '{value}'", path=path, line=line)
    return got


def bench_ceilings(runs: Sequence[BenchRun], level: str | None, path: str,
                   caches: CacheSizes | None = None) -> list[Ceiling]:
    """The ceilings a likwid-bench file gives: each peakflops* run a compute ceiling
    (fp32 for the _sp kernels, else fp64), each other run a bandwidth at `level` (the cache
    or memory its working set sits in: the file does not say). Several runs of one ceiling
    keep the best, the others as samples. With `caches`, each bandwidth ceiling whose
    working set does not sit in `level` carries a warning (working_set_warning)."""
    found: dict[tuple, list[tuple[float, BenchRun]]] = {}
    for r in runs:
        if r.is_peakflops:
            if not r.mflops:
                raise ParseError(f"the '{r.kernel}' run reports no MFlops/s", path=path,
                                 line=r.line)
            precision = "fp32" if "_sp" in r.kernel.lower() else "fp64"
            found.setdefault(("compute", precision), []).append((r.mflops * 1e6, r))
            continue
        if level is None:
            raise InputError(f"{path}: the '{r.kernel}' run (line {r.line}) measured a "
                             f"bandwidth at a working set of {_size(r)}, and likwid-bench "
                             f"does not say which cache or memory that is; name it: "
                             f"{path}@L1, @L2, @L3 or @DRAM")
        if not r.mbytes:
            raise ParseError(f"the '{r.kernel}' run reports no MByte/s", path=path, line=r.line)
        found.setdefault(("memory", level), []).append((r.mbytes * 1e6, r))
    return [_bench_ceiling(kind, key, got, path, caches)
            for (kind, key), got in found.items()]


def _bench_ceiling(kind: str, key: str, got, path: str,
                   caches: CacheSizes | None = None) -> Ceiling:
    value, best = max(got, key=lambda vr: vr[0])
    threads = f"{best.threads} threads" if best.threads else "threads not given"
    what = ("MFlops/s as printed" if kind == "compute" else
            f"MByte/s as printed: {bytes_counted(best.kernel)}")
    others = f", the best of {len(got)} runs" if len(got) > 1 else ""
    method = (f"likwid-bench -t {best.kernel}, {threads}, working set {_size(best)}"
              f"{others} ({path}, line {best.line}): {what}")
    common = dict(value=value, provenance="measured", source=f"likwid-bench ({path})",
                  method=method, samples=tuple(v for v, _ in got) if len(got) > 1 else ())
    if kind == "compute":
        return Ceiling(precision=key, unit="vector", **common)
    warning = working_set_warning(best, key, caches, path) if caches else ""
    return Ceiling(level=key, warnings=(warning,) if warning else (), **common)


# likwid-bench kernels (`likwid-bench -l NAME`) whose store goes to a line the loop did not
# load: the CPU reads that line first (write-allocate), which likwid's bytes leave out.
# (bytes counted, bytes moved) per fp64 element: one 8 B read more per store.
_WRITE_ALLOCATED = {"copy": (16, 24), "store": (8, 16), "stream": (24, 32),
                    "triad": (32, 40)}
_NOTHING_STORED = ("load", "sum", "ddot", "peakflops")
_STORE_TO_LOADED = ("update", "daxpy")


def bytes_counted(kernel: str) -> str:
    """Which bytes likwid-bench's MByte/s counts for `kernel`: real traffic (nothing
    stored, or stores to lines just loaded, or non-temporal stores) or the STREAM count
    without the write-allocate read. A roof from `load` reads 4/3 of one from `stream` on
    the same memory (review 16a A, L8), so the method says which it is."""
    name = kernel.strip().lower()
    base = name.split("_")[0]
    if base in _NOTHING_STORED:
        return f"real bytes ({base} stores nothing, so no write-allocate)"
    if base in _STORE_TO_LOADED:
        return f"real bytes ({base} stores to the lines it loaded: no write-allocate)"
    if base in _WRITE_ALLOCATED and "_mem" in name:
        return (f"real bytes ({name} uses non-temporal stores: no write-allocate read)")
    if base in _WRITE_ALLOCATED:
        counted, moved = _WRITE_ALLOCATED[base]
        return (f"STREAM count, write-allocate not counted: {counted} of the {moved} B per "
                f"fp64 element the memory moves ({base}'s store reads its line first), "
                f"so real traffic is {moved / counted:.3g}x this")
    return ("the kernel's explicit loads + stores per update (likwid-bench -l KERNEL), "
            "write-allocate not counted")


@dataclass(frozen=True)
class CacheSizes:
    """The caches a likwid-bench run's working set is checked against: L1d and L2 per
    core, the last-level cache in all (every instance), and where the sizes come from."""

    l1: float | None = None
    l2: float | None = None
    llc: float | None = None
    source: str = ""


DRAM_FACTOR = 4   # STREAM's rule: each array, here the whole working set, >= 4x the LLC


def working_set_warning(run: BenchRun, level: str, caches: CacheSizes, path: str) -> str:
    """Why the run's working set does not sit in `level` by `caches`, '' when it does or
    the file gives no size. A 512 kB load run imported as DRAM (it sat in a 1 MiB L2)
    wrote a DRAM ceiling 1.5x too high without a word (review 16a L8)."""
    from ..units import si

    total = run.size_bytes
    if total is None:
        return ""
    per = run.size_per_thread or total / max(1, run.threads or 1)
    l1, l2, llc = caches.l1, caches.l2, caches.llc
    problem = ""
    if level == "L1" and l1 and per > l1:
        problem = f"{si(per, 'B')} per thread is more than L1d ({_binary(l1)} per core)"
    elif level in ("L2", "L3", "DRAM") and l1 and per <= l1:
        problem = f"{si(per, 'B')} per thread fits in L1d ({_binary(l1)} per core)"
    elif level == "L2" and l2 and per > l2:
        problem = f"{si(per, 'B')} per thread is more than L2 ({_binary(l2)} per core)"
    elif level in ("L3", "DRAM") and l2 and per <= l2:
        problem = f"{si(per, 'B')} per thread fits in L2 ({_binary(l2)} per core)"
    elif level == "L3" and llc and total > llc:
        problem = f"{si(total, 'B')} in all is more than the L3 ({_binary(llc)})"
    elif level == "DRAM" and llc and total < DRAM_FACTOR * llc:
        problem = (f"{si(total, 'B')} in all is {total / llc:.2g}x the last-level cache "
                   f"({_binary(llc)}); DRAM needs >= {DRAM_FACTOR}x it (STREAM's rule)")
    if not problem:
        return ""
    return (f"{path} (line {run.line}) imported as {level}: likwid-bench's working set "
            f"{problem}, by {caches.source}; the ceiling is likely another level's. Name "
            f"the level it sits in ({path}@L1/L2/L3/DRAM) or rerun likwid-bench with a "
            f"working set that fits {level}")


def _size(r: BenchRun) -> str:
    from ..units import si

    if r.size_bytes is None:
        return "not given"
    per = (f" ({si(r.size_per_thread, 'B')} per thread)"
           if r.size_per_thread and r.threads and r.threads > 1 else "")
    return f"{si(r.size_bytes, 'B')}{per}"


def _binary(b: float) -> str:
    """Cache sizes as the OS gives them (1 MiB, 48 KiB); working sets stay decimal, as
    likwid-bench prints them (512 kB)."""
    return f"{b / 2**20:.3g} MiB" if b >= 2**20 else f"{b / 2**10:.3g} KiB"


# --------------------------------------------------------------------- typed numbers

# a bare number below this is a unit left out (`--fp64 355` is 355 FLOP/s), not a machine
_SLOWEST = 1e6
_FLOP_SUFFIX = re.compile(r"\s*(flop/s|flops|flop/sec|op/s|ops)\s*$", re.I)


def parse_flop_rate(text: str, what: str) -> float:
    """'355GFLOP/s', '1.2TFLOPS', '3.55e11' (FLOP/s), '130TOP/s' (an integer peak: one
    operation per multiply or add, as FLOP are counted) -> per second. Raises InputError."""
    s = str(text).strip()
    head = _FLOP_SUFFIX.sub("", s)
    bad = not head or "/" in head or head.lower().endswith("b")
    try:
        value = float("nan") if bad else parse_size(head, what)
    except InputError:
        value = float("nan")
    if not value >= 1 or (head == s and value < _SLOWEST):
        raise InputError(f"{what} must be a compute rate such as 355GFLOP/s, 1.2TFLOP/s or "
                         f"3.55e11 (FLOP/s; an int8 peak also as 130TOP/s); got '{text}'")
    return value


def parse_bandwidth(text: str, what: str) -> float:
    """units.parse_rate, refusing a bare number below 1 MB/s (a unit left out)."""
    value = parse_rate(text, what)
    if value < _SLOWEST and not any(ch.isalpha() for ch in str(text).replace("e", "")):
        raise InputError(f"{what} {text} would be {value:g} bytes/s (a bare number is "
                         f"bytes/s); give the unit, e.g. {what} {text}GB/s")
    return value


# The precisions `specs import` types in, and the unit each takes without '@unit': a
# CPU's SIMD ('vector') for those a CPU computes, 'tensor' for tf32 and fp8, which only
# matrix units (Tensor Cores, AMX-class engines) compute.
TYPED_PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8")
_DEFAULT_UNIT = {"tf32": "tensor", "fp8": "tensor"}


def typed_ceiling(flag: str, text: str, measured: bool) -> Ceiling:
    """A ceiling from `--dram 83GB/s`, `--fp64 355GFLOP/s` or `--fp16 280TFLOP/s@tensor`
    (the unit after '@': vector or tensor; see _DEFAULT_UNIT): nominal unless --measured."""
    provenance = "measured" if measured else "nominal"
    common = dict(provenance=provenance, source="rooflab specs import (typed in)",
                  method=f"given: {flag} {text}" + (" (stated as measured)" if measured
                                                    else " (stated as nominal)"))
    name = flag.lstrip("-")
    if name in TYPED_PRECISIONS:
        rate, at, unit = str(text).partition("@")
        unit = unit.strip().lower() if at else _DEFAULT_UNIT.get(name, "vector")
        if unit not in ("vector", "tensor"):
            raise InputError(f"{flag} {text}: the unit after '@' is vector (SIMD, CUDA "
                             f"cores) or tensor (Tensor Cores, matrix units); got "
                             f"'{unit}', e.g. {flag} {rate}@tensor")
        return Ceiling(value=parse_flop_rate(rate, flag), precision=name, unit=unit,
                       **common)
    if "@" in str(text):
        raise InputError(f"{flag} {text}: a bandwidth takes no '@unit'; give {flag} "
                         f"{str(text).partition('@')[0]}")
    return Ceiling(value=parse_bandwidth(text, flag), level=name.upper(), **common)


def assemble_roof(name: str, ceilings: Sequence[tuple[str, Ceiling]]) -> Roof:
    """One roof from ceilings of several origins ((what gave it, ceiling)): one ceiling
    per level and per precision (two origins of one is an InputError naming both), at
    least one compute and one memory ceiling; measured if any ceiling is."""
    seen: dict[tuple, str] = {}
    for origin, c in ceilings:
        key = (c.level,) if c.level else (c.precision, c.unit)
        label = c.level or f"{c.precision} {c.unit}"
        if key in seen:
            raise InputError(f"{label} given twice: by {seen[key]} and by {origin}; keep one")
        seen[key] = origin
    compute = tuple(c for _, c in ceilings if c.precision)
    memory = tuple(c for _, c in ceilings if c.level)
    if not compute:
        raise InputError("the roof has no compute ceiling; add one: --fp64 355GFLOP/s (or "
                         "--fp32), or a likwid-bench peakflops run")
    if not memory:
        raise InputError("the roof has no bandwidth; add one: --dram 83GB/s (or --l1/--l2/"
                         "--l3), or a likwid-bench run such as triad.txt@DRAM")
    kind = "measured" if any(c.provenance == "measured" for _, c in ceilings) else "nominal"
    order = {lv: i for i, lv in enumerate(LEVELS)}
    memory = tuple(sorted(memory, key=lambda c: order.get(c.level, 99)))
    return Roof(name=name, kind=kind, compute=compute, memory=memory,
                source="rooflab specs import: " + ", ".join(dict.fromkeys(o for o, _ in
                                                                          ceilings)))


# A typed measured number may sit this far above its datasheet figure (clock boost, a
# rounded datasheet) before `specs import --from` refuses it: no probe beats the peak.
ABOVE_DATASHEET = 1.05
# What a `specs import --from` profile's measured launch floor says it is: the datasheet's,
# copied so the launch floor keeps counting, not measured (review 19a N9).
COPIED_OVERHEAD = "the datasheet's launch floor (nominal), copied: not measured"


def fit_to_datasheet(flag: str, text: str, c: Ceiling, nominal: Roof) -> Ceiling:
    """A typed measured ceiling set beside a datasheet (`specs import --from`): a peak typed
    without '@unit' takes the unit the datasheet has for its precision when it has only
    one; any ceiling more than ABOVE_DATASHEET above the datasheet's same one is refused
    (review 19a N14: `--from T4 --fp16 50TFLOP/s` wrote an fp16 *vector* peak at 309 % of
    the T4's 16.2 TFLOP/s, where seed 004's 50 is its Tensor-Core matmul, 77 % of 65)."""
    from dataclasses import replace

    from ..units import fmt_rate, si

    if c.level:
        ref = nominal.find_memory(c.level)
        if ref is not None and c.value > ABOVE_DATASHEET * ref.value:
            raise InputError(
                f"{flag} {text} is {c.value / ref.value:.0%} of {nominal.name}'s datasheet "
                f"{c.level} {si(ref.value, 'B/s')}: a measured bandwidth cannot beat the "
                f"datasheet; check the number and its unit (GB/s, not Gbit/s)")
        return c
    units = [r for r in nominal.compute if r.precision == c.precision]
    if "@" not in str(text) and len({r.unit for r in units}) == 1 and units[0].unit != c.unit:
        c = replace(c, unit=units[0].unit)
    ref = nominal.find_compute(c.precision, c.unit)
    if ref is None or c.value <= ABOVE_DATASHEET * ref.value:
        return c
    rate = str(text).partition("@")[0]
    fits = [r for r in units if r.unit != c.unit and c.value <= ABOVE_DATASHEET * r.value]
    hint = "; ".join(f"{c.value / r.value:.0%} of its {r.label} {fmt_rate(r.value, r.precision)}"
                     f": did you mean {flag} {rate}@{r.unit}?" for r in fits)
    raise InputError(
        f"{flag} {text} is {c.value / ref.value:.0%} of {nominal.name}'s datasheet "
        f"{ref.label} {fmt_rate(ref.value, ref.precision)}: a measured peak cannot beat the "
        f"datasheet" + (f"; {hint}" if hint else "; check the number and its unit"))

"""Roofs other tools measured, read as rooflab roofs (review 14d K).

- ERT's roofline.json (Empirical Roofline Toolkit, e.g. ebugger/Empirical-Roofline-Toolkit,
  Empirical_Roofline_Tool-1.1.0/Results/roofline.edison.nersc.gov.01.json):
  `empirical.gbytes.data` / `empirical.gflops.data` are [name, GB/s or GFLOP/s] pairs, the
  measured roof; `spec` has the same layout for the ERT_SPEC_* figures of the config, the
  nominal roof. `--on ert.json` reads it as it reads a profile (hardware.resolve). Read
  in hardware/ert_roofs.py.
- likwid-bench's summary (RRZE-HPC/likwid, bench/likwid-bench.c): `Test: NAME`, `Using N
  threads`, `Size (Byte):` (`Size:` before 5.0), `Size per thread:`, `MFlops/s:`, `MByte/s:`
  for each run; `rooflab specs import run.txt@DRAM` makes its ceilings.
- numbers a user types (`specs import --dram 83GB/s --fp64 355GFLOP/s`), nominal unless
  the user says they measured them.

GB and MB are decimal (1e9, 1e6 bytes), as both tools print them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InputError, ParseError
from ..model.ceiling import Ceiling, Roof
from ..units import LEVELS, UNITS, fmt_fraction, fmt_times, parse_rate, parse_size
from ..units import fmt_bytes_binary as _binary  # caches as the OS gives them: 48 KiB

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
    (fp32 for the _sp kernels, else fp64; vector or scalar by peak_unit), each other run
    a bandwidth at `level` (the cache or memory its working set sits in: the file does not
    say). Several runs of one ceiling keep the best, the others as samples. With `caches`,
    each bandwidth ceiling whose working set does not sit in `level` carries a warning
    (working_set_warning)."""
    found: dict[tuple, list[tuple[float, BenchRun]]] = {}
    for r in runs:
        if r.is_peakflops:
            if not r.mflops:
                raise ParseError(f"the '{r.kernel}' run reports no MFlops/s", path=path,
                                 line=r.line)
            precision = "fp32" if "_sp" in r.kernel.lower() else "fp64"
            key = (precision, peak_unit(r.kernel)[0])
            found.setdefault(("compute", key), []).append((r.mflops * 1e6, r))
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
    what = (f"MFlops/s as printed, {peak_unit(best.kernel)[1]}" if kind == "compute" else
            f"MByte/s as printed: {bytes_counted(best.kernel)}")
    others = f", the best of {len(got)} runs" if len(got) > 1 else ""
    method = (f"likwid-bench -t {best.kernel}, {threads}, working set {_size(best)}"
              f"{others} ({path}, line {best.line}): {what}")
    common = dict(value=value, provenance="measured", source=f"likwid-bench ({path})",
                  method=method, samples=tuple(v for v, _ in got) if len(got) > 1 else ())
    if kind == "compute":
        precision, unit = key
        return Ceiling(precision=precision, unit=unit, **common)
    warning = working_set_warning(best, key, caches, path) if caches else ""
    return Ceiling(level=key, warnings=(warning,) if warning else (), **common)


# The SIMD extensions likwid-bench's kernel names carry (bench/x86-64: peakflops_sse, _avx,
# _avx_fma, _avx512(_fma), peakflops_amd_zen_avx_fma_add; bench/armv8: _neon(_fma),
# _sve128/256/512(_fma); bench/power: _vsx). A peakflops kernel without one is scalar:
# x86-64/peakflops.ptt is movsd/addsd/mulsd, peakflops_sp.ptt "only scalar operations"
# (movss/mulss/addss), armv8/peakflops(_fma) and peakflops_sp(_fma) scalar D/S registers.
# Plain `-t peakflops` reads 1/4 to 1/16 of the SIMD peak, and as 'vector' it put every
# vectorised kernel above its roof (review s20 r6 F2).
_SIMD = ("sse", "avx", "neon", "sve", "vsx")


def peak_unit(kernel: str) -> tuple[str, str]:
    """('vector', 'AVX FMA (vector)') for a peakflops kernel named with a SIMD extension,
    ('scalar', ...) for one without (peakflops, peakflops_sp, armv8's peakflops_fma)."""
    words = kernel.strip().lower().split("_")
    simd = [w for w in words if w.startswith(_SIMD)]
    if not simd:
        return "scalar", ("scalar: no SIMD extension in the kernel's name (likwid's "
                          "peakflops and peakflops_sp are scalar loops); a vector peak is "
                          "peakflops_avx_fma, _avx512_fma, _sve256_fma ...")
    isa = " ".join(w.upper() for w in words if w.startswith(_SIMD) or w == "fma")
    return "vector", f"vector: {isa} in the kernel's name"


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
                f"so real traffic is {fmt_times(moved / counted)} this")
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
        problem = (f"{si(total, 'B')} in all is {fmt_times(total / llc)} the last-level cache "
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


# --------------------------------------------------------------------- typed numbers

# a bare number below this is a unit left out (`--fp64 355` is 355 FLOP/s), not a machine
_SLOWEST = 1e6
_FLOP_SUFFIX = re.compile(r"\s*(flop/s|flops|flop/sec|op/s|ops)\s*$", re.I)


def parse_flop_rate(text: str, what: str) -> float:
    """'355GFLOP/s', '1.2TFLOPS', '9PFLOP/s', '3.55e11' (FLOP/s), '130TOP/s' (an integer
    peak: one operation per multiply or add, as FLOP are counted) -> per second. Raises
    InputError."""
    s = str(text).strip()
    head = _FLOP_SUFFIX.sub("", s)
    bad = not head or "/" in head or head.lower().endswith("b")
    # P (1e15), which parse_size (a size's prefixes) lacks: fp4 and fp8 tensor peaks are
    # quoted in PFLOP/s (B200 fp4 9 PFLOP/s), and '9PFLOP/s' was refused
    peta = re.fullmatch(r"(.*\d)\s*[pP]", head)
    head, scale = (peta[1] + "T", 1e3) if peta else (head, 1.0)
    try:
        value = float("nan") if bad else parse_size(head, what) * scale
    except InputError:
        value = float("nan")
    if not value >= 1 or (head == s and value < _SLOWEST):
        raise InputError(f"{what} must be a compute rate such as 355GFLOP/s, 1.2TFLOP/s, "
                         f"9PFLOP/s or 3.55e11 (FLOP/s; an int8 peak also as 130TOP/s); "
                         f"got '{text}'")
    return value


def parse_bandwidth(text: str, what: str) -> float:
    """units.parse_rate, refusing a bare number below 1 MB/s (a unit left out)."""
    value = parse_rate(text, what)
    if value < _SLOWEST and not any(ch.isalpha() for ch in str(text).replace("e", "")):
        raise InputError(f"{what} {text} would be {value:g} bytes/s (a bare number is "
                         f"bytes/s); give the unit, e.g. {what} {text}GB/s")
    return value


# The precisions `specs import` types in, and the unit each takes without '@unit': a
# CPU's SIMD ('vector') for those a CPU computes, 'tensor' for tf32, fp8 and fp4, which
# only matrix units (Tensor Cores, AMX-class engines) compute (fp4: Blackwell's and
# CDNA4's block-scaled fp4 MMA, a precision of its own since units.PRECISIONS has it).
TYPED_PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "fp4", "int8")
_DEFAULT_UNIT = {"tf32": "tensor", "fp8": "tensor", "fp4": "tensor"}


def typed_ceiling(flag: str, text: str, measured: bool) -> Ceiling:
    """A ceiling from `--dram 83GB/s`, `--fp64 355GFLOP/s` or `--fp16 280TFLOP/s@tensor`
    (the unit after '@': scalar, vector or tensor; see _DEFAULT_UNIT): nominal unless
    --measured."""
    provenance = "measured" if measured else "nominal"
    common = dict(provenance=provenance, source="rooflab specs import (typed in)",
                  method=f"given: {flag} {text}" + (" (stated as measured)" if measured
                                                    else " (stated as nominal)"))
    name = flag.lstrip("-")
    if name in TYPED_PRECISIONS:
        rate, at, unit = str(text).partition("@")
        unit = unit.strip().lower() if at else _DEFAULT_UNIT.get(name, "vector")
        if unit not in UNITS:
            raise InputError(f"{flag} {text}: the unit after '@' is scalar (one lane), "
                             f"vector (SIMD, CUDA cores) or tensor (Tensor Cores, matrix "
                             f"units); got "
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
    # which inputs gave only the other kind: a file cut short (an Advisor report that ends
    # before its Peak rows) was not named (s35 audit)
    gave = ", ".join(dict.fromkeys(o for o, _ in ceilings))
    if not compute:
        raise InputError(f"the roof has no compute ceiling ({gave} gave bandwidths only); add "
                         f"one: --fp64 355GFLOP/s (or --fp32), or a likwid-bench peakflops run")
    if not memory:
        raise InputError(f"the roof has no bandwidth ({gave} gave compute ceilings only); add "
                         f"one: --dram 83GB/s (or --l1/--l2/--l3), or a likwid-bench run such "
                         f"as triad.txt@DRAM")
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
                f"{flag} {text} is {fmt_fraction(c.value / ref.value)} of {nominal.name}'s "
                f"datasheet {c.level} {si(ref.value, 'B/s')}: a measured bandwidth cannot beat the "
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
    hint = "; ".join(f"{fmt_fraction(c.value / r.value)} of its {r.label} "
                     f"{fmt_rate(r.value, r.precision)}: did you mean {flag} {rate}@{r.unit}?"
                     for r in fits)
    raise InputError(
        f"{flag} {text} is {fmt_fraction(c.value / ref.value)} of {nominal.name}'s datasheet "
        f"{ref.label} {fmt_rate(ref.value, ref.precision)}: a measured peak cannot beat the "
        f"datasheet" + (f"; {hint}" if hint else "; check the number and its unit"))

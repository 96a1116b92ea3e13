"""SI units, dtype sizes and number formatting. Imports nothing of the package but errors.

Everything inside rooflab is in SI base units: seconds, bytes, FLOP, FLOP/s, B/s.
Decimal prefixes (GB = 1e9) unless a name says GiB. Formatting happens only at the edge.
"""

from __future__ import annotations

import math
import re

from .errors import InputError
from .sides import figures, pct_text, share_text, times_text  # standard library only: no cycle

# Bytes per element. int4 and fp4 pack two elements per byte; int2/int3/int6 are the
# weight-only widths of GPTQ/EXL2/llama.cpp-style group quantization (bits / 8 B, packed)
DTYPE_BYTES: dict[str, float] = {
    "fp64": 8.0,
    "fp32": 4.0,
    "tf32": 4.0,  # stored as fp32; only the tensor-core math is reduced
    "fp16": 2.0,
    "bf16": 2.0,
    "fp8": 1.0,
    "int64": 8.0,
    "int32": 4.0,
    "int16": 2.0,
    "int8": 1.0,
    "uint8": 1.0,
    "int6": 0.75,
    "int4": 0.5,
    "int3": 0.375,
    "int2": 0.25,
    "fp4": 0.5,
    "bool": 1.0,
}

DTYPE_ALIASES: dict[str, str] = {
    "float64": "fp64", "double": "fp64", "f64": "fp64",
    "float32": "fp32", "float": "fp32", "single": "fp32", "f32": "fp32",
    "float16": "fp16", "half": "fp16", "f16": "fp16",
    "bfloat16": "bf16",
    "float8": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "e4m3": "fp8", "e5m2": "fp8",
    "float8_e4m3fn": "fp8", "float8_e5m2": "fp8",
    # MI300's fp8 (PyTorch's ROCm _scaled_mm takes the FNUZ variants on gfx942)
    "float8_e4m3fnuz": "fp8", "float8_e5m2fnuz": "fp8",
    # fp4 is e2m1 (OCP MX and NVIDIA's NVFP4 share it; their block scales are the formats'
    # difference, counted where a format is named: llm --weights nvfp4/mxfp4)
    "e2m1": "fp4", "fp4_e2m1": "fp4", "float4_e2m1": "fp4",
    "long": "int64", "int": "int32", "short": "int16", "char": "int8",
}

# fp4 last: it came after the rest (Blackwell's fp4 tensor ceiling), and messages that list
# these keep their old prefix
PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4", "fp4")
# compute units, slowest first: scalar (one lane, no SIMD: the CPU probe's in-core ceiling),
# vector (SIMD, CUDA cores), tensor (tensor cores, matrix units)
UNITS = ("scalar", "vector", "tensor")
FLOAT_PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "fp4")
# Integer math is counted as FLOP are (2 per multiply-accumulate) but printed as OP/s:
# datasheets quote int8 tensor peaks in TOPS (A100: 624 TOPS), not TFLOP/s.
INT_PRECISIONS = ("int4", "int8", "int16", "int32", "int64", "uint8")
LEVELS = ("L1", "L2", "L3", "DRAM")
# xGMI: AMD's GPU-to-GPU Infinity Fabric links (rocm-smi --showtopo's name); ICI: TPU
# inter-chip links. Both join chips directly, as NVLink does, so neither is "network".
# The one list of link levels, in the order rooflab looks for a link ceiling on a roof
# (comm_link.link_from_roof, `rooflab scale`): chip-to-chip links first, then the host's
# PCIe, the network, and loopback (one host talking to itself) last.
LINKS = ("NVLink", "xGMI", "ICI", "PCIe", "network", "loopback")
# A link named for the group that runs on it, where one training step has two links of one
# kind at different bandwidths (`rooflab train --dp 2 --tp 4` on MI300X: the TP group's
# xGMI 192 GB/s, the --dp ring's xGMI 64 GB/s): each its own ceiling in the file, so the
# file verbs time each row on its own link. "xGMI (--dp ring)", "NVLink (--tp group)".
LINK_GROUPS = ("--tp group", "--dp ring")
GROUP_LINKS = tuple(f"{link} ({group})" for link in LINKS for group in LINK_GROUPS)


def canonical_dtype(name: str) -> str:
    """Return the canonical dtype name, or raise InputError listing the known ones."""
    key = str(name).strip().lower().removeprefix("torch.")
    key = DTYPE_ALIASES.get(key, key)
    if key not in DTYPE_BYTES:
        known = ", ".join(DTYPE_BYTES)
        raise InputError(f"unknown dtype '{name}'; use one of: {known}")
    return key


def dtype_bytes(name: str) -> float:
    """Bytes per element of a dtype (0.5 for int4)."""
    return DTYPE_BYTES[canonical_dtype(name)]


# Weight-only int4/int8 quantization (GPTQ, AWQ, bitsandbytes) keeps one scale per group
# of weights; 128 weights per fp16 scale is the common default (0.5 + 2/128 = 0.516 B per
# int4 weight). fp8 weights use a per-tensor scale: no per-weight overhead. The 2/3/6-bit
# widths (GPTQ bits 2/3, EXL2, llama.cpp Q2/Q3/Q6) keep group scales the same way.
GROUP_SCALED = ("int2", "int3", "int4", "int6", "int8")


def stored_weight_bytes(dtype: str, group_size: int = 128, scale_dtype: str = "fp16") -> float:
    """Bytes per stored weight of `dtype`, a group scale's share included for the integer
    widths (GROUP_SCALED): int3 at group 128, fp16 scales = 0.375 + 2/128 = 0.390625 B."""
    d = canonical_dtype(dtype)
    base = dtype_bytes(d)
    return base + dtype_bytes(scale_dtype) / group_size if d in GROUP_SCALED else base


def flop_precision(dtype: str) -> str:
    """The compute precision that arithmetic in this dtype is counted under."""
    d = canonical_dtype(dtype)
    if d in ("int64", "int32", "int16", "uint8", "bool"):
        return "int8" if d == "uint8" else "int32"
    # fp4 is its own precision (Blackwell's fp4 tensor ceiling); a roof without one holds
    # it to fp8 (ceiling.PRECISION_FALLBACK) and says so
    return d


def is_float(precision: str) -> bool:
    """Floating-point math (as opposed to integer: int8, int4)."""
    return precision in FLOAT_PRECISIONS


def rate_unit(precision: str | None) -> str:
    """The unit a compute rate in `precision` is printed in: "OP/s" for integer math
    (int8 624 TOP/s), "FLOP/s" for float, mixed or unknown precision."""
    return "OP/s" if precision in INT_PRECISIONS else "FLOP/s"


def fmt_rate(value: float | None, precision: str | None, digits: int = 3) -> str:
    """A compute rate with the unit of its precision: (624e12, 'int8') -> '624 TOP/s'."""
    return si(value, rate_unit(precision), digits)


_PREFIXES = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]


def si(value: float | None, unit: str = "", digits: int = 3) -> str:
    """Format with a decimal SI prefix: si(2.039e12, 'B/s') -> '2.04 TB/s'."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if value == 0:
        return f"0 {unit}".strip()
    # pick the prefix after rounding: 999.96e6 is '1 GB/s', not '1e+03 MB/s'
    mag = abs(float(f"{value:.{digits}g}"))
    for scale, prefix in _PREFIXES:
        if mag >= scale:
            # past the last prefix, whole numbers: 1e21 B is '1000 EB', not '1e+03 EB'
            return f"{plain(value / scale, digits)} {prefix}{unit}".strip()
    if mag < 1e-3 and unit:
        return f"{value:.{digits}g} {unit}"
    return f"{value:.{digits}g} {unit}".strip()


def si_apart(a: float, b: float, unit: str = "") -> tuple[str, str]:
    """Two amounts set against each other ('needs X > has Y'), with as many digits as
    tell them apart: (141.4e9, 141e9) -> ('141.4 GB', '141 GB'), not '141 GB' twice."""
    for digits in range(3, 7):
        sa, sb = si(a, unit, digits), si(b, unit, digits)
        if sa != sb or a == b:
            return sa, sb
    return sa, sb


def plain(x: float, digits: int) -> str:
    """`digits` significant figures, whole numbers where that would be exponent form
    (1030, not '1.03e+03'), exponent form only from 1e9 up (no 19-digit numbers)."""
    rounded = float(f"{x:.{digits}g}")
    if 10 ** digits <= abs(rounded) < 1e9:
        return f"{x:.0f}"
    return f"{x:.{digits}g}"


# A duration of 1000 s and more is told in minutes, from an hour in hours: a 70B request
# on a T4 takes '29.8 min', not '1.79e+03 s' (review s28 R2 F1); from 1000 h, whole hours
_LONG = ((3600.0, "h"), (60.0, "min"))


def fmt_seconds(seconds: float | None, digits: int = 3) -> str:
    """Format a duration: 3.1e-6 -> '3.1 us', 1.19e-12 -> '1.19 ps', 1790 -> '29.8 min',
    5400 -> '1.5 h'. Never in exponent form below 1e9 h."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "-"
    mag = abs(float(f"{seconds:.{digits}g}"))   # 999.96 us reads '1 ms', not '1e+03 us'
    if mag >= 1000 and math.isfinite(mag):
        for scale, name in _LONG:
            # hours once the minutes round to 60: 3599 s is '1 h', not '60 min'
            if name == "min" or abs(float(f"{seconds / 60:.{digits}g}")) >= 60:
                return f"{plain(seconds / scale, digits)} {name}"
    # ps below 1 ns: a one-element op's floor is 1.19 ps, not '0.00119 ns' (review 12d L2)
    for scale, name in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"), (1e-12, "ps")):
        if mag >= scale:
            return f"{seconds / scale:.{digits}g} {name}"
    if mag == 0:
        return "0 ns"     # as before ps existed: report tables print "0 ns" for no gain
    return f"{seconds / 1e-12:.{digits}g} ps"


def seconds_apart(a: float, b: float) -> tuple[str, str]:
    """Two durations set against each other (before -> after), with as many digits as
    tell them apart: (1e-3, 1.0004e-3) -> ('1 ms', '1.0004 ms'), not '1 ms -> 1 ms'
    beside a gate that failed on the difference (review s28 R2 F2)."""
    for digits in range(3, 8):
        sa, sb = fmt_seconds(a, digits), fmt_seconds(b, digits)
        if sa != sb or a == b:
            return sa, sb
    return sa, sb


def per_s(rate: float) -> str:
    """Events (tokens, requests) per second as a plain number, one rule for every verb:
    153.6, 2218, 10282 (not 1.028e+04), 0.3802 (a 405B model on a CPU makes well under one
    token a second: not '0', review s28 R2 F3/F13)."""
    if rate is None or (isinstance(rate, float) and math.isnan(rate)):
        return "-"
    return f"{rate:.4g}" if abs(rate) < 1e4 else f"{rate:.0f}"


def fmt_factor(x: float | None, digits: int = 3) -> str:
    """A ratio as 'N.NNx' with `digits` significant figures, trailing zeros kept so a
    column reads alike ('14.0x' beside '14.7x', '1.00x', not '14x' and '1x'; sides.figures),
    not in exponent form below a billion: 1030 reads '1030x', not '1.03e+03x' (a kernel
    1000x below its roof); from 1e9 up '3.35e+18x', not a 19-digit number (a kernel of
    1e-9 FLOP and bytes, review r3 F6)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return figures(x, digits) + "x"


def fmt_times(x: float | None) -> str:
    """A speed-up, headroom or other ratio of times as tables and advice lines print it,
    one rule for both: two decimals from 0.1 to 10 ('0.50x', '1.84x', '9.99x'), fmt_factor's 3
    significant figures from 10 ('33.5x', not '33.50x' beside '33.5x faster'; '1430x',
    not '1428.57x'; '3.35e+18x' from 1e9, not the 22-digit headroom a kernel of 1e-9 FLOP
    and bytes once printed, review r3 F6). The side of 10 is taken after rounding: 9.996
    is '10.0x', never '10.00x'. Under 0.1, 3 significant figures ('0.0123x', '0.00500x',
    '6.70e-05x'): two decimals keep two figures from 0.1 up, one or none under it ('0.01x'
    for 0.0123, 19 % off; '0.00x', which reads as no time, for 2e-4). Not '<0.01x': so
    small a ratio is a time far below its floor, a miscount, and its size says by how much
    (6.7e-05x is 15000x too fast, review s28 R2 F11). 0 is '0.00x'; None or NaN '-'
    (sides.times_text)."""
    return times_text(x)


def fmt_pct(pct: float | None, space: bool = True) -> str:
    """A percent of roof, rounded one way everywhere (tables, chart labels, advice, reports):
    whole percents from 10 %, two figures under it, so an overhead-bound rmsnorm at 0.07 %
    is not '0 %', 1.5 % is not '2 %' (a third off, review r2 F4), the report's Markdown and
    `rooflab ncu` print one figure alike ('3.3 %', review s33 J1) and 49.4999 is '49 %' on
    every page. SI style, a space before the sign,
    in every output ("49 %"; `space=False` gives the bare "49%"). None: "-". Near a line
    that decides a class (10 % latency, 50 % the >2x flag, 105 % above the roof) it keeps
    the digits that hold its side: a latency-bound 9.996 % is '9.996 %', not '10 %'
    (sides.pct_text; review s22 r4 F3). From 10000 % (a point 100x above its roof: a
    miscount) 3 significant figures, '1.49e+06 %', not '1492537 %'."""
    return pct_text(pct, space=space)


def fmt_fraction(fraction: float | None, decimals: int = 0) -> str:
    """A fraction (0.84) as the percent the tables print, with the space of SI style that
    README, the share columns and `fmt_pct` use: '84 %', not '84%' (`{x:.0%}`), so a
    measured / nominal column does not read '84%' above '54 % of the measured roof'.
    `decimals` after the point ('3.2 %' with 1). None or NaN: '-'. For printed text only:
    CSV and JSON keep their numbers."""
    if fraction is None or (isinstance(fraction, float) and math.isnan(fraction)):
        return "-"
    return f"{100 * fraction:.{decimals}f} %"


def fmt_pct_range(lo: float, hi: float) -> str:
    """A range of percents, the sign written once after the upper end: (18.4, 36.7) ->
    '18-37 %' (each end as fmt_pct rounds it), not '18 %-37 %'; the one style for every
    printed percent range, as the datasheet bands ('70-90 %'). One percent when both ends
    print alike ('100 %'). An end with a sign or an exponent ('<0.001 %', '-5 %',
    '1.49e+06 %') would read as part of the dash: the range is then 'a % to b %'."""
    a, b = fmt_pct(lo), fmt_pct(hi)
    if a == b:
        return a
    ends = (a.removesuffix(" %"), b.removesuffix(" %"))
    if all(re.fullmatch(r"\d+(\.\d+)?", x) for x in ends):
        return f"{ends[0]}-{ends[1]} %"
    return f"{a} to {b}"


def fmt_share(fraction: float | None) -> str:
    """A share of a total (0.356 of the time) as every page prints it: one decimal, '35.6 %'
    (sides.share_text: two figures under 1 %, '0.0035 %', not the '0.0 %' of none). The
    report table's 'gain at roof / total' cell and the gain line under it ('6.85 ms saved
    (35.6 % of the total)') both print this, so one number has one rounding; a percent of
    roof is fmt_pct's (whole percents: it is read against the class lines). None: '-'."""
    return "-" if fraction is None else share_text(100 * fraction)


def fmt_bytes_binary(nbytes: float, digits: int = 3) -> str:
    """A size in binary units, '48 KiB', '1.5 MiB', '12 GiB', '512 B': the largest of PiB,
    TiB, GiB, MiB, KiB it reaches, `digits` significant figures, never in exponent form
    (1000 MiB is '1000 MiB', not '1e+03 MiB'). One rule for the probe notes, the comm and
    sweep tables and `specs` (review s18 r6 F2: five local copies, two without GiB, one
    printing a 48 KiB L1 as '0.0469 MiB')."""
    steps = (("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))
    unit, size = next(((u, n) for u, n in steps if nbytes >= n), ("B", 1))
    value = nbytes / size
    rounded = float(f"{value:.{digits}g}")
    text = f"{value:.0f}" if abs(rounded) >= 10 ** digits else f"{value:.{digits}g}"
    return f"{text} {unit}"


def fmt_ai(ai: float | None) -> str:
    """Format an arithmetic intensity in FLOP/byte: 3 significant figures, whole numbers
    from 100 (1376, 1333333), exponent form from 1e9 up as plain() and fmt_factor print
    it ('3.35e+18', a kernel with its bytes miscounted) and under 1e-4 as si() does
    ('2.99e-06', not '0.00000299'). The side is taken after rounding: 999999999.7 is
    '1e+09', not the 10-digit '1000000000' (review s28 R2 F15)."""
    if ai is None or (isinstance(ai, float) and math.isnan(ai)):
        return "-"
    if ai == 0:
        return "0"        # not '-0' (a negative zero from a subtraction)
    if 100 <= float(f"{ai:.3g}") < 1e9:
        return f"{ai:.0f}"
    return f"{ai:.3g}"


_BYTE_SUFFIX = {
    "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}


def parse_size(text: str | int | float, what: str = "size") -> float:
    """Parse '32MiB', '1.5GB', '4096' into bytes (or a plain count). Raises InputError."""
    if isinstance(text, (int, float)):
        value = float(text)
    else:
        s = str(text).strip().lower().replace("_", "")
        num = s.rstrip("abcdefghijklmnopqrstuvwxyz")
        suffix = s[len(num):]
        try:
            value = float(num) * _BYTE_SUFFIX.get(suffix, 1 if suffix == "" else math.nan)
        except ValueError:
            value = math.nan
    # '1e400GB' reads as inf (float('1e400'), or 1e300 x 1e9): no size, and a crash in any
    # later floor() or strict JSON (review 12c C), so refused here like 0
    if not 0 < value < math.inf:
        raise InputError(f"{what} must be a positive number such as 4096, 32MiB or 1.5GB; "
                         f"got '{text}'")
    return value


# A bit rate: "bit"/"bits"/"bps" after any prefix ("400Gbit/s", "400gbps"), or an upper-case
# prefix and a lower-case b ("400Gb/s", "3.6Tb/s"; SI/IEC: b = bit, B = byte). Network links
# are quoted in bits (400 Gb/s NDR).
_BIT_RATE = re.compile(r"^\s*([0-9][0-9.eE+-]*)\s*([kKmMgGtTpP]?)"
                       r"(?:bps|bits?/s|bits?|(?<=[KMGTP])b(?:/s)?)\s*$")
# A lower-case prefix and a lower-case b ("100gb/s", "50kb/s"): bits by the letter, bytes by
# habit (a sizes' "gb" is GB). Read as either, it is 8x off for someone who meant the other
# (review s28 R2 F9: "100gb/s" for 100 GbE was 100 GB/s), so it is refused.
_AMBIGUOUS = re.compile(r"^\s*[0-9][0-9.eE+-]*\s*([kmgtp])b(/s)?\s*$")
_RATE_PREFIX = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "p": 1e15}


def parse_rate(text: str | int | float, what: str = "bandwidth") -> float:
    """Parse a bandwidth into bytes/s: '450GB/s', '4.5e11' (a bare number: bytes/s), or a bit
    rate such as '400Gb/s', '400Gbps', '400 Gbit/s', '400gbit/s' (divided by 8). An
    all-lower-case '400gb/s' is refused as ambiguous (bits or bytes?). A size without '/s'
    ('450GB') is refused: it is an amount, not a rate (review 12c item 8). Raises
    InputError."""
    given = text
    if isinstance(text, str):
        m = _BIT_RATE.match(text.replace("_", ""))
        if m:
            try:
                value = float(m.group(1)) * _RATE_PREFIX[m.group(2).lower()] / 8
            except ValueError:
                value = math.nan
            if not value > 0 or math.isinf(value):
                raise InputError(f"{what} must be a positive rate such as 450GB/s or "
                                 f"400Gb/s; got '{text}'")
            return value
        if a := _AMBIGUOUS.match(text.replace("_", "")):
            num = text.strip()[:-len(a.group(1) + "b" + (a.group(2) or ""))].strip()
            big = "k" if a.group(1) == "k" else a.group(1).upper()   # SI's kilo is k
            raise InputError(f"{what} '{text}' is ambiguous: say {num}{big}bit/s (or "
                             f"{num}{big.upper()}b/s) for bits, as NICs are rated, or "
                             f"{num}{big}B/s for bytes")
        head, slash, _ = text.partition("/")
        # a number with a size unit ('450GB'), not a word ending in one ('fast': review s33 E)
        if (not slash and head.strip()[:1] in set("0123456789.")
                and head.strip().lower().rstrip("bikmgt") != head.strip().lower()):
            raise InputError(f"{what}: a rate needs /s: {head.strip()}/s; got '{text}'")
        text = head
    try:
        return parse_size(text, what)
    except InputError:
        # Say what a rate looks like, not a size (parse_size's own examples are sizes).
        raise InputError(f"{what} must be a positive rate such as 450GB/s, 4.5e11 (bytes/s) "
                         f"or 400Gb/s; got '{given}'") from None


# No interconnect is slower than this; a bare number below it is a unit left out
# (`--link-bw 450` is 450 B/s, `--link-bw 900` the NVLink datasheet figure), not a link.
SLOWEST_LINK = 1e6


def parse_link_rate(text: str | int | float, what: str = "--link-bw") -> float:
    """parse_rate for a link's bandwidth, refusing a bare number below SLOWEST_LINK bytes/s
    (`scale --link-bw`, `llm --link-bw`, `llm --pp-link-bw` alike). Raises InputError."""
    value = parse_rate(text, what)    # 450GB/s, or bits: 400Gb/s (a NIC's rating) = 50 GB/s
    if value < SLOWEST_LINK and not any(ch.isalpha() for ch in str(text).replace("e", "")):
        raise InputError(f"{what} {text} would be {value:g} bytes/s (a bare number is bytes/s), "
                         f"slower than any link; give the unit, e.g. {what} {text}GB/s or "
                         f"{what} {text}Gb/s (bits, as NICs are rated)")
    return value


# No accelerator or CPU has less memory than this; a bare number below it is a unit left
# out (`llm --memory 16` is 16 bytes), not a device.
SMALLEST_MEMORY = 1e6
# nor more than this: a 1 PB device is a typo (`--memory 1e30GB`, s36 N); the largest hosts
# hold tens of TB, the largest accelerators a few hundred GB
LARGEST_MEMORY = 1e15


def is_bare_number(text: str | int | float) -> bool:
    """Whether a size or rate was typed without a unit ('16', '4.5e11'; not '16GB')."""
    return not any(ch.isalpha() for ch in str(text).replace("e", ""))


def parse_memory(text: str | int | float, what: str = "--memory") -> float:
    """parse_size for a device's memory, refusing anything below SMALLEST_MEMORY bytes:
    from a bare number, a unit left out (`--memory 16`), as parse_link_rate refuses
    `--link-bw 900`. Raises InputError."""
    value = parse_size(text, what)
    if value < SMALLEST_MEMORY:
        example = f"{text}GB (decimal) or {text}GiB" if is_bare_number(text) else "16GB"
        raise InputError(f"{what} {text} is {value:g} bytes, smaller than any device's "
                         f"memory; give a unit, e.g. {what} {example}")
    if value > LARGEST_MEMORY:
        raise InputError(f"{what} {text} is {value:g} bytes, past any device's memory "
                         f"(rooflab takes up to 1 PB, 1e15 bytes); give one device's "
                         f"memory, e.g. {what} 80GB")
    return value

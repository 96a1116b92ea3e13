"""The CPU FP events rooflab counts FLOP from, by vendor, and the --precision rule for the
one event that does not say its precision (AMD's)."""

from __future__ import annotations

import re

from ..errors import InputError

# FP_ARITH_INST_RETIRED_<width>_<precision>: FLOP per count (likwid's FLOPS_DP/_SP groups).
# Intel counts an FMA instruction twice in these events already (intel/perfmon,
# FP_ARITH_INST_RETIRED.128B_PACKED_DOUBLE: "Counts twice for DPP and FM(N)ADD/SUB"), so
# the weight is the vector width alone: an FMA is 2 FLOP per element.
FP_ARITH = {f"FP_ARITH_INST_RETIRED_{w}_{p.upper()}": (prec, n)
            for p, prec, widths in (("double", "fp64", (1, 2, 4, 8)),
                                    ("single", "fp32", (1, 4, 8, 16)))
            for w, n in zip(("SCALAR", "128B_PACKED", "256B_PACKED", "512B_PACKED"), widths,
                            strict=True)}
# likwid's names of Sapphire Rapids' half-precision (AVX512-FP16) events, FLOP per count as
# likwid's groups/SPR/MEM_HP.txt weighs them ("HP [MFLOP/s] 1.0E-06*(PMC0*8.0+PMC1+PMC2*16.0+
# PMC3*32.0)/time" over 128B/SCALAR/256B/512B_PACKED_HALF); FLOPS_HP.txt counts the scalar
# ones as FP_ARITH_INST_RETIRED2_SCALAR (regular + complex scalar half), also x 1. Like
# FP_ARITH, an FMA is counted twice by the hardware already.
LIKWID_FP16 = {"FP_ARITH_INST_RETIRED2_SCALAR_HALF": ("fp16", 1),
               "FP_ARITH_INST_RETIRED2_SCALAR": ("fp16", 1),
               "FP_ARITH_INST_RETIRED2_128B_PACKED_HALF": ("fp16", 8),
               "FP_ARITH_INST_RETIRED2_256B_PACKED_HALF": ("fp16", 16),
               "FP_ARITH_INST_RETIRED2_512B_PACKED_HALF": ("fp16", 32)}
# AMD's RETIRED_SSE_AVX_FLOPS (likwid's names; Zen 3/4) count FLOPs, not instructions
LIKWID_AMD_FLOPS = {"RETIRED_SSE_AVX_FLOPS_DOUBLE_ALL": "fp64",
                    "RETIRED_SSE_AVX_FLOPS_SINGLE_ALL": "fp32",
                    "RETIRED_SSE_AVX_FLOPS_ALL": ""}   # "": the group's precision
# perf's name for the every-precision one (Zen 4's fp_ret_sse_avx_ops.all)
PERF_AMD_FLOPS = "fp_ret_sse_avx_ops.all"
# the --precision a user may give for FLOP the counters do not split by precision
PRECISIONS = ("fp64", "fp32", "fp16", "bf16")


# Sapphire Rapids' complex scalar half (VFMADDCSH ...): 2 FLOP per count, as perf's FLOPc
# metric weighs it ("2 * (FP_ARITH_INST_RETIRED.128B_PACKED_DOUBLE + FP_ARITH_INST_RETIRED2.
# COMPLEX_SCALAR_HALF)"); likwid's groups do not count it apart.
FP16_COMPLEX_SCALAR = {"FP_ARITH_INST_RETIRED2_COMPLEX_SCALAR_HALF": ("fp16", 2)}
# FP_ARITH_INST_RETIRED2.SCALAR counts SCALAR_HALF and COMPLEX_SCALAR_HALF together (perfmon:
# umask 0x3 = 0x1 | 0x2, "all Scalar Half-Precision FP arithmetic instructions retired -
# regular and complex"): perf's reader reads it only for the part the file does not hold.
FP16_SCALAR = "FP_ARITH_INST_RETIRED2_SCALAR"


def fp_arith(event: str) -> tuple[str, float] | None:
    """(precision, FLOP per count) of an FP_ARITH event in likwid's or perf's spelling
    ('fp_arith_inst_retired.scalar_double', 'fp_arith_inst_retired2.512b_packed_half'),
    None for any other event and for the combined FP_ARITH_INST_RETIRED2.SCALAR."""
    name = event.upper().replace(".", "_")
    if name == FP16_SCALAR:
        return None
    return FP_ARITH.get(name) or LIKWID_FP16.get(name) or FP16_COMPLEX_SCALAR.get(name)


def check_precision(precision: str | None) -> str | None:
    """--precision as rooflab names it (lower case), or InputError naming the choices."""
    if precision is None:
        return None
    if precision.strip().lower() not in PRECISIONS:
        raise InputError(f"--precision {precision}: not a precision the CPU counters count; "
                         f"give one of {', '.join(PRECISIONS)}")
    return precision.strip().lower()


def group_precision(group: str) -> str:
    """FLOPS_SP / MEM_SP count single precision, FLOPS_HP / MEM_HP half; every other likwid
    group is read as double."""
    if re.search(r"(^|_)HP($|_)", group.upper()):
        return "fp16"
    return "fp32" if re.search(r"(^|_)SP($|_)", group.upper()) else "fp64"


def every_precision_note(event: str, given: str | None, otherwise: str) -> str:
    """The note on an event that counts the FLOP of every precision: read as `given`
    (--precision), else as `otherwise` says."""
    return (f"{event} counts the FLOP of every precision: read as "
            + (f"{given} (--precision {given})" if given else otherwise))

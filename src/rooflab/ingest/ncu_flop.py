"""Nsight Compute metrics -> FLOP per precision of one launch: the instruction counts
(add + mul + 2 x fma, fp16 packed half2), the tensor-core ops (sm__ops_path_tensor_*, one
figure per source), or the tensor instructions times a per-architecture factor. The formulas
are in ingest/ncu_metrics.py's module docstring; split from it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

from .ncu_numbers import _get

_INST = "sass_thread_inst_executed_op_{}_pred_on.sum"
FP_OPS = {"fp64": ("dadd", "dmul", "dfma"), "fp32": ("fadd", "fmul", "ffma"),
          "fp16": ("hadd", "hmul", "hfma")}
# FLOP per (add, mul, fma) thread instruction. fp16 instructions are packed half2 (NVIDIA's
# SpeedOfLight_HierarchicalHalfRooflineChart section multiplies by 2 per lane).
FP_WEIGHTS = {"fp64": (1, 1, 2), "fp32": (1, 1, 2), "fp16": (2, 2, 4)}

TENSOR_INST = "sm__inst_executed_pipe_tensor.sum"
# FLOP per warp-level tensor instruction, by compute capability. The NERSC roofline scripts
# (gitlab.com/NERSC/roofline-on-nvidia-gpus) use 512 for V100. Turing issues HMMA.1688
# (2*16*8*8 = 2048 FLOP per warp instruction) and
# Ampere/Ada HMMA.16816 (2*16*8*16 = 4096) for fp16; other shapes (tf32 HMMA.1684, int8 IMMA)
# differ, so this is an assumption and the note says so. Hopper's wgmma is not counted here.
TENSOR_FACTOR: dict[tuple[int, int], float] = {
    (7, 0): 512.0, (7, 2): 512.0, (7, 5): 2048.0,
    (8, 0): 4096.0, (8, 6): 4096.0, (8, 7): 4096.0, (8, 9): 4096.0,
}
# sm__ops_path_tensor_[op_<mma>_]src_<p>[_dst_<q>][_sparsity_<on|off>].sum: tensor-core ops
# by source (and destination) type. NVIDIA exposes both per-source totals (src_fp64,
# src_int8, src_int4, src_int1, src_fp8 on Ada) and per-destination splits (src_fp16_dst_fp32;
# Blackwell's src_fp4_fp6_dst_fp16); each may come with a _sparsity_on/off split. A total and
# its splits may all be collected together, so tensor_flop keeps one figure per source: the
# total where present, else the sum of its parts (see _tensor_total).
_TENSOR_OPS = re.compile(
    r"^sm__ops_path_tensor_(?:op_[a-z0-9]+_)?src_([a-z0-9]+(?:_fp6)?)(?:_dst_([a-z0-9]+))?"
    r"(?:_sparsity_(on|off))?\.sum$")
_TENSOR_PRECISION = {"fp16": "fp16", "bf16": "bf16", "tf32": "tf32", "fp64": "fp64",
                     "fp8": "fp8", "e4m3": "fp8", "e5m2": "fp8", "int8": "int8", "s8": "int8",
                     "u8": "int8", "int4": "int4", "s4": "int4", "fp4": "fp4", "e2m1": "fp4",
                     "fp4_fp6": "fp4"}
# fp4 (e2m1) is a float precision of its own with its own ceiling (Blackwell's fp4 tensor),
# not int4: held to int4 tensor, an fp4 GEMM read against an integer peak that no Blackwell
# lists and was printed in OP/s. Blackwell counts fp4 and fp6 MMAs under one source
# (src_fp4_fp6); fp6 runs at the fp8 rate, so that part is said in a note.
_FP4_FP6 = "fp4_fp6"
# counted sources without a rooflab precision (binary MMA): said in a note, never a ceiling
_TENSOR_UNCOUNTED = frozenset({"int1", "b1"})


# (sm__ name, smsp__ name) of each (add, mul, fma) instruction count, per precision.
_INST_NAMES = {p: tuple((f"sm__{_INST.format(op)}", f"smsp__{_INST.format(op)}") for op in ops)
               for p, ops in FP_OPS.items()}
_TENSOR_PREFIX = "sm__ops_path_tensor_"


# Bounded (review s18 r6 F7: a dict and a set held every metric name of every file read in
# a notebook session): only sm__ops_path_tensor_* names reach it (flop_counts tests the
# prefix first), a few dozen per architecture, so 4096 never evicts in one report.
@functools.lru_cache(maxsize=4096)
def _tensor_key(name: str) -> tuple[str, str, str] | None:
    """(source, destination or "", sparsity or "") of an sm__ops_path_tensor_* metric name
    (cached), else None."""
    hit = _TENSOR_OPS.match(name) if name.startswith(_TENSOR_PREFIX) else None
    return (hit.group(1), hit.group(2) or "", hit.group(3) or "") if hit else None


# Names seen without the tensor prefix, for flop_counts' fast path (a subset test in C: most
# launches hold no tensor metric, all names seen before); emptied past _PLAIN_MAX names, so
# bounded as _tensor_key's cache is. Disjoint from that cache (prefix names never enter).
_PLAIN_MAX = 4096
_plain: set[str] = set()


def _tensor_candidates(m: Mapping[str, float]) -> list[tuple[str, float]]:
    """The (name, value) items of `m` whose name has the sm__ops_path_tensor_ prefix."""
    if m.keys() <= _plain:
        return []
    rest = m.keys() - _plain     # in C: the tensor names and names not seen before
    if len(_plain) > _PLAIN_MAX:
        _plain.clear()
    tensor = {name for name in rest if name.startswith(_TENSOR_PREFIX)}
    _plain.update(rest - tensor)
    return [item for item in m.items() if item[0] in tensor] if tensor else []


def _tensor_total(parts: Mapping[tuple[str, str, str], float]) -> dict[str, float]:
    """Ops per source from the collected variants of it: per destination, the plain metric
    where collected, else _sparsity_on + _sparsity_off; per source, the destination-free
    total where collected, else the sum over destinations. Summing every variant would count
    the same MMAs two or three times."""
    by_dst: dict[tuple[str, str], float] = {}
    for (src, dst, sparsity), v in parts.items():
        if sparsity and (src, dst, "") in parts:
            continue
        by_dst[(src, dst)] = by_dst.get((src, dst), 0.0) + v
    out: dict[str, float] = {}
    for (src, dst), v in by_dst.items():
        if dst and (src, "") in by_dst:
            continue
        out[src] = out.get(src, 0.0) + v
    return out


# (precision, its (add, mul, fma) weights, the (sm__, smsp__) names of each instruction)
_INST_PLAN = tuple((p, FP_WEIGHTS[p], _INST_NAMES[p]) for p in FP_OPS)


def _partial_note(precision: str, add, mul, fma) -> str:
    """A precision counted from some of its add/mul/fma metrics: the others were not
    collected, so its FLOP read low by whatever those instructions did."""
    ops = FP_OPS[precision]
    have = [op for op, v in zip(ops, (add, mul, fma), strict=True) if v is not None]
    lack = [op for op, v in zip(ops, (add, mul, fma), strict=True) if v is None]
    return (f"{precision} FLOP from {', '.join(have)} only: "
            f"{', '.join('sm__' + _INST.format(op) for op in lack)} not collected (add "
            f"{'it' if len(lack) == 1 else 'them'} to --metrics, or the FLOP may read low)")


def flop_counts(m: Mapping[str, float], cc: tuple[int, int] | None = None
                ) -> tuple[dict[str, float], list[str], list[str], float, bool]:
    """FLOP by precision, notes, the precisions whose metrics are nan, the tensor-core part,
    and whether any FLOP metric was collected at all."""
    flop: dict[str, float] = {}
    notes: list[str] = []
    bad: list[str] = []
    collected = False
    tensor_total = 0.0
    get = m.get
    # Runs once per launch (100,000 times in benchmarks/ncu_parse.py), hence spelled out:
    # each count is the sm__ metric, else the smsp__ one when the sm__ one is missing or nan.
    for precision, (w0, w1, w2), ((a, a2), (b, b2), (c, c2)) in _INST_PLAN:
        add = get(a)
        if add is None or add != add:
            add = get(a2)
            if add != add:
                add = None
        mul = get(b)
        if mul is None or mul != mul:
            mul = get(b2)
            if mul != mul:
                mul = None
        fma = get(c)
        if fma is None or fma != fma:
            fma = get(c2)
            if fma != fma:
                fma = None
        if add is None and mul is None and fma is None:
            if a in m or a2 in m or b in m or b2 in m or c in m or c2 in m:
                bad.append(precision)
            continue
        collected = True
        if add is None or mul is None or fma is None:
            notes.append(_partial_note(precision, add, mul, fma))
        total = w0 * (add or 0.0) + w1 * (mul or 0.0) + w2 * (fma or 0.0)
        if total > 0:
            flop[precision] = total
    parts: dict[tuple[str, str, str], float] = {}
    for name, value in _tensor_candidates(m):
        if (k := _tensor_key(name)) is not None:
            collected = True
            if value == value and value > 0:
                parts[k] = value
    tensor: dict[str, float] = {}
    for src, v in _tensor_total(parts).items():
        if src in _TENSOR_UNCOUNTED:
            notes.append(f"{v:.4g} {src} tensor ops (sm__ops_path_tensor_src_{src}) not "
                         f"counted: rooflab has no {src} ceiling")
            continue
        p = _TENSOR_PRECISION.get(src, src)
        tensor[p] = tensor.get(p, 0.0) + v
        if src == _FP4_FP6:
            notes.append(f"{v:.4g} tensor ops of sm__ops_path_tensor_src_fp4_fp6 counted as "
                         f"fp4: the counter holds fp6 MMAs too, which run at the fp8 rate "
                         f"(their share reads up to 2x low against the fp4 ceiling)")
    if tensor:
        notes.append("tensor FLOP from sm__ops_path_tensor_* (counted)")
        for p, v in tensor.items():
            flop[p] = flop.get(p, 0.0) + v
        tensor_total = sum(tensor.values())
    elif parts:
        pass        # tensor ops were counted, all of an uncounted type: no stand-in factor
    else:
        inst = _get(m, TENSOR_INST)
        if inst is not None:
            collected = True
        if inst:
            factor = TENSOR_FACTOR.get(cc) if cc else None
            if factor is None:
                notes.append(f"{inst:.0f} tensor instructions not counted as FLOP: no factor "
                             f"for compute capability {cc}; collect sm__ops_path_tensor_*")
            else:
                flop["fp16"] = flop.get("fp16", 0.0) + inst * factor
                tensor_total = inst * factor
                notes.append(f"tensor FLOP = {TENSOR_INST} x {factor:.0f} (assumed fp16 "
                             f"HMMA shape for CC {cc[0]}.{cc[1]}); collect "
                             f"sm__ops_path_tensor_* for exact counts")
    return flop, notes, bad, tensor_total, collected


def fma_instructions(m: Mapping[str, float]) -> dict[str, tuple[float, float]]:
    """(add + mul, fma) thread instructions per precision of one launch, for the FMA share
    a kernel's no-FMA ceiling comes from (model/fma_ceiling.py; review s21 r3 F9: GPP's
    dadd 122 G + dmul 372 G + dfma 735 G = 60 % FMA, so at most 80 % of the fp64 peak).
    Summed over launches before the share is taken; precisions with no count are left out.
    Each count is the sm__ metric, else the smsp__ one (as flop_counts)."""
    out: dict[str, tuple[float, float]] = {}
    for precision, _, names in _INST_PLAN:
        got = []
        for a, a2 in names:
            v = m.get(a)
            if v is None or v != v:
                v = m.get(a2)
            got.append(v if v is not None and v == v else 0.0)
        add, mul, fma = got
        if add + mul + fma > 0:
            out[precision] = (add + mul, fma)
    return out

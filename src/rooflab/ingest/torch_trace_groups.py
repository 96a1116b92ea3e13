"""The groups a chrome trace's op calls are summed into (one per op, input shapes, dtypes
and constant arguments): their names (made unique), the Kernel each becomes, and the notes
about them (cat's assumed dtype, warm-up, uncounted ops, device events linked to no op).
Split from ingest/torch_trace.py.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from ..model.kernel import Kernel
from ..model.opkind import is_matrix
from ..model.provenance import DERIVED, MEASURED
from ..sides import share_text
from ..units import fmt_seconds
from .torch_ops_base import dtype_of, precision_of
from .torch_ops_loss import args_text as _loss_args_text
from .torch_ops_memory import CAT_ASSUMED_DTYPE
from .torch_ops_reduce import args_text as _reduce_args_text

# Whose shape formula gave a group's FLOP (its meta "flop_source"): rooflab's rule, or the
# profiler's own "flops" argument (older kineto traces). Both are formulas of the recorded
# shapes, no hardware counter: the provenance says "derived" for either (model/provenance.py).
RULE_FLOP = "rooflab rule"
PROFILER_FLOP = "torch.profiler flops"


@dataclass
class _Group:
    name: str
    op: str
    shapes: tuple
    types: tuple
    args: tuple = ()
    flop: float = 0.0
    bytes: float = 0.0
    precision: str = "fp32"
    unit: str | None = None
    samples: list[float] = field(default_factory=list)
    flop_source: str = RULE_FLOP   # meta["flop_source"]: whose formula gave the FLOP
    assumed: str = ""   # what the count assumed (cat's dtype), for the kernel's meta
    # the names of the GPU kernels its calls launched (the device events linked to each
    # call's op tree by External id; torch_trace._Tally carries them), for tf32_kernel
    gpu_kernels: set[str] = field(default_factory=set)


# Words in the names of cuDNN/cuBLAS/CUTLASS kernels that run fp32 math on TF32 tensor
# cores (Ampere and later: sm80_xmma_fprop_implicit_gemm_tf32f32_..., cutlass
# ..._tensorop_s1688gemm_..., ampere_s16816gemm_...). cuDNN allows TF32 for fp32
# convolutions by default (torch.backends.cudnn.allow_tf32 = True), so an fp32 conv held
# to fp32 CUDA cores read 405 % of its roof (review s21 r3 F8).
# Not "xmma" alone: sm80_xmma_gemm_f32f32_f32f32_f32_..._ffma_... is cuBLAS's plain fp32
# CUDA-core GEMM (allow_tf32 off); a name that says ffma/sgemm ran on CUDA cores (s21 x3 F1).
TF32_MARKERS = ("tf32", "tensorop", "s1688", "s16816")
CUDA_CORE_MARKERS = ("ffma", "sgemm")


def tf32_kernel(g: _Group, precision: str) -> str | None:
    """The first (sorted) GPU kernel of an fp32 matrix op (conv, mm, linear...) whose name
    says it ran on TF32 tensor cores (TF32_MARKERS); None otherwise."""
    if precision != "fp32" or not is_matrix(g.op):
        return None
    for name in sorted(g.gpu_kernels):
        low = name.lower()
        if any(m in low for m in TF32_MARKERS) and not any(m in low for m in CUDA_CORE_MARKERS):
            return name
    return None


def tf32_note(op: str, kernel_name: str) -> str:
    """What the kernel's meta note says about a group placed on the tf32 tensor ceiling."""
    return (f"fp32 {op} ran on TF32 tensor cores (its GPU kernel {kernel_name}): held to the "
            f"tf32 tensor ceiling, not fp32 CUDA cores (cuDNN/cuBLAS use TF32 for fp32 on "
            f"Ampere and later where torch.backends.cudnn.allow_tf32 / "
            f"torch.backends.cuda.matmul.allow_tf32 allow it)")


def _cat_note(groups: dict[tuple, _Group]) -> str:
    if not any(g.op == "cat" and g.assumed for g in groups.values()):
        return ""
    return (f"aten::cat: the profiler records no dtypes for a tensor list; its bytes "
            f"assume {CAT_ASSUMED_DTYPE} elements (halve them for fp16/bf16 tensors)")


def _unique_names(groups: list[_Group]) -> None:
    """Groups that differ only in dtypes (an fp32 and an fp64 mm of one shape) or constant
    arguments would share a name, and the table, report and compare match kernels by name:
    such groups get their input dtypes ('aten::mm [256x256, 256x256] (fp64)') or their
    arguments ('(stride 1x2, padding 1x1, dilation 1x1)') appended; a clash left after that
    is numbered."""
    for text in (_dtype_text, _args_text):
        by_name: dict[str, list[_Group]] = {}
        for g in groups:
            by_name.setdefault(g.name, []).append(g)
        for clash in by_name.values():
            if len({text(g) for g in clash}) > 1:
                for g in clash:
                    g.name = f"{g.name} ({text(g)})"
    seen: dict[str, int] = {}
    for g in groups:
        seen[g.name] = seen.get(g.name, 0) + 1
        if seen[g.name] > 1:
            g.name = f"{g.name} #{seen[g.name]}"


def _dtype_text(g: _Group) -> str:
    """The tensor inputs' dtypes in order ('fp64 scalar, fp32': a 0-dim tensor, which the
    shapes leave out), one name if all agree."""
    names = [f"{dtype_of(t)}{' scalar' if d == () else ''}"
             for d, t in zip(g.shapes, g.types, strict=False)
             if d is not None and dtype_of(t) is not None]
    return ", ".join(dict.fromkeys(names)) if len(set(names)) == 1 else ", ".join(names)


def _args_text(g: _Group) -> str:
    """A conv's stride, padding and dilation ('stride 1x2, ...'), attention's mask."""
    def dims(i: int) -> str:
        text = g.args[i] if i < len(g.args) else ""
        return text.strip("[]").replace(", ", "x") or "?"

    if g.op in ("sum", "mean"):
        return _reduce_args_text(g.args)
    if g.op.startswith("nll_loss"):
        return _loss_args_text(g.op, g.args)
    if g.op.endswith("_backward") and g.args:   # output_mask, last: the gradients made
        return f"output_mask {g.args[-1]}"
    if g.op.startswith("conv"):
        extra = [f"groups {g.args[8]}"] if len(g.args) > 8 and g.args[8] not in ("", "1") else []
        return ", ".join([f"stride {dims(3)}", f"padding {dims(4)}", f"dilation {dims(5)}"]
                         + extra)
    if g.op == "attention":
        return "causal" if len(g.args) > 5 and g.args[5] == "True" else "not causal"
    return ", ".join(a for a in g.args if a)


def _uncounted_note(kernels: list[Kernel], uncounted: dict[str, float], host_s: float = 0.0,
                    unshaped: set[str] | frozenset = frozenset()) -> str:
    """'N% of op time is in ops without a FLOP formula (not drawn): ...'; the time shares
    are of the same total (meta uncounted_s: these ops and the host<->device copies), so
    they, N and the copies' share make 100 %. Ops that have a formula but were recorded
    without the shapes or dtypes it needs (`unshaped`) are named as such, not as ops
    without a formula (review r7 F5)."""
    if not uncounted:
        return ""
    total = sum(k.seconds or 0.0 for k in kernels) + sum(uncounted.values()) + host_s
    top = sorted(uncounted.items(), key=lambda kv: -kv[1])[:4]
    share = sum(uncounted.values()) / total if total else 0.0
    ruled = sorted(n for n in unshaped if n in uncounted)
    what = ("ops without a FLOP formula (not drawn)" if not ruled else
            f"ops not counted (not drawn; {', '.join(ruled[:3])}"
            f"{' and others' if len(ruled) > 3 else ''} recorded without shapes or dtypes "
            f"{'its' if len(ruled) == 1 else 'their'} formula can use: see the warnings)")
    return (f"{share_text(100 * share)} of op time is in {what}: "
            + ", ".join(f"{n} {fmt_seconds(s)}" for n, s in top))


# The defaults a rule takes for constant arguments the trace did not record ("Concrete
# Inputs" came with torch 2.1): what the count assumed, by op.
_DEFAULTS = {"aten::convolution": "stride 1, padding 0, dilation 1, not transposed (groups "
                                  "from the shapes)",
             "aten::convolution_backward": "stride 1, padding 0, dilation 1, all three "
                                           "gradients",
             "aten::scaled_dot_product_attention": "not causal",
             "aten::sum": "over every dimension", "aten::mean": "over every dimension"}


def _defaults_note(defaults: dict[str, int],
                   inferred: dict[str, dict[str, int]] | None = None) -> str:
    """Ops counted without their constant arguments (no 'Concrete Inputs': torch < 2.1, or
    a trace whose tool dropped them): what was inferred from the shapes (a conv's stride
    and padding from its output's), and the defaults assumed elsewhere: a stride-2 conv
    counted at stride 1 has ~4x its FLOP, a causal attention counted dense 2x (review r7
    F2)."""
    if not defaults and not inferred:
        return ""
    said = []
    for name, hows in (inferred or {}).items():
        for how, calls in sorted(hows.items(), key=lambda kv: -kv[1])[:3]:
            said.append(f"{name} at {how} ({calls} call{'s' if calls > 1 else ''})")
    for name, calls in sorted(defaults.items(), key=lambda kv: -kv[1]):
        assumed = _DEFAULTS.get(name, "not causal" if "attention" in name
                                else "the default of each argument")
        said.append(f"{name} at the defaults: {assumed} ({calls} call{'s' if calls > 1 else ''})")
    high = "defaults assumed, so their FLOP and bytes may be high; " if defaults else ""
    return ("no constant arguments recorded ('Concrete Inputs': torch < 2.1, or dropped "
            f"by a tool): {high}counted with " + "; ".join(said)
            + (" - profile with torch >= 2.1 for the real ones" if defaults else ""))


def _autocast_note(autocast: dict[str, int]) -> str:
    """Calls counted with the dtypes of the same op re-dispatched inside them (autocast)."""
    if not autocast:
        return ""
    calls = sum(autocast.values())
    names = ", ".join(sorted(autocast))
    return (f"autocast: {calls} call{'s' if calls > 1 else ''} of {names} ran again inside "
            f"themselves on cast copies of their inputs; counted with the inner call's "
            f"dtypes (precision, bytes), timed by the outer call, so their time includes "
            f"the casts (aten::to/copy_) and the cast bytes are not in their AI")


def _warmup_note(groups: dict[tuple, _Group]) -> str:
    slow_first = [g.name for g in groups.values() if len(g.samples) >= 3
                  and g.samples[0] > 5 * statistics.median(g.samples[1:])]
    if not slow_first:
        return ""
    return (f"the first call of {', '.join(slow_first[:3])}"
            f"{' and others' if len(slow_first) > 3 else ''} took over 5x the median "
            f"of the later calls (warm-up: lazy initialisation, cold caches); the "
            f"totals include it - profile more iterations, or skip warm-up steps "
            f"with torch.profiler.schedule")


def _lost_note(n_lost: int, n_zero: int, n_stray: int, lost_s: float, on_gpu: bool) -> str:
    """The device events linked to no op and their time: without any link (`n_lost`), with
    External id 0 (`n_zero`: kineto's mark of a launch outside any op) and with an External
    id that names no op (`n_stray`: a record_function or ProfilerStep range's, review r7
    F3)."""
    if not n_zero and not n_stray:
        why = "no 'External id', no launch call with their 'correlation'"
    else:
        why = "; ".join(w for w in (
            f"{n_lost} with no 'External id' nor a launch call's 'correlation'"
            if n_lost else "",
            f"{n_zero} with External id 0: launched outside any op" if n_zero else "",
            f"{n_stray} whose External id is no cpu_op: launched inside a record_function "
            f"or ProfilerStep range, not an aten op (custom extensions, direct CUDA calls)"
            if n_stray else "") if w)
    return (f"{n_lost + n_zero + n_stray} GPU kernel/memcpy event(s), {fmt_seconds(lost_s)}, "
            f"are linked to no op ({why})"
            + ("" if on_gpu else "; op times are CPU durations (launch cost), not "
               "GPU time") + ": not counted")


def _kernel(g: _Group, path: str, on_gpu: bool, uncounted_s: float = 0.0) -> Kernel:
    """The group's Kernel; meta uncounted_s (the trace's time in ops without a formula)
    joins the total its time share is of (model.analysis.share_totals)."""
    meta = {"source": "torch.profiler", "op": g.op, "file": path,
            "shapes": [list(d) if d is not None else None for d in g.shapes],
            "dtypes": list(g.types), "byte_model": "compulsory traffic from shapes and dtypes",
            "time": "cuda kernels" if on_gpu else "cpu op"}
    if g.assumed:
        meta["assumed"] = g.assumed
    meta["flop_source"] = g.flop_source
    if uncounted_s > 0:
        meta["uncounted_s"] = uncounted_s
    precision, unit = g.precision or precision_of(g.types), g.unit
    tf32 = tf32_kernel(g, precision) if on_gpu else None
    if tf32 is not None:
        precision, unit = "tf32", "tensor"
        meta["gpu_kernel"] = tf32
        meta["note"] = tf32_note(g.op, tf32)
    return Kernel(name=g.name, flop={precision: g.flop},
                  bytes={"DRAM": g.bytes}, seconds=sum(g.samples), calls=len(g.samples),
                  samples=tuple(g.samples), unit=unit, meta=meta,
                  provenance={"flop": DERIVED, "bytes": DERIVED, "seconds": MEASURED})

"""Count the FLOP and compulsory bytes of PyTorch code by watching the ops it dispatches.

FLOP: `torch.utils.flop_counter.FlopCounterMode` (matmuls, convolutions, attention; 2 FLOP
per multiply-add). Ops it counts as 0 get a per-element figure from `PER_ELEMENT` when
rooflab knows the op family; anything else stays 0 and is listed as uncounted. The FLOP
rules live in bench/torch_flop_rules.py (the pure counts in workloads/torch_rules/), the byte
model in bench/torch_bytes.py.

Bytes: a `TorchDispatchMode` adds, for every dispatched op, the sizes of its distinct input
tensors (read once) and output tensors (written once): the compulsory-traffic model of
`rooflab.workloads.count.COMPULSORY`. A tensor passed twice (`x * x`) is read once; an
in-place op reads and writes its `self` (`add_`), except the write-only ones (`copy_`,
`fill_`, `zero_`, `normal_`, `index_put_`: `WRITE_ONLY`), which only write it; an `out=`
tensor is written, not read. A tensor is charged the storage its view spans, never more
than its logical size: an expanded (stride-0) input reads its storage once. A gather
(`embedding`, `index`, `index_select`, `gather`) reads the rows it looks up (its output's
size), not its whole source. View ops (`t`, `view`, `expand`, ...) and allocations
(`empty*`) move no bytes. Traffic between ops is counted per op, as if nothing stayed in
cache: the sum over ops is what unfused kernels move, which is what eager PyTorch runs.

Fused bytes: besides the per-op sum, a counted call records the traffic of the same work
done in one pass (`TorchCount.fused_bytes`): the tensors it read that it did not produce,
read once, plus the tensors it returns and the inputs it wrote, written once. That is the
compulsory traffic a fused kernel (torch.compile's, a hand-written one) cannot go below:
eager softmax over 1024x4096 fp32 sums 134 MB over its five ops, fused 33.6 MB.

TF32: on CUDA, PyTorch runs fp32 convolutions on TF32 tensor cores while
`torch.backends.cudnn.allow_tf32` is on (its default; `cudnn.conv.fp32_precision` "tf32"
in torch >= 2.9), and fp32 matmuls when `torch.backends.cuda.matmul.allow_tf32` or
`set_float32_matmul_precision("high")` says so. Those ops are counted as tf32 FLOP on the
tensor unit, the ceiling that binds them (held to the fp32 vector ceiling, a cuDNN conv
on an A100 would run 8x "below its floor"); meta["tf32_note"] says so.

Units: FLOP of matrix work (FlopCounterMode's matmuls and convolutions, attention,
`_int_mm`) count on the tensor unit where the precision has one (workloads.ops'
_matrix_unit), the rest (per-element table, FFT, `mv`/`dot`: ops.gemv's unit) on the
vector units; a Kernel carries one unit, that of the larger FLOP share (TorchCount.unit).

torch is imported only by the functions here (the caller imports this module lazily).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..measure_checks import unrun
from ..units import canonical_dtype, flop_precision, fmt_share
from ..workloads.count import COMPULSORY
from ..workloads.ops_conv import conv_unit
from ..workloads.torch_rules.flop import (  # noqa: F401  (docs/ingest.md names 3 of them here)
    BACKWARD_PER_ELEMENT,
    COMPARISONS,
    MOVEMENT,
    PER_ELEMENT,
    reduction_flop,
)
from ..workloads.torch_rules.loss import NLL_OPS
from ..workloads.torch_rules.traffic import NO_TRAFFIC
from .torch_bytes import (
    _fused_reads,
    _is_self_write,
    _OnePass,
    _split_args,
    _tensors,
    _traffic,
)
from .torch_flop_rules import FORMULAS, complex_flop, table_flop
from .torch_layer_rules import LAYER_FORMULAS
from .torch_loss_rules import nll_work
from .torch_pool_rules import POOL_FORMULAS

# rooflab's formulas, FLOP rules', the fused layer ops' (bench/torch_layer_rules.py) and
# pooling / group norm / upsample (bench/torch_pool_rules.py, the trace rules' counts)
ALL_FORMULAS = {**FORMULAS, **LAYER_FORMULAS, **POOL_FORMULAS}
# In-place view ops: they change a tensor's metadata (shape, strides), move no data and do
# no arithmetic (F.linear on a 1-D input ends in squeeze_): not recorded, like the views.
_INPLACE_VIEWS = frozenset({"squeeze_", "unsqueeze_", "t_", "transpose_", "as_strided_",
                            "swapdims_", "swapaxes_"})


@dataclass(frozen=True)
class OpRecord:
    """One dispatched op: its FLOP (with where the figure came from) and compulsory bytes."""

    op: str
    precision: str
    flop: float
    bytes: float
    flop_source: str   # FlopCounterMode | rooflab formula | per-element table | movement | ...
    unit: str | None = None   # tensor | vector | None (matrix work in a precision with no
                              # tensor unit: any ceiling of the precision)
    device: str = "cpu"       # where its tensors lived ("cuda:0"): the clock to time it by


ANY_UNIT = "any"   # flop_by_unit's key for FLOP with unit None


def unit_of(by_unit: Mapping[str, float]) -> str | None:
    """The unit of the larger FLOP share of `by_unit` (flop_by_unit's form); None when
    there is no FLOP or the larger share has no unit ("any"). measure_runs applies it to
    a decorated function's summed calls too, so the kernel's unit is the total's."""
    if not by_unit:
        return None
    best = max(by_unit.items(), key=lambda kv: kv[1])[0]
    return None if best == ANY_UNIT else best


def unit_note(by_unit: Mapping[str, float]) -> str | None:
    """meta["unit_note"] for FLOP on more than one unit: each unit's share and the unit the
    kernel is held to; None for one unit or none."""
    if len(by_unit) <= 1:
        return None
    total = sum(by_unit.values())
    shares = ", ".join(f"{fmt_share(v / total)} {k}" for k, v in by_unit.items())
    return (f"FLOP on more than one unit ({shares}); the kernel is held to the "
            f"{unit_of(by_unit) or ANY_UNIT} unit, the larger share")


@dataclass(frozen=True)
class TorchCount:
    """What a stretch of PyTorch code dispatched, op by op."""

    ops: tuple[OpRecord, ...]
    fused_bytes: float | None = None   # one-pass traffic (module doc); None: returns unknown
    unrun: str | None = None   # no ops, and the call returned a coroutine / lazy iterator

    @property
    def devices(self) -> tuple[str, ...]:
        """The devices the ops' tensors lived on, in order of first use."""
        return tuple(dict.fromkeys(r.device for r in self.ops))

    @property
    def flop(self) -> dict[str, float]:
        """FLOP by precision (precisions with 0 FLOP left out)."""
        out: dict[str, float] = {}
        for r in self.ops:
            if r.flop > 0:
                out[r.precision] = out.get(r.precision, 0.0) + r.flop
        return out

    @property
    def flop_by_unit(self) -> dict[str, float]:
        """FLOP by compute unit: "tensor", "vector", "any" (units with 0 FLOP left out)."""
        out: dict[str, float] = {}
        for r in self.ops:
            if r.flop > 0:
                key = r.unit or ANY_UNIT
                out[key] = out.get(key, 0.0) + r.flop
        return out

    @property
    def unit(self) -> str | None:
        """The Kernel's unit: the unit of the larger FLOP share. A Kernel carries one unit;
        a tensor kernel's other precisions go to the vector units anyway
        (model.ceiling._unit_of_part), so only same-precision mixes are held to the
        majority's unit (meta's unit_note says so)."""
        return unit_of(self.flop_by_unit)

    @property
    def bytes(self) -> float:
        return float(sum(r.bytes for r in self.ops))

    @property
    def uncounted(self) -> tuple[str, ...]:
        """Ops that are neither counted nor pure data movement: their FLOP are missing."""
        return tuple(dict.fromkeys(r.op for r in self.ops if r.flop_source == "none"))

    def summary(self) -> dict[str, dict[str, float]]:
        """Per op name: calls, FLOP, bytes (for a kernel's meta)."""
        out: dict[str, dict[str, float]] = {}
        for r in self.ops:
            row = out.setdefault(r.op, {"calls": 0, "flop": 0.0, "bytes": 0.0})
            row["calls"] += 1
            row["flop"] += r.flop
            row["bytes"] += r.bytes
        return out

    def meta(self) -> dict[str, Any]:
        d: dict[str, Any] = {"byte_model": COMPULSORY + "; summed per dispatched op",
                             "ops": self.summary()}
        by_unit = self.flop_by_unit
        if by_unit:
            d["flop_by_unit"] = by_unit
        note = unit_note(by_unit)
        if note:
            d["unit_note"] = note
        if self.uncounted:
            d["uncounted_ops"] = list(self.uncounted)
        if self.fused_bytes is not None:
            d["fused_bytes"] = self.fused_bytes
        if any(r.precision == "tf32" for r in self.ops):   # torch has no tf32 dtype: the rule
            d["tf32_note"] = TF32_NOTE
        return d


def torch_precision(dtype) -> str:
    """rooflab's precision name for a torch dtype (complex counts as its real part)."""
    text = str(dtype).removeprefix("torch.")
    text = {"complex64": "float32", "complex128": "float64", "complex32": "float16",
            "bool": "bool", "uint8": "uint8"}.get(text, text)
    try:
        return flop_precision(canonical_dtype(text))
    except Exception:  # exotic dtypes (float8 variants, quantised): count under fp32
        return "fp8" if "float8" in text else "fp32"


def _matrix_unit(precision: str) -> str | None:
    from ..workloads.ops_common import TENSOR_DTYPES

    return "tensor" if precision in TENSOR_DTYPES else None


# Convolutions: the positions of (weight, transposed, groups) in each op's schema.
_CONV_ARGS = {"convolution": (1, 6, 8), "convolution_backward": (2, 7, 9)}


def _conv_unit(name: str, args, precision: str) -> str | None:
    w, transposed, groups = _CONV_ARGS[name]
    if len(args) <= groups:
        return _matrix_unit(precision)
    return conv_unit(precision, tuple(args[w].shape), int(args[groups]),
                     bool(args[transposed]))


def _precision_of(read: list, written: list) -> str:
    for t in read + written:
        if t.is_floating_point() or t.is_complex():
            return torch_precision(t.dtype)
    return torch_precision((read + written)[0].dtype) if read + written else "fp32"


# Ops PyTorch may run on TF32 tensor cores when their tensors are CUDA fp32 (module doc).
_CONVS = frozenset({"convolution", "_convolution", "convolution_backward",
                    "cudnn_convolution", "cudnn_convolution_transpose"})
_MATMULS = frozenset({"mm", "addmm", "bmm", "baddbmm", "_addmm_activation"})
TF32_NOTE = ("fp32 convolutions/matmuls on CUDA counted as tf32 on the tensor unit: PyTorch "
             "runs them on TF32 while torch.backends.cudnn.allow_tf32 (default on) or "
             "torch.backends.cuda.matmul.allow_tf32 is set; turn it off to run and count "
             "them as fp32")


def tf32_enabled(kind: str) -> bool:
    """Whether PyTorch lets cuDNN convolutions (kind "conv") or cuBLAS matmuls ("matmul")
    run fp32 on TF32: the newer fp32_precision setting when it is "tf32" or "ieee", else
    the allow_tf32 flag (torch 2.13: cudnn.conv.fp32_precision reads "tf32" by default,
    "none" once allow_tf32 is set False)."""
    import torch

    backend = torch.backends.cudnn if kind == "conv" else torch.backends.cuda.matmul
    scoped = getattr(backend, "conv", backend) if kind == "conv" else backend
    setting = getattr(scoped, "fp32_precision", "none")
    if setting in ("tf32", "ieee"):
        return setting == "tf32"
    if kind == "matmul" and torch.get_float32_matmul_precision() != "highest":
        return True
    return bool(getattr(backend, "allow_tf32", False))


def _tf32_kind(name: str) -> str | None:
    return "conv" if name in _CONVS else "matmul" if name in _MATMULS else None


def _device_of(tensors: list) -> str:
    """The device of an op's tensors ("cpu", "cuda:0"): its first tensor's."""
    return str(tensors[0].device) if tensors else "cpu"


def _make_mode(counter: FlopCounter):
    from torch.utils._python_dispatch import TorchDispatchMode

    class _BytesMode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            before = counter.flop_counter.get_total_flops()
            out = func(*args, **kwargs)
            counted = counter.flop_counter.get_total_flops() - before
            counter.record(func, args, kwargs, out, float(counted))
            return out

    return _BytesMode()


class FlopCounter:
    """Context manager: counts FLOP and compulsory bytes of the PyTorch ops run inside.

    >>> with FlopCounter() as c:
    ...     torch.mm(a, b)
    >>> c.result.flop, c.result.bytes
    """

    def __init__(self) -> None:
        from torch.utils.flop_counter import FlopCounterMode

        self.flop_counter = FlopCounterMode(display=False)
        self._records: list[OpRecord] = []
        self._one_pass = _OnePass()
        self._mode = None

    def __enter__(self) -> FlopCounter:
        self._records.clear()
        self._one_pass.clear()
        self.flop_counter.__enter__()
        self._mode = _make_mode(self)
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._mode.__exit__(*exc)
        finally:
            self._mode = None
            self.flop_counter.__exit__(*exc)

    @property
    def result(self) -> TorchCount:
        return TorchCount(ops=tuple(self._records))

    def result_returning(self, returned) -> TorchCount:
        """The count of a call that returned `returned`, with its fused (one-pass) bytes.
        A call with no ops that returned a coroutine, async generator or lazy iterator ran
        none of its work: `unrun` names it (and a coroutine is closed), so the caller says
        that rather than "dispatched no PyTorch ops" (measure_checks.unrun)."""
        kind = None
        if not self._records:
            kind = unrun(returned)
        return TorchCount(ops=tuple(self._records), fused_bytes=self._one_pass.total(returned),
                          unrun=kind)

    def record(self, func, args, kwargs, out, counted: float) -> None:
        name = func._overloadpacket.__name__ if hasattr(func, "_overloadpacket") else str(func)
        if getattr(func, "is_view", False) or name in _INPLACE_VIEWS:
            return
        if name in NO_TRAFFIC:   # an allocation is made here, though it moves nothing yet
            self._one_pass.op([], _tensors(out), [])
            return
        read, out_args = _split_args(func, args, kwargs)
        written = _tensors(out)
        if not read and not written:
            return
        nbytes = _traffic(name, func, args, kwargs, read, written)
        targets = out_args + ([args[0]] if args and _is_self_write(func) else [])
        self._one_pass.op(_fused_reads(name, func, args, kwargs, read, written), written,
                          targets)
        precision = _precision_of(read, written)
        device = _device_of(read + written)
        unit: str | None = None
        nll = nll_work(name, args) if name in NLL_OPS else None
        if nll is not None:   # a gather: the trace rule's FLOP and bytes (torch_loss_rules)
            (flop, nbytes), source, unit = nll, "rooflab formula", "vector"
        elif name in ALL_FORMULAS:
            formula, unit = ALL_FORMULAS[name]
            flop, source = formula(func, args, kwargs), "rooflab formula"
            unit = unit or _matrix_unit(precision)
            if flop is None:   # the formula cannot count this call (a nested batch)
                flop, source = 0.0, "none"
        elif counted > 0:
            flop, source = counted, "FlopCounterMode"
            kind = _tf32_kind(name)
            # a depthwise conv is vector work even in tf32 (ops_conv.conv_unit): cuDNN runs
            # it fp32 FMA, no TF32 (review s28 R3 F6: relabelled tf32 first, it read as
            # tf32 vector work with a fallback note)
            depthwise = name in _CONV_ARGS and _conv_unit(name, args, "tf32") == "vector"
            if (precision == "fp32" and kind and device.startswith("cuda")
                    and not depthwise and tf32_enabled(kind)):
                precision = "tf32"   # what the tensor cores run (module doc)
            unit = _matrix_unit(precision)   # matmuls and convolutions
            if name in _CONV_ARGS:
                unit = _conv_unit(name, args, precision)
        elif name in MOVEMENT:
            flop, source = 0.0, "movement"
        elif name.rstrip("_") in COMPARISONS:
            flop, source = 0.0, "comparison"
        else:
            # In-place variants (add_, mul_) count like their functional op.
            found = table_flop(name.rstrip("_") or name, func, args, kwargs, read, written)
            flop, source = (found, "per-element table") if found is not None else (0.0, "none")
            unit = "vector" if found else None
        flop, source = complex_flop(name.rstrip("_") or name, flop, source, read, written)
        self._records.append(OpRecord(op=f"aten.{name}", precision=precision,
                                      flop=float(flop), bytes=nbytes, flop_source=source,
                                      unit=unit if flop > 0 else None, device=device))


def count_call(fn: Callable[..., Any], args: tuple = (), kwargs: Mapping[str, Any] | None = None
               ) -> tuple[Any, TorchCount]:
    """Run fn(*args, **kwargs) once under the counter: (its result, the count, with the
    fused bytes of what it returned)."""
    with FlopCounter() as counter:
        result = fn(*args, **dict(kwargs or {}))
    return result, counter.result_returning(result)


_WARM = [False]


def warm_up() -> None:
    """Pay the counter's first-use cost once per process, outside any timed region: the
    first op dispatched under its modes imports torch._dynamo (torch/_compile.py; ~2-3 s,
    review 17b N6), so a single timed run counted cold would time mostly rooflab. Runs one
    tiny op under a throwaway counter (a few ms once warm)."""
    if _WARM[0]:
        return
    import torch

    with FlopCounter():
        torch.ones(2, 2) @ torch.ones(2, 2) + 1.0
    _WARM[0] = True

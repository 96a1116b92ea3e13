"""The reference kernel zoo: ~20 well-understood kernels timed and placed on the roof.

Each kernel's FLOP and bytes come from rooflab.workloads.ops (compulsory traffic, 2 FLOP
per multiply-add); its time from the probe's timer (median per call, samples kept).
Because the counts are known exactly, the zoo is also a check of the model: a kernel
measured faster than its roofline floor by more than the noise flags a wrong count or a
wrong roof (rooflab.bench.check).

Backends: numpy (and numpy.fft) on the CPU (device="cpu"); PyTorch on a CUDA device
(device="cuda[:N]") or on PyTorch's CPU device (device="torch-cpu", which exercises the
GPU code path on machines without one).
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import InputError, require
from ..model.ceiling import Roof
from ..model.kernel import Kernel
from ..workloads import ops
from ..workloads.count import OpCount
from . import kernels as impl

Progress = Callable[[str, float], None]

# A kernel for `rooflab demo`: one per corner of the roof (streaming, reduction, matrix-
# vector, small and large GEMM, a normalisation).
DEMO_NAMES = ("triad_fp64", "sum_fp64", "gemv_fp64", "gemm_fp64_256", "gemm_fp64_1024",
              "softmax_fp32")
# Per-array size of the streaming kernels: at least 64 MiB, and twice the last-level
# cache, so copy (2 arrays) and triad (3) have working sets >= 4x the LLC (STREAM's rule).
STREAM_MIN_BYTES = 64 * 2**20
FFT_SORT_DIVISOR = 4     # FFT and sort are slower per byte: a quarter of the stream size


@dataclass(frozen=True)
class Spec:
    """One zoo kernel: its analytic count, how to build it, and where the model bends."""

    name: str
    kind: str                      # copy, scale, add, triad, sum, dot, gemv, matmul, ...
    count: OpCount
    numpy: Callable[[], impl.Call]
    note: str = ""                 # where this implementation departs from the byte model


def llc_bytes() -> int | None:
    """The largest cache the OS reports (sysfs), or None when it reports none."""
    sizes = []
    for path in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        text = path.read_text().strip().upper()
        mult = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
        try:
            sizes.append(int(text.rstrip("KMG")) * mult)
        except ValueError:
            continue
    return max(sizes) if sizes else None


def _stream_elements(itemsize: int, small: bool) -> int:
    if small:
        return 1 << 14
    per_array = max(STREAM_MIN_BYTES, 2 * (llc_bytes() or 0))
    return per_array // itemsize


def _stream(name: str, kind: str, dtype: str, small: bool, builder, *, inputs: int,
            outputs: int, flop: float, note: str = "", op: str | None = None) -> Spec:
    n = _stream_elements(8 if dtype == "fp64" else 4, small)
    count = ops.elementwise(n, dtype, inputs=inputs, outputs=outputs, flop_per_element=flop,
                            name=name)
    # an op of its own where the kind is judged apart from elementwise (a dot: read-only)
    return Spec(name, kind, replace(count, op=op) if op else count,
                lambda: builder(n, dtype), note)


def specs(small: bool = False) -> tuple[Spec, ...]:
    """The zoo's kernels; small=True shrinks every size (tests, smoke runs)."""
    s = _stream
    n64 = _stream_elements(8, small)
    rows, cols = (64, 256) if small else (4096, 4096)
    gm = 256 if small else 4096
    nfft = 1 << (12 if small else int(math.log2(n64 // FFT_SORT_DIVISOR)))
    nsort = 1 << 12 if small else n64 // FFT_SORT_DIVISOR
    gemms = ((64, "fp64"), (128, "fp32")) if small else (
        (64, "fp64"), (256, "fp64"), (1024, "fp64"), (1024, "fp32"), (2048, "fp32"))
    conv = dict(n=1, c=8, h=16, w=16, k=8) if small else dict(n=4, c=64, h=32, w=32, k=64)
    one_thread = "numpy ufuncs run on one thread; the probe's roof uses all cores"
    out: list[Spec] = [
        s("copy_fp64", "copy", "fp64", small, impl.np_copy, inputs=1, outputs=1, flop=0,
          note=one_thread),
        s("scale_fp64", "scale", "fp64", small, impl.np_scale, inputs=1, outputs=1, flop=1,
          note=one_thread),
        s("add_fp64", "add", "fp64", small, impl.np_add, inputs=2, outputs=1, flop=1,
          note=one_thread),
        s("triad_fp64", "triad", "fp64", small, impl.np_triad, inputs=2, outputs=1, flop=2,
          note=one_thread + "; numpy makes two passes per L2-sized block"),
        s("triad_fp32", "triad", "fp32", small, impl.np_triad, inputs=2, outputs=1, flop=2,
          note=one_thread + "; numpy makes two passes per L2-sized block"),
        Spec("sum_fp64", "sum", ops.reduction(n64, "fp64", name="sum_fp64"),
             lambda: impl.np_sum(n64, "fp64"), one_thread),
        # dot: 2 FLOP per element pair, both vectors read, the scalar result in a register.
        # op "dot", not "elementwise": it stores nothing, so its count is real traffic and
        # it is judged as sum and gemv are (byte_convention.READ_ONLY_KINDS; review r4 F7)
        s("dot_fp64", "dot", "fp64", small, impl.np_dot, inputs=2, outputs=0, flop=2,
          op="dot"),
        Spec("gemv_fp64", "gemv", ops.gemv(gm, gm, "fp64", name="gemv_fp64"),
             lambda: impl.np_gemv(gm, gm, "fp64")),
    ]
    for size, dtype in gemms:
        name = f"gemm_{dtype}_{size}"
        out.append(Spec(name, "matmul", ops.matmul(size, size, size, dtype, name=name),
                        lambda size=size, dtype=dtype: impl.np_gemm(size, size, size, dtype)))
    b = 16 if small else 256
    out += [
        Spec("bgemm_fp32_32", "matmul", ops.matmul(32, 32, 32, "fp32", batch=b,
                                                   name="bgemm_fp32_32"),
             lambda: impl.np_gemm(32, 32, 32, "fp32", batch=b),
             f"{b} independent 32x32x32 products in one np.matmul call"),
        Spec("conv2d_fp32", "conv2d",
             ops.conv2d(**conv, r=3, s=3, padding=1, dtype="fp32", name="conv2d_fp32"),
             lambda: impl.np_conv2d(**conv, r=3, s=3, padding=1, dtype="fp32"),
             "tensordot builds an im2col copy (9x the input), not in the compulsory count"),
        Spec("softmax_fp32", "softmax", ops.softmax(rows, cols, "fp32", name="softmax_fp32"),
             lambda: impl.np_softmax(rows, cols, "fp32"),
             one_thread + "; row blocks sized for L2 keep the extra passes in cache"),
        Spec("layernorm_fp32", "layernorm",
             ops.layernorm(rows, cols, "fp32", name="layernorm_fp32"),
             lambda: impl.np_layernorm(rows, cols, "fp32"),
             one_thread + "; row blocks sized for L2 keep the extra passes in cache"),
        s("exp_fp32", "exp", "fp32", small, impl.np_exp, inputs=1, outputs=1, flop=1,
          note=one_thread + "; exp counts 1 FLOP per element (ops.py convention)"),
        Spec("fft_c128", "fft", fft_count(nfft), lambda: impl.np_fft(nfft),
             "pocketfft makes log-many passes; only one read and one write are counted"),
        Spec("sort_fp64", "sort", sort_count(nsort, "fp64"), lambda: impl.np_sort(nsort, "fp64"),
             "0 FLOP by definition; bytes are one read and one write, the sort's extra "
             "passes are not counted, so measured/floor says how many passes it makes"),
    ]
    return tuple(out)


def fft_count(n: int) -> OpCount:
    """Complex-to-complex FFT of length n in complex128: 5 n log2 n FLOP (the convention of
    FFTW's benchmarks, https://www.fftw.org/speed/method.html, which counts a radix-2
    Cooley-Tukey transform); bytes: the input read and the output written, 16 B each."""
    flop = 5.0 * n * math.log2(n)
    return OpCount(name="fft_c128", op="fft", flop=flop, bytes=32.0 * n, precision="fp64",
                   unit="vector", bytes_split={"read": 16.0 * n, "write": 16.0 * n},
                   shape={"n": n, "dtype": "complex128"},
                   byte_model="input read once, output written once (complex128, 16 B)")


def sort_count(n: int, dtype: str) -> OpCount:
    """Sorting n values: 0 FLOP (comparisons are not floating-point arithmetic); bytes: the
    input read once and the sorted output written once."""
    base = ops.elementwise(n, dtype, inputs=1, outputs=1, flop_per_element=0,
                           name=f"sort_{dtype}")
    return replace(base, op="sort", byte_model="input read once, sorted output written once; "
                   "the passes a sort makes over its data are not counted")


def select(names: Sequence[str] | None, small: bool = False) -> tuple[Spec, ...]:
    """Kernels by exact name or by kind/prefix ("gemm", "triad", "copy_fp64")."""
    every = specs(small)
    if not names:
        return every
    chosen: list[Spec] = []
    for token in (t.strip() for t in names):
        if not token:
            continue
        hits = [sp for sp in every if sp.name == token] or [
            sp for sp in every if sp.kind == token or sp.name.startswith(token)]
        if not hits:
            known = ", ".join(sp.name for sp in every)
            raise InputError(f"unknown zoo kernel '{token}'; choose from: {known} "
                             f"(or a prefix such as gemm, triad)")
        chosen += [h for h in hits if h not in chosen]
    return tuple(chosen)


def run_zoo(roof: Roof | None = None, names: Sequence[str] | None = None, device: str = "cpu",
            plan=None, progress: Progress | None = None, *, small: bool = False,
            clock=None) -> tuple[Kernel, ...]:
    """Time the zoo's kernels on `device` ("cpu": numpy; "torch-cpu"; "cuda[:N]": torch).

    With a roof, each kernel is checked against its floor (bench.check.check_floors).
    small=True shrinks the sizes (tests); clock replaces the timer's clock (tests).
    """
    from ..measure_clocks import device_clock
    from ..measuring import resolve_plan, timed_kernel
    from .check import check_floors

    chosen = select(names, small)
    timing_plan = resolve_plan(plan)
    torch_device = _torch_device(device)
    clk, sync = device_clock(torch_device or "cpu")
    clk = clock or clk
    out: list[Kernel] = []
    for i, sp in enumerate(chosen):
        if progress:
            progress(sp.name, i / len(chosen))
        call, backend = _build(sp, torch_device)
        c = sp.count
        out.append(timed_kernel(
            call, name=sp.name, flop={c.precision: c.flop}, bytes={"DRAM": c.bytes},
            provenance={"flop": "derived", "bytes": "derived"}, plan=timing_plan, clock=clk,
            sync=sync, unit=c.unit,
            meta={"op": c.op, "shape": dict(c.shape), "byte_model": c.byte_model,
                  "backend": backend, "device": device, "working_set_bytes": c.bytes,
                  **({"note": sp.note} if sp.note and backend == "numpy" else {})}))
        del call
        gc.collect()
    if progress:
        progress("done", 1.0)
    kernels = tuple(out)
    return check_floors(roof, kernels, llc_bytes()) if roof is not None else kernels


def check_device(device: str) -> str | None:
    """None for numpy ("cpu"); the torch device string otherwise; InputError if unknown."""
    return _torch_device(device)


def _torch_device(device: str) -> str | None:
    d = str(device).strip().lower()
    if d == "cpu":
        return None
    if d == "torch-cpu":
        return "cpu"
    if d.startswith("cuda"):
        return d
    raise InputError(f"device must be cpu, torch-cpu or cuda[:N]; got '{device}'")


def _build(sp: Spec, torch_device: str | None) -> tuple[impl.Call, str]:
    if torch_device is None:
        return sp.numpy(), "numpy"
    torch = require("torch", "torch", f"the zoo on device '{torch_device}'")
    dtype = sp.count.shape.get("dtype", "fp64")
    dtype = "fp64" if dtype == "complex128" else dtype
    shape = dict(sp.count.shape)
    kind = {"elementwise": sp.kind, "reduction": "sum"}.get(sp.count.op, sp.kind)
    call = impl.torch_call(torch, kind, shape, dtype, torch_device)
    if torch_device.startswith("cuda"):
        return call, "torch-cuda"
    return call, "torch-cpu"


def kernel_names(small: bool = False) -> tuple[str, ...]:
    return tuple(sp.name for sp in specs(small))

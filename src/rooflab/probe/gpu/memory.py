"""Memory ceilings: device copy and triad, the working-set sweep, host<->device transfers.

Bytes are counted as STREAM does (FACTS.md): explicit reads + writes, each element read
once and written once per call; copy moves 2 x 4 B per fp32 element, triad 3 x 4 B.
DRAM figures flush the L2 before every timed call (timing.py); the sweep keeps caches warm
on purpose, since its plateaus are the cache levels.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...model.ceiling import Ceiling
from ...units import fmt_times
from ..stats import rates, rates_warning
from .context import Context, measured_ceiling
from .sweep import find_plateaus, label_plateaus, run_sweep, sweep_sizes, sweep_to_dict
from .timing import time_calls

FP32 = 4
SWEEP_BLOCK = 2048         # fp32 elements per Triton program step: 8 KiB, 4 x 16 B loads per thread
L1_BLOCKS = (2048, 1024, 512)   # L1 sweep blocks: a 2 MiB set still gives every program one
# 8 programs x 4 warps x 48 registers (read sweep, Triton 3.9, sm_90) = 49,152 of 65,536: all
# SMs x 8 programs are resident at once, so none back-fills a slow one (hence the flat split).
PROGRAMS_PER_SM = 8
TRIAD_SCALAR = 1.5


def _stream_ops(ctx: Context):
    """(name, fn, bytes per call) for copy and triad through torch and through Triton."""
    torch, dev = ctx.torch, ctx.dev
    n = ctx.sizes.stream_bytes // FP32
    a, b, c = (torch.rand(n, device=dev) for _ in range(3))
    ops = [("copy_torch", lambda: b.copy_(c), 2 * n * FP32),
           ("triad_torch", lambda: torch.add(b, c, alpha=TRIAD_SCALAR, out=a), 3 * n * FP32)]
    k = ctx.triton_kernels()
    if k is not None:
        ops += [("copy_triton", lambda: k.launch_copy(c, b, n), 2 * n * FP32),
                ("triad_triton", lambda: k.launch_triad(a, b, c, TRIAD_SCALAR, n), 3 * n * FP32)]
    return ops


# Seed 000 §3.1: a copy reaches 85-92 % of the datasheet bandwidth and triad "another 5 to
# 10 % lower"; the seed takes the triad as its roof ("more conservative, closer to real").
TRIAD = "DRAM (triad)"
SEED_TRIAD_RATIO = (0.90, 0.95)


def stream(ctx: Context) -> list[Ceiling]:
    """The DRAM ceiling (the best copy: bytes read + written) and, beside it, TRIAD: the
    faster triad's median call, seed 000 §3.1's roof, kept as its own level so no kernel is
    judged against it unless it names that level (model/analysis.py memory_ceiling picks
    DRAM by name)."""
    best: Ceiling | None = None
    triads = []
    for name, fn, nbytes in _stream_ops(ctx):
        ctx.say(f"memory: {name.replace('_', ' ')}")
        try:
            timing = time_calls(fn, ctx.timer, ctx.sizes.plan)
        except Exception as exc:  # noqa: BLE001 — e.g. a Triton compile error: keep the rest
            ctx.skipped[name] = f"{type(exc).__name__}: {str(exc)[:300]}"
            continue
        # The copy is judged (>= 4.2 TB/s): its clocks under load, read right after it.
        clocks = {"clocks": ctx.clocks_now()} if name.startswith("copy") else {}
        ctx.keep(name, timing, nbytes, "bytes", kind="stream",
                 bytes_per_s_best=max(rates(nbytes, timing.samples)), **clocks)
        if name.startswith("triad"):
            triads.append((name, rates(nbytes, timing.samples)))
        if name.startswith("copy"):
            how = "torch Tensor.copy_" if name.endswith("torch") else "Triton copy kernel"
            ceiling = measured_ceiling(
                nbytes, timing, level="DRAM", source=ctx.source, clocks=clocks.get("clocks"),
                method=f"device copy of {ctx.sizes.stream_bytes / 2**20:.4g} MiB fp32 ({how}), "
                       f"bytes read + written, caches flushed between calls, best call")
            if best is None or ceiling.value > best.value:
                best = ceiling
    out = [best] if best is not None else []
    if triads:
        out.append(triad_ceiling(triads, best, ctx.source, ctx.sizes.stream_bytes))
    return out


def triad_ceiling(triads: list[tuple[str, tuple[float, ...]]], copy: Ceiling | None,
                  source: str, stream_bytes: int) -> Ceiling:
    """TRIAD from (op name, rate samples) of each triad run: the run with the higher median,
    valued at that median (seed 000 §3.1 "循环次数足够多取稳定后的平均值": a stable
    average, not a best call); provenance derived (a statistic chosen from measured calls,
    as the CPU's DRAM (real traffic) is derived), its method naming the ratio to the copy
    that the seed expects at 0.90-0.95."""
    from statistics import median

    name, samples = max(triads, key=lambda t: median(t[1]))
    value = median(samples)
    how = "torch.add(b, c, alpha)" if name.endswith("torch") else "Triton triad kernel"
    lo, hi = SEED_TRIAD_RATIO
    band = f"{fmt_times(lo).removesuffix('x')}-{fmt_times(hi)}"     # '0.90-0.95x'
    # best call to best call: like with like (the copy is its best call), s37 H
    ratio = (f"; its best call {fmt_times(max(samples) / copy.value)} the copy's best "
             f"{copy.value / 1e9:.4g} GB/s (seed 000 §3.1 expects {band})"
             if copy is not None else "")
    return Ceiling(value=value, level=TRIAD, provenance="derived", source=source,
                   method=f"derived from the measured triad a = b + s*c of "
                          f"{stream_bytes / 2**20:.4g} MiB fp32 per array ({how}), 3 x 4 B "
                          f"per element, caches flushed between calls: median call (seed "
                          f"000 §3.1's roof, more conservative than the best copy; judges "
                          f"only kernels whose level is '{TRIAD}'){ratio}",
                   samples=tuple(samples),
                   # derived from samples, so flagged by their spread as a measured one is
                   warnings=tuple(w for w in [rates_warning(TRIAD, samples)] if w))


@dataclass(frozen=True)
class SweepGrid:
    """How one working set is read: `nblocks` blocks of `block` fp32 elements, read `reps`
    times by `programs` Triton programs sharing the reps x nblocks reads (kernels.py)."""

    block: int
    nblocks: int
    programs: int
    reps: int

    @property
    def working_set_bytes(self) -> int:
        return self.nblocks * self.block * FP32

    @property
    def bytes_per_call(self) -> int:
        return self.reps * self.working_set_bytes


def sweep_grid(size: int, sms: int, call_bytes: float, l1: bool = False) -> SweepGrid:
    """The grid of one sweep point: SMs x PROGRAMS_PER_SM programs at every size, so small
    sets are not read by a partial grid (review 14a #1: 256-976 of 1056 programs below
    8.25 MiB). The L2 sweep keeps 8 KiB blocks: programs beyond nblocks read the same blocks
    in other reps. The L1 sweep needs each program to re-read its own blocks (in its own
    SM's L1): nblocks is a multiple of programs, with blocks of 2048, 1024 or 512 elements
    (the largest that leaves >= 4 blocks a program, rounding the set by <= 12.5 %; else 512,
    rounded to whole blocks a program)."""
    programs = sms * PROGRAMS_PER_SM
    block = SWEEP_BLOCK
    if l1:
        block = next((b for b in L1_BLOCKS if size >= 4 * programs * b * FP32), L1_BLOCKS[-1])
        nblocks = programs * max(1, round(size / (programs * block * FP32)))
    else:
        nblocks = max(1, size // (block * FP32))
    reps = max(1, round(call_bytes / (nblocks * block * FP32)))
    return SweepGrid(block, nblocks, programs, reps)


def sweep_reads(pid: int, nblocks: int, reps: int, programs: int) -> list[int]:
    """The blocks program `pid` reads, in order, as read_sweep_kernel splits the work: every
    programs-th of the reps x nblocks reads, starting at pid."""
    return [i % nblocks for i in range(pid, reps * nblocks, programs)]


def program_shares(grid: SweepGrid) -> list[int]:
    """Block reads per program (the kernel's flat loop: floor or ceil of the mean).
    (Used by tests as an oracle.)"""
    total = grid.reps * grid.nblocks
    return [len(range(pid, total, grid.programs)) for pid in range(grid.programs)]


def l1_sweep_sizes(lo: float, hi: float, step: float, sms: int) -> tuple[int, ...]:
    """The L1 sweep's sizes: geometric, each rounded to what sweep_grid(l1=True) reads."""
    sizes = [sweep_grid(s, sms, 1.0, l1=True).working_set_bytes
             for s in sweep_sizes(lo, hi, step)]
    return tuple(dict.fromkeys(sizes))


def _sweep_op(ctx: Context, cache: str):
    torch, dev = ctx.torch, ctx.dev
    k = ctx.triton_kernels()
    call_bytes = ctx.sizes.sweep_call_bytes

    def make_op(size: int):
        n = size // FP32
        x = torch.rand(n, device=dev)
        if k is None:
            reps = max(1, round(call_bytes / size))

            def fn():
                for _ in range(reps):
                    x.sum()
            return fn, float(reps * n * FP32)
        g = sweep_grid(size, ctx.host["multiprocessors"], call_bytes, l1=cache == "")
        out = torch.empty(g.programs * g.block, device=dev)
        return (lambda: k.launch_read_sweep(x, out, g.nblocks, g.reps, g.programs, g.block,
                                            cache),
                float(g.bytes_per_call))
    return make_op


def cache_sweep(ctx: Context) -> tuple[list[Ceiling], dict]:
    """Cache ceilings from working-set sweeps: L2 (and L1 on CUDA, and L3 on the CPU).

    On CUDA the main sweep loads with ".cg" (cached in L2 only), so its plateaus are L2 and
    DRAM; a second, shorter sweep with L1 caching on finds the L1 plateau where it exists.
    """
    caps = dict(ctx.host.get("caches") or {})
    if ctx.is_cuda and ctx.triton_kernels() is None:
        ctx.skipped["sweep"] = "the GPU working-set sweep needs Triton"
        return [], {}
    main_caps = {"L2": caps["L2"]} if ctx.uses_triton and "L2" in caps else caps
    if not main_caps:
        ctx.skipped["sweep"] = "cache sizes unknown on this device"
        return [], {}
    s = ctx.sizes
    # Whole 8 KiB blocks on the Triton path: the set recorded is the set read.
    sizes = sweep_sizes(s.sweep_lo, s.sweep_hi_l2 * max(main_caps.values()), s.sweep_step,
                        **({"align": SWEEP_BLOCK * FP32} if ctx.uses_triton else {}))
    ctx.say("memory: working-set sweep")
    points = run_sweep(sizes, _sweep_op(ctx, ".cg"), ctx.timer, s.sweep_plan)
    found = label_plateaus(find_plateaus([(p.working_set_bytes, p.bytes_per_s) for p in points]),
                           main_caps)
    extras = {"main": sweep_to_dict(points, found)}
    groups = [(found, points)]
    if ctx.uses_triton and "L1" in caps and s.sweep_step < 1.5:
        ctx.say("memory: L1 sweep")
        l1_sizes = l1_sweep_sizes(caps["L1"] / 16, caps["L1"] * 2, 1.5,
                                  ctx.host["multiprocessors"])
        l1_points = run_sweep(l1_sizes, _sweep_op(ctx, ""), ctx.timer, s.sweep_plan)
        l1 = label_plateaus(find_plateaus([(p.working_set_bytes, p.bytes_per_s)
                                           for p in l1_points]), {"L1": caps["L1"]}, outer="L2")
        extras["l1"] = sweep_to_dict(l1_points, l1)
        l2 = found.get("L2")
        if "L1" in l1 and (l2 is None or l1["L1"].bytes_per_s > l2.bytes_per_s):
            groups.append(({"L1": l1["L1"]}, l1_points))
    ceilings = []
    for levels, pts_all in groups:
        for level, plateau in levels.items():
            if level == "DRAM":
                continue   # DRAM comes from the copy, whose traffic is reads and writes
            pts = [p for p in pts_all
                   if plateau.first_bytes <= p.working_set_bytes <= plateau.last_bytes]
            samples = tuple(v for p in pts for v in p.samples)
            ceilings.append(Ceiling(
                value=plateau.bytes_per_s, level=level, provenance="measured",
                source=ctx.source,
                method=f"read sweep plateau from {plateau.first_bytes / 2**20:.2f} to "
                       f"{plateau.last_bytes / 2**20:.2f} MiB ({plateau.points} sets), median "
                       f"of the sets' medians, bytes read",
                samples=samples,
                warnings=tuple(w for w in [rates_warning(level, samples)] if w)))
    return ceilings, extras


# On a GPU that shares the CPU's DRAM (Jetson) a pinned host->device copy never leaves
# that DRAM: it is measured and kept under this label, never as a PCIe link.
UNIFIED_COPY = "host↔device copy (unified memory: DRAM to DRAM, no PCIe)"


def pinned_host_buffer(torch, n: int):
    """n bytes of pinned host memory, left unfilled. The values do not matter: a PCIe DMA
    copy moves bytes as they are (nothing compresses them), so a fill buys nothing, and
    torch.randint on the CPU cost about 20 ns a byte, single-threaded (5.5 s for the
    default 256 MiB), inside the probe's judged time (review s21 r8 F2)."""
    return torch.empty(n, dtype=torch.uint8).pin_memory()


def host_transfers(ctx: Context) -> list[Ceiling]:
    """Host<->device bandwidth with pinned host memory (CUDA only): the PCIe ceiling is
    host-to-device, the direction that feeds the GPU; device-to-host is kept in the record.
    On unified memory both copies go in the record only (UNIFIED_COPY): no link to judge,
    and the device copy already is the DRAM ceiling."""
    if not ctx.is_cuda or not ctx.sizes.host_bytes:
        ctx.skipped.setdefault("host_transfers", "host<->device transfers need a CUDA device")
        return []
    unified = bool(ctx.host.get("unified_memory"))
    torch, n = ctx.torch, ctx.sizes.host_bytes
    host, back = pinned_host_buffer(torch, n), pinned_host_buffer(torch, n)
    dev_buf = torch.empty(n, dtype=torch.uint8, device=ctx.dev)
    timer = ctx.timer.without_flush()
    out = []
    for name, fn in (("h2d_pinned", lambda: dev_buf.copy_(host, non_blocking=True)),
                     ("d2h_pinned", lambda: back.copy_(dev_buf, non_blocking=True))):
        ctx.say(f"memory: {name}")
        timing = time_calls(fn, timer, ctx.sizes.plan)
        ctx.keep(name, timing, n, "bytes", kind="host_transfer",
                 bytes_per_s_best=max(rates(n, timing.samples)),
                 **({"label": UNIFIED_COPY} if unified else {}))
        if name == "h2d_pinned" and not unified:
            out.append(measured_ceiling(
                n, timing, level="PCIe", source=ctx.source,
                method=f"host-to-device copy of {n / 2**20:.0f} MiB from pinned memory, best "
                       f"call (device-to-host is in extras)"))
    if unified:
        ctx.skipped["host_link"] = (
            f"no PCIe on unified memory: the {UNIFIED_COPY} is in extras.gpu.measurements "
            f"(h2d_pinned, d2h_pinned), not a ceiling; the device copy is the DRAM ceiling")
    return out

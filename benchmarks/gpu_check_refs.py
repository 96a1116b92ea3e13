"""gpu_check.py's reference kernels (bf16 matmul, copy, softmax) and how they are timed,
and its roofline chart. Split out of gpu_check.py (module size); torch, numpy and
matplotlib are imported lazily, as before."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

from rooflab.model.kernel import Kernel


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def log_errors(errors: dict) -> None:
    """Each step's traceback to stderr, before the table (the device tool keeps the tail)."""
    for name, tb in errors.items():
        log(f"--- error in {name} ---\n{tb}")


def reference_sizes(cuda: bool, quick: bool) -> tuple[int, int, tuple[int, int]]:
    """(matmul n, copy fp32 elements, softmax shape). On CUDA the bf16 matmul stays 8192 (the
    size the target was measured at); the copy is 256 MiB quick and 1 GiB default, each well
    past the L2 (the old quick size, 256 << 20 elements, was the default's 1 GiB again)."""
    n = 8192 if cuda else (128 if quick else 256)
    elems = (64 << 20 if cuda else 1 << 20) if quick else (256 << 20 if cuda else 4 << 20)
    return n, elems, ((8192, 8192) if cuda else (256, 1024))


def reference_kernels(torch, dev, quick: bool) -> list[tuple]:
    """(name, fn, flop by precision, bytes by level, unit) of the reference kernels."""
    n, elems, (rows, cols) = reference_sizes(dev.type == "cuda", quick)
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    src, dst = torch.rand(elems, device=dev), torch.empty(elems, device=dev)
    x = torch.randn(rows, cols, device=dev, dtype=torch.bfloat16)
    # FLOP and bytes: 2 n^3 and compulsory traffic (FACTS.md); softmax 4 FLOP per element
    # and one read + one write, as rooflab.workloads.ops.softmax counts it.
    return [
        (f"matmul_bf16_{n}", lambda: torch.matmul(a, b), {"bf16": 2.0 * n ** 3},
         {"DRAM": 2.0 * 3 * n * n}, "tensor"),
        (f"copy_fp32_{elems * 4 >> 20}MiB", lambda: dst.copy_(src), {},
         {"DRAM": 2.0 * 4 * elems}, None),
        (f"softmax_bf16_{rows}x{cols}", lambda: torch.softmax(x, dim=-1),
         {"bf16": 4.0 * rows * cols}, {"DRAM": 2.0 * 2 * rows * cols}, "vector"),
    ]


def time_reference(torch, dev, spec, plan) -> tuple[Kernel, str]:
    """Time through rooflab.measure when the bench module has it, else the probe's timer."""
    name, fn, flop, nbytes, unit = spec
    try:
        import rooflab

        k = rooflab.measure(fn, flop=flop or {"fp32": 0.0}, bytes=nbytes, device=str(dev),
                            name=name, plan=plan)
        return k.with_(unit=unit, flop=flop), "rooflab.measure"
    except Exception as exc:  # noqa: BLE001 — a bench-module problem must not cost the run
        log(f"rooflab.measure failed for {name} ({exc}); timing with the probe's timer")
    from rooflab.probe.gpu.timing import clock_timer, cuda_timer, time_calls
    from rooflab.probe.timer import QUICK

    timer = cuda_timer(torch, dev, 256 << 20) if dev.type == "cuda" else clock_timer()
    t = time_calls(fn, timer, QUICK)
    return Kernel(name=name, flop=flop, bytes=nbytes, seconds=t.median, unit=unit,
                  samples=t.samples, provenance={"flop": "derived", "bytes": "derived",
                                                 "seconds": "measured"}), "probe timer"


def draw(profile, kernels, path: Path) -> str:
    """roofline.png through the chart module; a plain matplotlib chart if that fails."""
    roofs = [r for r in (profile.measured, profile.nominal) if r is not None]
    try:
        from rooflab.report.chart import plot_roofline, save_figure

        save_figure(plot_roofline(roofs, [k for k in kernels if k.total_flop > 0],
                                  title=f"{profile.name} (measured solid, nominal dashed)"),
                    path)
        return "rooflab.report.chart"
    except Exception as exc:  # noqa: BLE001
        log(f"chart module failed ({exc}); drawing a plain chart")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(8, 5))
    ai = np.logspace(-2, 4, 200)
    for roof, style in zip(roofs, ("-", "--"), strict=False):
        bw = roof.find_memory("DRAM")
        for c in roof.compute:
            if bw is not None:
                ax.loglog(ai, np.minimum(c.value, bw.value * ai), style, label=f"{roof.kind} "
                          f"{c.label}")
    for k in kernels:
        if k.total_flop > 0:
            ax.loglog(k.total_flop / k.bytes["DRAM"], k.total_flop / k.seconds, "o",
                      label=k.name)
    ax.set_xlabel("FLOP / byte (DRAM)")
    ax.set_ylabel("FLOP/s")
    ax.legend(fontsize=6)
    fig.savefig(path, dpi=120)
    return "matplotlib"


def time_references(torch, dev, mode: str, errors: dict, skipped: dict | None = None
                    ) -> list:
    """The reference kernels timed; a failing one goes to `errors` and the rest still run,
    unless it lost the CUDA context: then the rest go to `skipped` with that reason."""
    from rooflab.probe.gpu.lost_context import context_lost, lost_reason

    kernels = []
    try:
        specs = reference_kernels(torch, dev, quick=mode == "quick")
    except Exception:  # noqa: BLE001 — e.g. out of memory: no references, the rest runs
        errors["reference kernels"] = traceback.format_exc()
        return kernels
    lost = None
    for spec in specs:
        if lost:
            (skipped if skipped is not None else {})[spec[0]] = lost_reason(*lost)
            continue
        try:
            k, how = time_reference(torch, dev, spec, "quick")
            kernels.append(k.with_(meta={**k.meta, "timed_with": how}))
        except Exception:  # noqa: BLE001
            errors[spec[0]] = traceback.format_exc()
            if (line := context_lost(torch, dev)) is not None:
                lost = (f"reference {spec[0]}", line)
    return kernels

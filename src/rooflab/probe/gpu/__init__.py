"""The GPU probe: measured ceilings of one CUDA device through PyTorch and Triton.

`probe_gpu("cuda:0")` measures matmul peaks per precision, vector FMA peaks, device copy,
the cache levels of a working-set sweep, host<->device bandwidth and launch overheads, and
returns a MachineProfile with the catalog's nominal roof beside the measured one.
`probe_gpu("cpu")` runs the same code on PyTorch's CPU device (a dry run: host clock
instead of CUDA events, no Triton), which is how CI covers it on machines without a GPU.

The probe never changes clocks, power limits or application clocks; it reads them before
and after and stores them in the profile's host section.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import replace

from ...errors import InputError, ProbeError, RooflabError, require
from ...hardware.profile import MachineProfile, now_iso
from ...model.ceiling import Ceiling, Roof
from ...units import fmt_rate
from ..nominal import below_nominal_extras, compare_to_nominal
from . import load as gpu_load
from .catalog_match import match_catalog
from .compute import tf32_env
from .context import Context, sizes_for
from .identity import identify, open_device, parse_torch_device, read_clocks
from .lost_context import SKIP_ENV, TRITON, context_lost, lost_reason, rerun_hint, skip_stages
from .timing import clock_timer, cuda_timer, torch_flush

__all__ = ["compare_to_nominal", "probe_gpu"]

Progress = Callable[[str, float], None]

# Stages and their share of the run time, for the progress fraction.
_STAGES = (("compute: matmul", 0.35), ("compute: vector", 0.1), ("memory: stream", 0.15),
           ("memory: sweep", 0.2), ("memory: host", 0.05), ("overhead", 0.15))


def best_per_label(ceilings) -> tuple[Ceiling, ...]:
    """One ceiling per label, the fastest: on CUDA an fp32 matmul with TF32 off and the
    Triton FMA kernel both measure "fp32 vector"; the slower one stays in the record."""
    best: dict[str, Ceiling] = {}
    for c in ceilings:
        old = best.get(c.label)
        if old is None:
            best[c.label] = c
            continue
        win, lose = (c, old) if c.value > old.value else (old, c)
        best[c.label] = replace(win, method=f"{win.method}; beat {lose.method.split(',')[0]} "
                                            f"({fmt_rate(lose.value, lose.precision)})")
    return tuple(best.values())


def _make_timer(torch, dev, host):
    caches = [v for v in (host.get("caches") or {}).values() if v]
    flush_bytes = int(2 * max(caches)) if caches else 64 << 20
    if dev.type == "cuda":
        return cuda_timer(torch, dev, flush_bytes)
    return clock_timer(time.perf_counter, flush=torch_flush(torch, dev, flush_bytes))


def probe_gpu(device: str, mode: str = "default", progress: Progress | None = None,
              triton: bool | None = None) -> MachineProfile:
    """Measure a CUDA device ("cuda", "cuda:N"), or PyTorch's CPU device ("cpu", dry run).

    `triton` None runs the Triton kernels on CUDA only; True on the CPU device runs them
    under Triton's interpreter (set TRITON_INTERPRET=1 before triton is imported).

    Raises InputError for a bad device string or mode, DeviceError when no CUDA device is
    visible, MissingDependency when torch is not installed.
    """
    kind, _ = parse_torch_device(device)
    sizes = sizes_for(kind, mode)
    skip = skip_stages(name for name, _ in _STAGES)   # refused before anything runs
    triton = False if TRITON in skip else triton
    if kind == "cuda" and (why := interpreter_refusal()):
        raise InputError(why)
    # PyTorch's CPU device needs torch only (the `torch` extra), not triton or NVML.
    torch = require("torch", "gpu" if kind == "cuda" else "torch", "the GPU probe")
    dev = open_device(torch, device)
    started = time.perf_counter()
    host = identify(torch, dev)
    host["clocks_before"] = read_clocks(torch, dev)
    host["tf32_env"] = tf32_env()
    # Other processes, utilisation and throttling around the run (read only, NVML).
    load_before, load_t0 = gpu_load.snapshot(torch, dev), time.perf_counter()
    nominal = _catalog_nominal(host)
    host["l2_catalog_note"] = l2_catalog_note(host)
    source = f"rooflab probe --device {device} ({mode}) on {host['name']}, {now_iso()}"
    say = _StageProgress(progress, skip)
    ctx = Context(torch=torch, dev=dev, timer=_make_timer(torch, dev, host), sizes=sizes,
                  host=host, source=source, progress=say, triton=triton,
                  clocks=lambda: read_clocks(torch, dev))
    if TRITON in skip:
        ctx.skipped[TRITON] = f"left out by {SKIP_ENV}"
    results, errors = _run_stages(torch, dev, ctx, say)
    lost = say.lost and {"stage": say.lost[0], "error": say.lost[1],
                         "message": rerun_hint(*say.lost, device)}
    cache_ceilings, sweep_extras = results["memory: sweep"]
    overhead_s, overhead_figures = results["overhead"]
    host["clocks_after"] = read_clocks(torch, dev)
    load = gpu_load.device_load(load_before, gpu_load.snapshot(torch, dev),
                                time.perf_counter() - load_t0)
    load["notes"] = gpu_load.load_notes(load, str(dev))
    if not any(results[k] for k in ("compute: matmul", "memory: stream")):
        err = ProbeError(f"the probe of {device} measured nothing; " + (
            lost["message"] if lost else
            f"first error: {next(iter(errors.values()), 'none')}"))
        # which stage lost the context, and its traceback: for gpu_check's re-run without it
        err.context_lost, err.stage_errors = lost, errors
        raise err
    measured = _measured_roof(host["name"], results, cache_ceilings, overhead_s,
                              [*identity_notes(host), *load["notes"],
                               *([host["l2_catalog_note"]] if host["l2_catalog_note"] else [])],
                              source)
    before = measured.notes
    measured, checks = compare_to_nominal(measured, nominal, "gpu")
    below = [n for n in measured.notes if n not in before]
    if progress:
        progress("done", 1.0)
    extras = {"gpu": {
        "mode": mode, "timer": ctx.timer.kind, "wall_s": time.perf_counter() - started,
        "measurements": ctx.record, "sweep": sweep_extras, "overheads": overhead_figures,
        "skipped": dict(ctx.skipped), "errors": errors, "nominal_checks": checks,
        "context_lost": lost or None,
        "warnings": [w for c in measured.compute + measured.memory for w in c.warnings],
    }, "device_load": load, "below_nominal": below_nominal_extras(below)}
    return MachineProfile(host=host, nominal=nominal, measured=measured, extras=extras,
                          created=now_iso())


def _catalog_nominal(host: dict) -> Roof | None:
    """The catalog's nominal roof of the device (None if it has none); host["catalog"]
    names the entry, host["catalog_match"] says how it was found (by the device name, or
    by the board model on a Jetson; an entry whose SM count is not the device's
    multiprocessors is never used; a MIG slice, host["mig_profile"] set by identify, gets
    its share of the card's roof), host["catalog_note"] why there is none, and
    host["unified_memory"] whether the GPU shares the CPU's DRAM (the entry says so, or
    the device reports itself integrated): then no PCIe link is measured or judged."""
    m = match_catalog(host["name"], host.get("compute_capability"),
                      memory_bytes=host.get("memory_bytes"), board=host.get("board_model"),
                      sms=host.get("multiprocessors"), integrated=host.get("integrated"))
    host["catalog"], host["catalog_match"], host["catalog_note"] = m.entry, m.how, m.note
    host["unified_memory"] = bool(m.unified_memory or host.get("integrated"))
    return m.roof


# Triton's interpreter runs every kernel on the host, copying the device's buffers in and
# out on each launch: seconds per copy call, minutes per sweep point (review 14a #6). It is
# the CPU dry run's setting (tests), never a GPU's. Triton reads these words as true.
TRUE_WORDS = ("1", "true", "yes", "on", "y")


def interpreter_refusal(environ=None) -> str | None:
    """Why a CUDA probe must not start with TRITON_INTERPRET set, or None."""
    value = (os.environ if environ is None else environ).get("TRITON_INTERPRET", "")
    if value.strip().lower() not in TRUE_WORDS:
        return None
    return (f"TRITON_INTERPRET={value} is set: Triton would run every kernel on the host, "
            f"copying the GPU's buffers in and out of each launch (minutes per stage, and "
            f"host figures). It is for the CPU dry run only; unset it (env -u "
            f"TRITON_INTERPRET ...) to probe a GPU")


# The device's L2 and the catalog's may differ by a few % (MiB vs MB, a reserved slice);
# beyond this the catalog entry is likely another configuration of the die (review 14a #10).
L2_CATALOG_TOLERANCE = 0.05


def l2_catalog_note(host: dict) -> str | None:
    """A note when the device's L2 differs from its catalog entry's by > 5 %: the probe
    sizes its sweep and labels its plateaus with the device's figure, while `rooflab specs`
    and nominal-only advice use the catalog's."""
    dev_l2 = host.get("l2_bytes")
    if not dev_l2 or not host.get("catalog"):
        return None
    try:
        from ...hardware.catalog import lookup

        cat_l2 = lookup(host["catalog"]).l2_bytes
    except Exception:  # noqa: BLE001 — no entry, no comparison
        return None
    if not cat_l2 or abs(dev_l2 - cat_l2) <= L2_CATALOG_TOLERANCE * cat_l2:
        return None
    return (f"device reports L2 {dev_l2 / 2**20:.4g} MiB, catalog '{host['catalog']}' "
            f"{cat_l2 / 2**20:.4g} MiB: the sweep and its plateau labels use the device's "
            f"figure; `rooflab specs` and advice from the nominal roof use the catalog's")


def identity_notes(host: dict) -> list[str]:
    """What the reader must know of the nominal roof's origin: a match by the board model
    or by the device's memory rather than the GPU's name, a MIG slice's share of the card
    (derived, not a datasheet figure), or an ambiguous name left without a roof."""
    how = str(host.get("catalog_match"))
    if host.get("catalog") and how.startswith(("matched by the board model",
                                               "matched by the device memory",
                                               "matched as a MIG slice")):
        return [f"nominal roof '{host['catalog']}': {how}"]
    if host.get("catalog") is None and "not guessed" in str(host.get("catalog_note")):
        return [f"no nominal roof: {host['catalog_note']}"]
    return []


class _StageProgress:
    """Context.progress: reports a stage to `progress` with the share of the run done
    before it (`done`, raised by _run_stages; below 1 until the end). It also carries the
    stages left out (`skip`, ROOFLAB_GPU_SKIP_STAGES) and, once a stage lost the CUDA
    context, (stage, the error's first line) in `lost`."""

    def __init__(self, progress: Progress | None, skip: frozenset[str] = frozenset()):
        self.progress, self.done, self.skip = progress, 0.0, skip
        self.lost: tuple[str, str] | None = None

    def __call__(self, stage: str) -> None:
        if self.progress:
            self.progress(stage, min(self.done, 0.99))


def _run_stages(torch, dev, ctx: Context,
                say: _StageProgress) -> tuple[dict[str, object], dict[str, str]]:
    """Each stage's result, and the traceback of each stage that failed (its result then
    empty: one failing stage must not lose the others). A stage in say.skip, or any after
    one that lost the CUDA context (say.lost), is not run: its reason goes to ctx.skipped."""
    from . import compute, memory, overhead

    results: dict[str, object] = {}
    empty = {"memory: sweep": ([], {}), "overhead": (None, {})}
    steps = {
        "compute: matmul": lambda: compute.matmul_peaks(ctx),
        "compute: vector": lambda: compute.vector_peaks(ctx),
        "memory: stream": lambda: memory.stream(ctx),
        "memory: sweep": lambda: memory.cache_sweep(ctx),
        "memory: host": lambda: memory.host_transfers(ctx),
        "overhead": lambda: overhead.overheads(ctx),
    }
    errors: dict[str, str] = {}
    # Events record on the current device's stream and Triton launches on the current
    # device: make the probed device current for the whole run (cuda:1 included).
    with torch.cuda.device(dev) if dev.type == "cuda" else nullcontext():
        for stage_name, share in _STAGES:
            say(stage_name)
            results[stage_name] = empty.get(stage_name, [])
            if stage_name in say.skip or say.lost:
                ctx.skipped[stage_name] = (lost_reason(*say.lost) if say.lost
                                           else f"left out by {SKIP_ENV}")
            else:
                try:
                    results[stage_name] = steps[stage_name]()
                except (RooflabError, KeyboardInterrupt):
                    raise
                except Exception:  # noqa: BLE001 — one failing stage must not lose the others
                    errors[stage_name] = traceback.format_exc(limit=8)
                    # a sticky CUDA error: every later stage would only raise it again
                    if (line := context_lost(torch, dev)) is not None:
                        say.lost = (stage_name, line)
            say.done += share
    return results, errors


def _measured_roof(name: str, results: dict[str, object], cache_ceilings, overhead_s,
                   notes, source: str) -> Roof:
    return Roof(
        name=name, kind="measured",
        compute=best_per_label([*results["compute: matmul"], *results["compute: vector"]]),
        memory=tuple(results["memory: stream"]) + tuple(cache_ceilings)
        + tuple(results["memory: host"]),
        overhead_s=overhead_s,
        overhead_source="median per-kernel time of back-to-back one-element torch add_ "
                        "launches (eager PyTorch)",
        source=source, notes=tuple(notes))

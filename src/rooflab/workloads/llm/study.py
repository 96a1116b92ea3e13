"""The LLM study `rooflab llm` runs, callable from Python: the analysis of one model on one
roof, with what the options add to it (tensor and pipeline parallelism on chosen links, a
measured TPOT or TTFT, the what-if variants, other devices), as one LlmRun.

    from rooflab.hardware.resolve import load_roof
    from rooflab.workloads.llm import Request, Settings, load_config
    from rooflab.workloads.llm.study import Study, run_study
    run = run_study(Study(load_config("llama-2-7b"), load_roof("H100"), Settings(tp=2),
                          Request(batches=(1,), context=512)))
    run.result.tpot_s, run.tpr.tpot_s, run.tp_link.link

The CLI resolves its options (files, catalog names, typed rates) into a Study and renders
the LlmRun; nothing here prints or reads an option.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Any

from ...errors import InputError
from ...model.ceiling import Roof
from .analysis import DtypeWarning, Request, longest_context
from .links import ChosenLink, StageGiven, latency_words, stage_link, tp_link
from .model_config import ModelConfig
from .settings import Settings
from .settings_dtype import unknown_dtype_warning


@dataclass(frozen=True)
class LlmRun:
    """One study's result: the analysis (workloads.llm.analysis.LLMResult) and what the
    study added to it, as the tables, the JSON and the chart all read it."""

    result: Any
    measured: tuple = ()           # --tpot-ms: whatif.measured_point, at most one
    measured_prefill: tuple = ()   # --ttft-ms: the prefill's, at most one
    measured_launches: int | None = None   # --launches: kernels per step of that run
    tpr: Any = None                # --tp > 1: workloads.llm.parallel.TPResult
    ppr: Any = None                # --pp > 1: model.pipeline.PPStep
    whatifs: tuple = ()            # --whatif rows
    hardware: tuple = ()           # --compare rows, --on's roof first
    hardware_memory: tuple = ()    # device memory per hardware row (None: unknown)
    others: tuple = ()             # --compare's roofs, drawn beside --on's in a chart
    tp_link: Any = None            # --tp > 1: workloads.llm.links.ChosenLink (provenance)
    pp_link: Any = None            # --pp > 1: workloads.llm.links.ChosenLink (provenance)
    memory_from: str = ""          # Study.memory_from: the fit's capacity, in words


@dataclass(frozen=True)
class Compared:
    """Another device to run the decode step on (--compare): what the user called it (for
    the note when it repeats one), its roof and its memory (None: unknown)."""

    name: str
    roof: Roof
    memory_bytes: float | None = None


@dataclass(frozen=True)
class Study:
    """What one study runs: the model, the roof, the settings (settings.tp and .pp are the
    parallel degrees) and the request, plus what the options add. Links left None under
    tp/pp > 1 are chosen as `rooflab llm` chooses them without link options (the catalog
    device behind the roof, else the roof's link ceiling)."""

    cfg: ModelConfig
    roof: Roof
    settings: Settings
    request: Request
    device_bytes: float | None = None      # device memory for the fit (None: unknown)
    # where device_bytes came from, said beside the fit ("the catalog's decimal GB; ...")
    memory_from: str = ""
    tp_link: ChosenLink | None = None      # --tp's all-reduce link
    pp_link: ChosenLink | None = None      # --pp's stage-to-stage link
    micro_batches: int | None = None       # --pp's micro-batches in flight (None: pp)
    tpot_s: float | None = None            # a measured TPOT to place on the roof
    launches: int | None = None            # kernels per decode step of that measured run
    ttft_s: float | None = None            # a measured TTFT (the prefill) to place
    whatif: bool = False                   # the quantization/KV/attention variants
    compare: tuple[Compared, ...] = ()     # other devices, each tabled once
    notes: tuple[str, ...] = ()            # the caller's notes, said first


def run_study(study: Study) -> LlmRun:
    """The study as `rooflab llm` runs it. Context warnings (workloads.llm.analysis
    .ContextWarning) are issued as Python warnings; a caller may record them."""
    from .whatif import compare_settings, standard_variants

    cfg, roof, s, req, mem = (study.cfg, study.roof, study.settings, study.request,
                              study.device_bytes)
    unknown = unknown_dtype_warning(cfg, s)
    if unknown:   # once per study, not once per analysis (--compare, --whatif)
        warnings.warn(unknown, DtypeWarning, stacklevel=2)
    tpl, stage = _links(study)
    r = _analyze(cfg, roof, s, req, mem, tpl)
    compared, compare_notes = _compare(study.compare, cfg, s, roof, req, mem)
    notes = study.notes + tuple(
        n for c in (tpl, stage) if c is not None for n in c.notes) + compare_notes
    if notes:      # a profile behind both links may say the same thing twice
        r = replace(r, notes=r.notes + tuple(n for n in dict.fromkeys(notes)
                                             if n not in r.notes))
    tpr = _tensor_parallel(cfg, s, roof, req, tpl) if tpl is not None else None
    ppr = (_pipeline(cfg, s, roof, req, tpr, study.micro_batches, stage, device_bytes=mem)
           if stage is not None else None)
    measured = _on_links(_measured(r.decode.step, roof, study.tpot_s), r, tpr, ppr)
    measured_prefill = _on_links(_measured(r.prefill.step, roof, study.ttft_s), r, tpr, ppr)
    whatifs = (compare_settings(cfg, roof, standard_variants(s), batch=req.batch,
                                context=req.decode_context)
               if study.whatif and s.tp == 1 else ())
    return LlmRun(r, measured=measured, measured_prefill=measured_prefill, tpr=tpr,
                  ppr=ppr, whatifs=whatifs, tp_link=tpl, pp_link=stage,
                  measured_launches=_launches(study.launches, measured),
                  memory_from=study.memory_from, **compared)


def _links(study: Study) -> tuple[ChosenLink | None, ChosenLink | None]:
    """The study's TP and PP links: as given, else chosen without link options."""
    s = study.settings
    tpl, stage = study.tp_link, study.pp_link
    if (s.tp > 1 and tpl is None) or (s.pp > 1 and stage is None):
        from ...hardware.catalog import match_device_name

        dev = match_device_name(study.roof.name)
        if s.tp > 1 and tpl is None:
            tpl = tp_link(s, study.roof, dev, None, None)
        if s.pp > 1 and stage is None:
            stage = stage_link(s, study.roof, dev, StageGiven())
    return (tpl if s.tp > 1 else None), (stage if s.pp > 1 else None)


def _analyze(cfg, roof, s, req, mem, tp_chosen: ChosenLink | None = None):
    """analyze_llm, with --tp's all-reduce latency and where it came from."""
    from ...model.dies import software_devices
    from .analysis import analyze_llm

    ring = s.tp * software_devices(roof)     # an MI250X package's --tp: 2 dies each
    lat, words = ((tp_chosen.link.allreduce_latency_s(ring), latency_words(tp_chosen, ring))
                  if tp_chosen is not None else (0.0, "--link-latency"))
    return analyze_llm(cfg, roof, s, req, device_bytes=mem, link_latency_s=lat,
                       link_latency_source=words)


def _launches(launches: int | None, measured: tuple) -> int | None:
    """The measured run's kernel count, which splits only a measured TPOT's gap."""
    if launches is None:
        return None
    if not measured:
        raise InputError("--launches is the kernel count of a measured decode step: give "
                         "that step's time with it (--tpot-ms), or leave --launches out")
    if isinstance(launches, bool) or not isinstance(launches, int) or launches < 1:
        raise InputError(f"--launches must be a whole number of kernels per decode step "
                         f"(e.g. 905, counted with nsys or torch.profiler); got {launches!r}")
    return launches


def _measured(step, roof, seconds: float | None) -> tuple:
    """A measured TPOT (of the decode step) or TTFT (of the prefill) as a point on the
    roof (none without one)."""
    if seconds is None:
        return ()
    if not 0 < seconds < float("inf"):
        what = "TTFT" if step.phase == "prefill" else "TPOT"
        raise InputError(f"a measured {what} must be a positive time in seconds (e.g. "
                         f"0.015); got {seconds:g}")
    from .whatif import measured_point

    return (measured_point(step, roof, seconds),)


def _on_links(measured: tuple, r, tpr, ppr) -> tuple:
    """A measured step under --tp/--pp, with the floor's link term the summary adds (the
    all-reduces, the embedding's and the gather; the stage transfers): its floor_ratio and
    gap_s are then against the printed TPOT (TTFT) floor, not the kernels' alone."""
    if not measured or (tpr is None and ppr is None):
        return measured
    m = measured[0]
    prefill = m.kernel.meta.get("op") == "prefill_step"
    if prefill:
        link = ((tpr.prefill_link_s if tpr else 0.0)
                + (ppr.prefill_transfer_s if ppr else 0.0))
    else:
        link = (ppr.tpot_s if ppr else tpr.tpot_s) - r.tpot_s
    words = link_phrase(tpr is not None, ppr.pp if ppr else 1, prefill)
    # on the step's kernel too, so `rooflab report FILE` can say the floor it is judged by
    kernel = m.kernel.with_(meta={**m.kernel.meta, "link_s": max(link, 0.0), "link": words})
    return (replace(m, kernel=kernel, link_s=max(link, 0.0), link_words=words,
                    devices=tpr.tp if tpr else 1, stages=ppr.pp if ppr else 1),)


def link_phrase(tp: bool, pp: int, prefill: bool = False) -> str:
    """What a TPOT (prefill: TTFT) floor adds to the kernels under --tp/--pp, as the
    summary and the measured lines both say it: 'all-reduces and 1 stage transfer', 'the
    prompt's 3 stage transfers' (pp - 1 transfers; a prefill's carry the whole prompt)."""
    n = pp - 1
    stage = f"{n} stage transfer{'s' if n > 1 else ''}" if n > 0 else ""
    if stage and prefill:
        stage = "the prompt's " + (stage if n > 1 else "stage transfer")
    return " and ".join(w for w in ("all-reduces" if tp else "", stage) if w)


def _distinct(compare: tuple[Compared, ...], roof) -> tuple[tuple[Compared, ...],
                                                             tuple[str, ...]]:
    """The compared devices without the study's roof or one already named: `--on T4
    --compare T4,A100` (or `T4,nvidia-t4`, one catalog entry) tabled T4 twice. Roofs are
    compared whole, so a measured T4 profile stays apart from the catalog's T4."""
    kept: list[Compared] = []
    dropped: list[str] = []
    for c in compare:
        if c.roof == roof or c.roof in [k.roof for k in kept]:
            dropped.append(f"{c.name} ({c.roof.name})")
            continue
        kept.append(c)
    notes = ((f"--compare: {', '.join(dropped)} already tabled; each device is shown "
              f"once",) if dropped else ())
    return tuple(kept), notes


def _compare(compare: tuple[Compared, ...], cfg, s, roof, req, mem
             ) -> tuple[dict, tuple[str, ...]]:
    """The decode step on each device (LlmRun's hardware fields, the study's roof first,
    each device once) and the notes on what was left out."""
    if not compare:
        return {}, ()
    from .parallel import shard
    from .whatif import compare_hardware

    kept, notes = _distinct(compare, roof)
    others = tuple(c.roof for c in kept)
    # per device under --tp, like the tables (the all-reduces are not in it)
    hw = compare_hardware(shard(cfg, s.tp), s, [roof, *others], batch=req.batch,
                          context=req.decode_context)
    memory = (mem, *(c.memory_bytes for c in kept))
    return {"hardware": hw, "hardware_memory": memory, "others": others}, notes


def _tensor_parallel(cfg, s, roof, req, chosen: ChosenLink):
    """--tp's all-reduces on the chosen link (Link.allreduce_s, hop latency included)."""
    from .parallel import tensor_parallel

    return tensor_parallel(cfg, s, roof, batch=req.batch, context=req.decode_context,
                           tp=s.tp, link=chosen.link, prompt=req.prompt)


def _pipeline(cfg, s, roof, req, tpr, micro_batches: int | None, chosen: ChosenLink,
              device_bytes: float | None = None):
    """--pp: the stages (of the TP shard under --tp, each adding its layers' all-reduces)
    on the chosen stage link."""
    from .parallel import shard
    from .pipeline import pipeline_parallel

    per_layer = tpr.comm_s / cfg.layers if tpr else 0.0
    pre_per_layer = tpr.prefill_comm_s / cfg.layers if tpr else 0.0
    longest = longest_context(req)                 # as the footprint's
    return pipeline_parallel(shard(cfg, s.tp), s, roof, pp=s.pp, batch=req.batch,
                             context=req.decode_context, prompt=req.prompt,
                             link=chosen.link, micro_batches=micro_batches, tp=s.tp,
                             kv_context=longest, comm_s_per_layer=per_layer,
                             prefill_comm_s_per_layer=pre_per_layer,
                             gather_s=tpr.gather_s if tpr else 0.0,
                             embedding_s=((tpr.embedding_s, tpr.prefill_embedding_s)
                                          if tpr else (0.0, 0.0)),
                             device_bytes=device_bytes if device_bytes is not None
                             else _catalog_memory(roof))


def _catalog_memory(roof) -> float | None:
    """The memory of the catalog device behind the roof (None when there is none): the
    pipeline's in-flight fit, where the study has no device memory (the memory line,
    which has --memory, re-judges it in cli/llm_render)."""
    from ...hardware.catalog import match_device_name

    dev = match_device_name(roof.name)
    return getattr(dev, "fit_memory_bytes", None) or None


def overridden_quantization(cfg, weights: str | None, act: str | None = None
                            ) -> tuple[str, ...]:
    """A note when --weights (or --act) replaces the format the config's
    quantization_config declares (the checkpoint is stored, or run, otherwise than the
    tables count it)."""
    q = cfg.quantization
    st = getattr(cfg, "stored", None)
    if st is not None and weights is not None:
        return (f"--weights {weights} replaces the GGUF file's tensor types ({st.label}, "
                f"{st.words}); the tables count --weights {weights}",)
    if q is None:
        return ()
    if weights is not None:
        return (f"--weights {weights} replaces the config's quantization_config "
                f"({q.method}: {q.format}); the tables count --weights {weights}",)
    if act is not None and q.act and act != q.act:
        return (f"--act {act} replaces the config's quantization_config's activations "
                f"({q.method}: {q.act}, {q.act_scheme}); the tables count --act {act}",)
    return ()


def shared_memory_notes(dev, memory_given: bool) -> tuple[str, ...]:
    """A unified-memory device's catalog memory is the whole module's: the OS, the CPU's
    processes and the CUDA context live in it too, so the GPU gets less (seed 002: on the
    edge capacity comes first). Said, not guessed: no catalog figure says how much less."""
    from ...units import si

    if dev is None or memory_given or not dev.unified_memory:
        return ()
    return (f"{dev.name}'s {si(dev.memory_bytes, 'B')} is unified memory, shared with the "
            f"CPU, the OS and the CUDA context: the GPU gets less, and the fit and largest "
            f"batch above assume all of it; give what is free on the device as --memory "
            f"(MemAvailable in its /proc/meminfo)",)


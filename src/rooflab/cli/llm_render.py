"""What `rooflab llm` shows: its tables and summary lines (cli/llm.py handles the options
and runs the study, workloads/llm/study.py; llm_output writes the JSON, -o's CSV and
chart)."""

from __future__ import annotations

from ..model.choose import WITH_LAUNCHES
from ..model.dies import kind_words
from ..units import (
    fmt_ai,
    fmt_seconds,
    fmt_times,
    per_s,
    si,
    si_apart,
)
from ..workloads.llm.analysis import request_floor_s
from ..workloads.llm.study import LlmRun
from .llm_gap import measured_lines
from .llm_pipeline_render import _dtypes_fit, pipeline_lines
from .llm_sweep_render import (
    context_sweep_lines,
    context_sweep_table,
    prefill_sweep_table,
    prompt_sweep_table,
    sweep_lines,
    sweep_table,
)
from .llm_tp_lines import tp_line, tp_link_words, tp_sweep_line
from .llm_words import (
    closing_notes,
    device_word,
    narrower,
    rows_words,
    span,
    unified_memory,
)


def step_table(timing, title: str):
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=title)
    for col in ("kernel", "calls", "FLOP/call", "weights", "activations", "KV", "AI",
                "floor/call", "floor", "bound", "floor/launch"):
        t.add_column(col, justify="left" if col in ("kernel", "bound") else "right",
                     no_wrap=col == "kernel", overflow="fold")   # no "…" (s22 r3 F6)
    per_launch = timing.per_launch_s[0]
    by_name = {p.kernel: p for p in timing.points}
    for op in timing.step.ops:
        p = by_name[op.op.name]
        split = op.op.bytes_split
        ratio = p.floor_s / op.calls / per_launch
        t.add_row(escape(op.op.name), str(op.calls), si(op.op.flop), si(split.get("weights"), "B"),
                  si(split.get("activations"), "B"), si(split.get("kv"), "B"), fmt_ai(p.ai),
                  fmt_seconds(p.floor_s / op.calls), fmt_seconds(p.floor_s), bound_cell(p),
                  # one ratio rule (units.fmt_times): '0.50x', '7.01x', '62.7x'
                  fmt_times(ratio) if ratio >= 1 else f"[yellow]{fmt_times(ratio)}[/]")
    st = timing.step
    sp = st.bytes_split
    t.add_section()
    t.add_row("step", str(st.launches), si(st.flop), si(sp["weights"], "B"),
              si(sp["activations"], "B"), si(sp["kv"], "B"), fmt_ai(st.ai), "",
              fmt_seconds(timing.floor_s), timing.bound, "")
    return t


def bound_cell(p) -> str:
    """The bound column: a launch-sized kernel says its roofline side too, 'overhead
    (memory)', as LLM-Viewer's table and the JSON's `binding` give it (review r4 F3: a
    k_proj at AI 15.7 read only 'overhead'); the floors leave the launches out."""
    if p.bound != "overhead":
        return p.bound
    return f"overhead ({'memory' if p.memory_bound_side else 'compute'})"


def quantized_head(s, cfg=None) -> str:
    """The setup line's word on lm_head and the embedding under a hand-given --weights
    int4/int8/fp8: quantized too (docs/llm.md), where a quantized checkpoint keeps both
    at 16 bit: Llama-3-8B's lm_head is 1.05 GB at bf16, 271 MB at int4 (review r4 F4)."""
    from ..workloads.llm.settings import NARROW, is_kept

    st = getattr(s, "stored", None)
    if st is not None:     # llama.cpp: a GGUF file says its own types
        return "" if st.file_bytes else (
            f"; lm_head and embedding at {s.weight_format} too; llama.cpp's mixes keep "
            f"output.weight wider (Q6_K in Q4_K_M): give the .gguf file for its exact bytes")
    if s.weights not in NARROW or s.embedding_kept or is_kept("lm_head", s.keep):
        return ""
    how = ("drop --weights to count the config's quantization_config"
           if getattr(cfg, "quantization", None) is not None
           else "give the checkpoint's config.json")
    return (f"; lm_head and embedding at {s.weights} too; AWQ/GPTQ/fp8 checkpoints keep "
            f"them at 16-bit: {how}")


def totals(r, tpr=None, ppr=None) -> dict[str, float]:
    """TPOT/TTFT floors, tokens/s and the request floor; under tensor parallelism the
    all-reduces are added (no overlap with compute, as in workloads/llm/parallel.py); under
    pipeline parallelism the stage-to-stage transfers (model/pipeline.py: one batch in
    flight, the latency view; the throughput view is in llm.pipeline)."""
    out = _totals(r, tpr, ppr)
    # the same step with its launches (model.choose.with_launches_s per kernel), the
    # all-reduces and stage transfers added as to the work floor
    out["tpot_with_launches_s"] = out["tpot_s"] - r.tpot_s + r.decode.with_launches_s
    return out


def _totals(r, tpr=None, ppr=None) -> dict[str, float]:
    """The totals on one device, or over the --tp group (`tpr`) or the --pp pipeline
    (`ppr`, whose TTFT adds the stage-to-stage transfers to --tp's all-reduces): the step
    and tokens/s across every GPU, and the compute-only TPOT/TTFT beside them."""
    if tpr is None and ppr is None:
        return {"tpot_s": r.tpot_s, "ttft_s": r.ttft_s, "tokens_per_s": r.tokens_per_s,
                "request_s": r.request_s}
    link_s = tpr.prefill_link_s if tpr else 0.0
    if ppr is not None:
        tpot, ttft, gpus = ppr.tpot_s, r.ttft_s + link_s + ppr.prefill_transfer_s, ppr.gpus
    else:
        tpot, ttft, gpus = tpr.tpot_s, r.ttft_s + link_s, tpr.tp
    rate = r.request.batch / tpot
    return {"tpot_s": tpot, "ttft_s": ttft, "tokens_per_s": rate,
            "tokens_per_s_per_gpu": rate / gpus,
            "request_s": request_floor_s(ttft, tpot, r.request.generate),
            "compute_tpot_s": r.tpot_s,
            "compute_ttft_s": r.ttft_s}


def memory_context(req, fp) -> str:
    """The memory line's context, said plainly when --context is shorter than the prompt:
    the tables then use --context, but the cache holds prompt + generate - 1 tokens at the
    end of the request (the last token is sampled, never cached), and the footprint is
    sized for that (the longest the cache gets)."""
    if req.context is None or req.context >= req.prompt or fp.context == req.context:
        return f"context {fp.context}"
    return (f"context {fp.context} = prompt {req.prompt} + generate {req.generate} - 1, "
            f"the longest the cache gets; --context {req.context} sets only the tabled "
            f"decode step's")


def floor_link_words(r, tpr=None, ppr=None) -> tuple[str, str]:
    """What the TPOT and the TTFT floors add under --tp/--pp, in the summary's words, each
    the same sentence: ' with all-reduces and 1 stage transfer (compute 10.4 ms + all-reduces
    69.9 us + ... + stage transfer 36.4 ns', the parenthesis left open for the TPOT's
    launches; '' on one device."""
    if tpr is None and ppr is None:
        return "", ""
    return tuple(_floor_words(r, tpr, ppr, prefill) for prefill in (False, True))


def _floor_words(r, tpr, ppr, prefill: bool) -> str:
    from ..workloads.llm.study import link_phrase

    terms = [f"compute {fmt_seconds(r.ttft_s if prefill else r.tpot_s)}"]
    if tpr:
        terms.append(tp_link_words(tpr, prefill))
    if ppr:
        n = ppr.pp - 1
        terms.append(f"stage transfer{'s' if n > 1 else ''} "
                     f"{fmt_seconds(ppr.prefill_transfer_s if prefill else ppr.transfer_s)}")
    return (f" with {link_phrase(tpr is not None, ppr.pp if ppr else 1, prefill)} ("
            + " + ".join(terms))


def summary_lines(r, tpr=None, ppr=None, memory_from: str = "") -> list[str]:
    d, fp, req = r.decode, r.footprint, r.request
    unit = device_word(r.roof)
    t = totals(r, tpr, ppr)
    comm, pre_comm = floor_link_words(r, tpr, ppr)
    lo, hi = d.launch_s_range
    plo, phi = d.per_launch_s
    out = [
        f"model: {r.config.name} ({r.config.family}), {si(r.params.total)} parameters"
        + (f", {si(r.params.active)} active per token" if r.config.moe else "")
        # gpt-oss's card counts the unembedding, not the table a token only looks up
        + (f" ({si(r.params.active - r.params.embedding)} without the embedding table)"
           if r.config.moe and r.params.lm_head else ""),
        *r.layer_weights.describe(r.settings.tp, r.settings.pp),
        f"setup: {r.settings.describe()}{quantized_head(r.settings, r.config)}; batch {req.batch}, "
        f"prompt {req.prompt}, decode "
        f"context {req.decode_context}, generate {req.generate}; roof '{r.roof.name}' "
        f"({kind_words(r.roof)})",
        f"TPOT floor {fmt_seconds(t['tpot_s'])}{comm}{'; ' if comm else ' ('}{WITH_LAUNCHES} "
        f"{fmt_seconds(t['tpot_with_launches_s'])}; all kernels in one: "
        f"{fmt_seconds(d.fused_floor_s)}), TTFT floor {fmt_seconds(t['ttft_s'])}{pre_comm}"
        f"{')' if pre_comm else ''}, "
        f"{per_s(t['tokens_per_s'])} tokens/s decode"
        + (f" (the {tpr.tp}-{unit} group: {per_s(t['tokens_per_s_per_gpu'])} per {unit}, "
           f"{per_s(t['tokens_per_s'] / req.batch)} per request)" if tpr and not ppr else "")
        + (f" (one batch in flight on {ppr.gpus} {unit}s: "
           f"{per_s(t['tokens_per_s_per_gpu'])} per {unit}; the pipeline line has the "
           f"throughput)" if ppr else "")
        + ", request floor "
        f"{fmt_seconds(t['request_s'])}",
        f"decode AI {fmt_ai(d.step.ai)} FLOP/B ({d.bound}-bound); bytes per step: weights "
        f"{si(d.step.bytes_split['weights'], 'B')}, KV {si(d.step.bytes_split['kv'], 'B')} "
        f"({si(d.step.kv_read_bytes, 'B')} read, {si(d.step.kv_write_bytes, 'B')} written), "
        f"activations {si(d.step.bytes_split['activations'], 'B')}",
        f"launch overhead: {d.step.launches} kernels per step ({d.step.per_layer_kernels():.3g} "
        f"per layer x {r.config.layers} layers + embedding, final norm, lm_head) x "
        f"{span(plo, phi)} = {span(lo, hi)} per step "
        f"vs a {fmt_seconds(r.tpot_s)} work floor; launch-dominated kernels: "
        f"{', '.join(d.launch_bound_kernels()) or 'none'}",
        f"memory{' per device' if ppr else ''} ({memory_context(req, fp)}"
        f"{', its heaviest stage' if ppr else ''}): weights {si(fp.weights, 'B')} + "
        f"KV {si(fp.kv, 'B')} ({kv_rate(fp, r.config)}) + "
        f"prefill activations {si(fp.activations, 'B')} (one prompt in flight, reserved "
        f"once) + decode logits {si(fp.logits, 'B')} (fp32 batch x "
        f"{rows_words(r.settings)}vocab, as vLLM's "
        f"sampler reserves them) = "
        f"{si_apart(fp.total, fp.device_bytes or fp.total, 'B')[0]}"
        + (f" of {si_apart(fp.total, fp.device_bytes, 'B')[1]} on the device "
           f"({'fits' if fp.fits else 'does NOT fit'}"
           f"{'; ' + memory_from if memory_from else ''})"
           f"; largest batch that fits: {fp.max_batch}{split_hint(r)}" if fp.device_bytes else
           " (device memory unknown: give --memory)"),
    ]
    return out


def kv_rate(fp, cfg=None) -> str:
    """The KV's per-token words; where sliding windows cap some layers' cache (gpt-oss: 18
    of 36 layers keep 128 tokens) per token x context overstates it: say the per-sequence
    bytes and that the rate holds until the windows fill. Every layer windowed (Mistral):
    nothing grows past the window (review s19 r6 F2)."""
    words = f"{si(fp.kv_per_token, 'B')} per token{' per sequence' if fp.batch > 1 else ''}"
    if fp.kv >= fp.batch * fp.context * fp.kv_per_token * (1 - 1e-9):
        return words
    head = f"{si(fp.kv_per_sequence, 'B')} per sequence: {si(fp.kv_per_token, 'B')} per token"
    if cfg is not None and len(set(cfg.sliding_layers)) == cfg.layers:
        return f"{head} up to the {cfg.sliding_window}-token window, then the cache stops growing"
    return f"{head} until the sliding windows fill, then only the full layers' cache grows"


def split_hint(r) -> str:
    """When the batch does not fit: the smallest --pp and --tp that would hold it, computed
    by the same per-device footprint (seed: '--pp 2 ... largest batch 0' named neither),
    and the first narrower --weights/--kv that holds it without more devices. On a
    unified-memory device (a Jetson) the narrower dtypes come first: a split needs more
    modules and a network between them (the catalog has no link for them)."""
    fp, s = r.footprint, r.settings
    if not fp.device_bytes or fp.fits:
        return ""
    from ..workloads.llm.pipeline import quantized_fit, smallest_fit

    fit = smallest_fit(r.config, s, batch=fp.batch, context=fp.context,
                       prompt=r.request.prompt, device_bytes=fp.device_bytes)
    quant = quantized_fit(r.config, s, batch=fp.batch, context=fp.context,
                          prompt=r.request.prompt, device_bytes=fp.device_bytes)
    ways = ([f"--pp {fit['pp']}" + (f" (at --tp {s.tp})" if s.tp > 1 else "")]
            if fit["pp"] else [])
    ways += ([f"--tp {fit['tp']}" + (f" (at --pp {s.pp})" if s.pp > 1 else "")]
             if fit["tp"] else [])
    room = narrower(s)
    if unified_memory(r.roof):
        return unified_hint(fp.batch, quant, ways, room)
    q = (f", or with {quant[0]} ({si(quant[1].total, 'B')}"
         f"{' per device' if s.tp > 1 or s.pp > 1 else ''})" if quant else "")
    if not ways and not fit["split"]:
        return (f"; no split fits batch {fp.batch}, not even --tp {r.config.heads} --pp "
                f"{r.config.layers}: lower --batch (or --context)"
                + (f", or {', '.join(room)}" if room and not quant else q))
    if not ways:
        return (f"; no --pp or --tp alone fits batch {fp.batch}: combine them"
                + (f", or {', '.join(room)}" if room and not quant else q))
    return f"; batch {fp.batch} fits with {' or '.join(ways)}{q}"


def unified_hint(batch: int, quant, ways: list[str], room: list[str]) -> str:
    """split_hint on a unified-memory device: one module is all there is, so what fits it
    comes first; a split is said to need more modules and a link (`--tp` on a Jetson
    stops at "the catalog has no link between ... devices")."""
    if quant:
        first = (f"; batch {batch} fits this device with {quant[0]} "
                 f"({si(quant[1].total, 'B')})")
    else:
        # at batch 1 there is no batch to lower: only the context or the model is left
        lever = ("lower --batch (or --context), or a smaller model" if batch > 1 else
                 "a shorter --context if the KV cache is what overflows, else a smaller model")
        first = (f"; no {' or '.join(room) or 'narrower --weights/--kv'} fits batch {batch} "
                 f"on this device: {lever}")
    split = (f"; {' or '.join(ways)} would take that many devices and a network between "
             f"them (--link-bw)" if ways else "")
    return first + split


def tp_latency_line(tpr, chosen=None) -> str | None:
    """--tp's latency both ways (None when 0): per all-reduce, as LLM tools take it, and
    per ring hop, as nccl-tests measures it: 'all-reduce latency 140 us = 14 hops x 10 us'.
    `chosen`: the workloads.llm.links.ChosenLink, for where the latency came from."""
    if not tpr.latency_s:
        return None
    from ..model.parallel import allreduce_latency_words

    given = getattr(chosen, "latency_from", "none")
    given = {"fit": "the measured fit",
             "--link-latency": "--link-latency, per all-reduce"}.get(given, given)
    return (f"{allreduce_latency_words(tpr.link, tpr.ring)} (a ring all-reduce over "
            f"{tpr.ring} {'ranks' if tpr.ring != tpr.tp else 'devices'} is 2 x {tpr.ring - 1}"
            f" sends, each paying the link's latency per hop; "
            f"from {given})")


def whatif_table(rows, base_tpot: float, title: str):
    from rich.table import Table

    t = Table(title=title)
    # the work floor (llm's TPOT floor) and the step with its launches, each with its
    # speed-up: the same two figures whatif and choose give (docs/llm.md, "Two floors");
    # "weights stored": the model at the row's dtype, not the step's read (the sweep's
    # "weights"): an MoE stores 10x what a step reads (review s19 r6 F7)
    for col in ("what-if", "AI", "TPOT floor", "speed-up", "weights stored", WITH_LAUNCHES,
                "speed-up"):
        t.add_column(col, justify="left" if col == "what-if" else "right", overflow="fold")
    base_launched = rows[0].with_launches_s if rows else 0.0
    for w in rows:
        t.add_row(w.label, fmt_ai(w.ai), fmt_seconds(w.tpot_s), fmt_times(base_tpot / w.tpot_s),
                  si(w.weights_bytes, "B"), fmt_seconds(w.with_launches_s),
                  fmt_times(base_launched / w.with_launches_s) if w.with_launches_s else "-")
    return t


def _weights_fit(r):
    """weights_fit for sweep_lines: whether the weights alone of the fullest device (one TP
    shard, the heaviest --pp stage) fit its memory in a weight dtype (None: no memory)."""
    fp, s = r.footprint, r.settings
    if fp is None or not fp.device_bytes:
        return None
    from ..workloads.llm.parallel import shard
    from ..workloads.llm.pipeline import heaviest_footprint

    cfg = shard(r.config, s.tp)

    def fits(dtype: str) -> bool:
        q = heaviest_footprint(cfg, s.with_(weights=dtype), pp=s.pp, batch=1,
                               context=fp.context, prompt=r.request.prompt,
                               device_bytes=fp.device_bytes)
        return q.weights <= fp.device_bytes

    return fits


def print_report(out, run: LlmRun, phase: str, said: frozenset = frozenset()) -> None:
    """The text report on a rich console: step tables, floors, sweep, measured point,
    tensor parallelism, what-ifs, hardware swap, notes."""
    r, tpr = run.result, run.tpr
    req, tp = r.request, r.settings.tp
    if phase in ("decode", "both"):
        n = r.settings.decode_tokens
        out.print(step_table(r.decode, f"decode step: batch {req.batch}"
                             + (f" x {n} query tokens" if n > 1 else "")
                             + f", context {req.decode_context} (per call; calls = per "
                             f"layer x {r.config.layers} layers)"))
    if phase in ("prefill", "both"):
        out.print(step_table(r.prefill, f"prefill: batch {req.batch} x {req.prompt} tokens"))
    for line in summary_lines(r, tpr, run.ppr, run.memory_from):
        out.print(line, soft_wrap=True, markup=False)
    if r.prefill_sweep is not None and phase in ("prefill", "both"):
        out.print(prefill_sweep_table(r.prefill_sweep, tp))
    if r.sweep is not None and phase == "prefill":   # the memory lines hold for both phases
        for line in sweep_lines(r.sweep, r.footprint, r.settings, unified_memory(r.roof),
                                _weights_fit(r), decode=False):
            out.print(line, soft_wrap=True, markup=False)
    if r.prompt_sweep is not None and phase in ("prefill", "both"):
        out.print(prompt_sweep_table(r.prompt_sweep, tp))
    if r.context_sweep is not None and phase in ("decode", "both"):
        out.print(context_sweep_table(r.context_sweep, tp, r.settings.pp))
        for line in context_sweep_lines(r.context_sweep, r.footprint, r.settings):
            out.print(line, soft_wrap=True, markup=False)
    if r.sweep is not None and phase in ("decode", "both"):
        out.print(sweep_table(r.sweep))
        for line in sweep_lines(r.sweep, r.footprint, r.settings, unified_memory(r.roof),
                                _weights_fit(r)):
            out.print(line, soft_wrap=True, markup=False)
        if tpr is not None:
            out.print(tp_sweep_line(r.sweep, tpr, req.batch), soft_wrap=True, markup=False)
        if run.ppr is not None:   # the sweep's rows are the latency view, as the TPOT line
            out.print(f"the sweep's tokens/s are one batch in flight (batch / TPOT floor); "
                      f"with {run.ppr.micro_batches} micro-batches the pipeline throughput "
                      f"line below gives batch {req.batch}'s", soft_wrap=True, markup=False)
    for line in measured_lines(run):   # --ttft-ms's and --tpot-ms's, under any phase
        out.print(line, soft_wrap=True, markup=False)
    if tpr:
        out.print(tp_line(tpr, r.settings), soft_wrap=True, markup=False)
        line = tp_latency_line(tpr, run.tp_link)
        if line:
            out.print(line, soft_wrap=True, markup=False)
    for line in pipeline_lines(run.ppr, r):
        out.print(line, soft_wrap=True, markup=False)
    _print_variants(out, run)
    for note in closing_notes(r):
        if note not in said:     # a warning already on stderr (cli/llm._run_study)
            out.print(f"note: {note}", soft_wrap=True, markup=False)


def _print_variants(out, run: LlmRun) -> None:
    """The --whatif and --compare tables, and the devices the model does not fit on."""
    from ..workloads.llm.whatif import launch_note
    from .choose_fit import fit_remedy

    r, hw, tp = run.result, run.hardware, run.result.settings.tp
    per = f", per device of {tp}, without all-reduces" if tp > 1 else ""
    if run.ppr is not None:   # the tables' step: every stage, without the transfers
        per += f", all {run.ppr.pp} stages, without stage transfers"
    for rows, title in ((run.whatifs, "what-ifs (decode step)"),
                        (hw, f"hardware swap (decode step{per})")):
        if rows:
            out.print(whatif_table(rows, rows[0].tpot_s, title))
            note = launch_note(rows)
            if note:
                out.print(note, soft_wrap=True, markup=False)
    for w in hw[1:]:     # the first row is --on's roof: its notes close the report
        for n in w.notes:
            out.print(f"note: {n}", soft_wrap=True, markup=False)
    short = [(w.label, m) for w, m in zip(hw, run.hardware_memory, strict=False)
             if m is not None and r.footprint.total > m]
    remedy = fit_remedy([label for label, _ in short], verb="",
                        hopeless=[label for label, m in short if not _dtypes_fit(r, m)])
    # as many digits as tell the footprint from the largest memory it exceeds (141.4 > 141)
    need = si_apart(r.footprint.total, max((m for _, m in short), default=0.0), "B")[0]
    short = [f"{label} ({si_apart(r.footprint.total, m, 'B')[1]})" for label, m in short]
    if short:
        out.print(f"does not fit: {need} (weights + KV + activations) "
                  f"> the memory of {', '.join(short)}; the TPOT floor assumes it fit "
                  f"({remedy})", soft_wrap=True, markup=False)

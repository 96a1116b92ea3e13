"""`rooflab llm`'s sweep tables and lines: --batch, --prefill, --context and --prompt
sweeps (split from llm_render)."""

from __future__ import annotations

import math

from ..units import fmt_ai, fmt_fraction, fmt_seconds, per_s, si
from ..workloads.llm.sweep_bend import equals_weights_batch, per_sequence_bytes
from .llm_words import narrower


def _table(title: str, columns: tuple[str, ...], rows):
    """A sweep's rich Table: every column right-aligned, one row of cells per sweep point."""
    from rich.table import Table  # rich loads only when a table is drawn (as elsewhere)

    t = Table(title=title)
    for col in columns:
        t.add_column(col, justify="right", overflow="fold")   # no "…" (s22 r3 F6)
    for cells in rows:
        t.add_row(*cells)
    return t


def sweep_table(sw):
    return _table(
        f"decode batch sweep at context {sw.context} (ridge {fmt_ai(sw.ridge)} FLOP/B)",
        ("batch", "AI", "AI / batch", "TPOT floor", "tokens/s", "FLOP/s", "weights", "KV",
         "bound"),
        ((str(row["batch"]), fmt_ai(row["ai"]), f"{row['ai'] / row['batch']:.2f}",
          fmt_seconds(row["tpot_s"]), per_s(row["tokens_per_s"]),
          si(row["flop_per_s"], "FLOP/s"), si(row["weight_bytes"], "B"),
          si(row["kv_bytes"], "B"), row["bound"]) for row in sw.rows()))


def prefill_sweep_table(ps, tp: int = 1):
    """TTFT against batch: each row one prefill of `batch` prompts admitted together."""
    per = "; one device's kernels, no all-reduces" if tp > 1 else ""
    return _table(
        f"prefill batch sweep, {ps.prompt}-token prompts (TTFT per batch{per})",
        ("batch", "AI", "TTFT floor", "prompt tokens/s", "FLOP/s", "weights", "activations",
         "bound"),
        ((str(row["batch"]), fmt_ai(row["ai"]), fmt_seconds(row["ttft_s"]),
          per_s(row["prompt_tokens_per_s"]), si(row["flop_per_s"], "FLOP/s"),
          si(row["weight_bytes"], "B"), si(row["activations_bytes"], "B"), row["bound"])
         for row in ps.rows()))


_FITS = {None: "-", True: "yes", False: "[red]no[/]"}


def context_sweep_table(cs, tp: int = 1, pp: int = 1):
    """TPOT against context at one batch: the KV cache grows, the weights do not."""
    per = ""
    if tp > 1:
        per += "; one device's kernels, no all-reduces"
    if pp > 1:
        per += "; all stages, no stage transfers; fits: the heaviest stage"
    return _table(
        f"decode context sweep at batch {cs.batch} (ridge {fmt_ai(cs.ridge)} FLOP/B{per})",
        ("context", "AI", "TPOT floor", "tokens/s", "KV", "weights", "attention", "bound",
         f"fits (batch {cs.batch})"),
        ((str(row["context"]), fmt_ai(row["ai"]), fmt_seconds(row["tpot_s"]),
          per_s(row["tokens_per_s"]), si(row["kv_bytes"], "B"), si(row["weight_bytes"], "B"),
          fmt_fraction(row["attention_share"]), row["bound"], _FITS[row["fits"]])
         for row in cs.rows()))


def prompt_sweep_table(ps, tp: int = 1):
    """TTFT against prompt length at one batch; attention's share grows with the prompt
    (causal scores grow as P(P+1)/2, the projections as P)."""
    per = "; one device's kernels, no all-reduces" if tp > 1 else ""
    return _table(
        f"prefill prompt sweep at batch {ps.batch} (TTFT per prompt length{per})",
        ("prompt", "TTFT floor", "prefill AI", "prompt tokens/s", "bound", "attention"),
        ((str(row["prompt"]), fmt_seconds(row["ttft_s"]), fmt_ai(row["ai"]),
          per_s(row["prompt_tokens_per_s"]), row["bound"], fmt_fraction(row["attention_share"]))
         for row in ps.rows()))


def context_sweep_lines(cs, fp=None, s=None) -> list[str]:
    """Where KV bytes pass the weights, and the contexts of the sweep that do not fit."""
    c = cs.kv_equals_weights_context
    rows = cs.rows()
    out = [f"KV bytes equal weight bytes at context {c:.0f} (batch {cs.batch}); past it the "
           f"KV cache, not the weights, is most of each step's bytes" if c is not None else
           f"KV bytes stay below the weight bytes at every context (the sliding windows "
           f"cap the cache) at batch {cs.batch}"]
    over = [str(r["context"]) for r in rows if r["fits"] is False]
    if over and fp is not None and fp.device_bytes:
        ways = (narrower(s, weights="least")[::-1] if s is not None else [])
        ways = ["a smaller --batch" if cs.batch > 1 else "", "--tp", *ways]
        ways = [w for w in ways if w]
        many = len(over) > 1
        out.append(f"memory: at batch {cs.batch}, context{'s' if many else ''} "
                   f"{', '.join(over)} of this sweep do{'' if many else 'es'} not fit in "
                   f"{si(fp.device_bytes, 'B')} ({', '.join(ways[:-1])}"
                   f"{' or ' if len(ways) > 1 else ''}{ways[-1]} make room)")
    return out


def _at(b: float | None) -> str:
    return "no batch" if b is None else "below batch 1" if b < 0.5 else f"batch {b:.0f}"


def bend_words(sw) -> str:
    """Where decode AI stops tracking the batch. AI = batch x FLOP per sequence / (weights +
    batch x (KV + activations) per sequence), so AI / batch halves where the two per-sequence
    parts together equal the weights. At a short context the activations, not the KV
    cache, bend it (tinyllama on a T4 at context 16: 3.66 MB of activations against 383 kB
    of KV per sequence; review r2 F1). The KV = weights batch is the engine's own
    (sweep.kv_equals_weights)."""
    kv, act = per_sequence_bytes(sw)
    b_kv = sw.kv_equals_weights_batch
    kv_at = _at(b_kv if math.isfinite(b_kv) else None)
    both = _at(equals_weights_batch(sw, kv + act))
    return (f"bytes per sequence: KV {si(kv, 'B')}, activations {si(act, 'B')}; KV bytes equal "
            f"weight bytes at {kv_at}, activations at {_at(equals_weights_batch(sw, act))}, "
            f"the two together at {both}: past it AI stops tracking the batch (AI / batch is "
            f"about half its batch-1 value there)")


def _names(kernels) -> str:
    return ", ".join(kernels)


def saturation_words(sat, cap: int | None = None) -> str:
    """Where tokens/s stops growing with the batch, by the per-kernel floors
    (sweep.Saturation): the weight matmuls turn compute-bound one by one, and past the
    last every kernel's floor grows in proportion to the batch. cap: the largest batch
    that fits the device (None: not known), said when the plateau is past it."""
    if sat.first_batch is None:
        return ("tokens/s keeps growing with the batch: no weight matmul turns compute-bound "
                "at any batch (each one's AI stays below its ridge), only memory stops it")
    never = (f"; {_names(sat.never_kernels)} stay{'s' if len(sat.never_kernels) == 1 else ''} "
             f"memory-bound at every batch (AI limit K x N / (K + N) below the ridge), a "
             f"constant that larger batches dilute" if sat.never_kernels else "")
    past = (f" (more than the {cap} that fit the device memory)"
            if cap and sat.last_batch and sat.last_batch > cap else "")
    return (f"tokens/s stops growing at batch {sat.last_batch}{past}: the weight matmuls turn "
            f"compute-bound (by their own floors) from batch {sat.first_batch} "
            f"({_names(sat.first_kernels)}) to batch {sat.last_batch} "
            f"({_names(sat.last_kernels)}); past it every kernel's floor grows in proportion "
            f"to the batch, at {per_s(sat.plateau_tokens_per_s)} tokens/s{never}")


def sweep_lines(sw, fp=None, s=None, unified: bool = False, weights_fit=None,
                decode: bool = True) -> list[str]:
    """The sweep's knee and, past the device memory, what makes room: only the --weights and
    --kv narrower than `s`'s (Settings; None: the defaults' fp16 wording), and --tp unless
    the device is a unified-memory one (a Jetson: one module, no link to a second).
    weights_fit(dtype): whether the weights alone fit one device in that dtype; where they
    do not fit now, only those are offered (fp16 llama-3-8b on an 8 GB Orin Nano: int4,
    not int8's 8.16 GB). decode=False (under a prefill sweep): the memory lines only,
    without the decode step's knee and KV = weights batch."""
    # the aggregate AI (total FLOP / total bytes) is named as what it is: attention's KV
    # bytes dilute it, so it reaches the ridge far later than tokens/s stops growing
    # (review s18 r3 F1: 2666 against 462 for llama-3-8b on an H100); saturation_words
    # gives that batch by the per-kernel floors the table sums
    knee = (f"the step reaches the ridge at batch {sw.knee_batch:.0f} in total FLOP / total "
            f"bytes (as if one kernel)" if sw.knee_batch else
            f"AI saturates at {sw.ai_limit:.3g} FLOP/B (below the ridge {fmt_ai(sw.ridge)}): the "
            f"step as a whole stays memory-bound at every batch")
    head = [f"{bend_words(sw)}; {knee}"]
    if sw.saturation is not None:
        head.append(saturation_words(sw.saturation, fp.max_batch if fp is not None else None))
    out: list[str] = []
    # seed 002: past the device memory a bigger batch is no option at all
    cap = fp.max_batch if fp is not None else None
    split = [] if unified else ["--tp"]   # a Jetson has no second device to split over
    if cap == 0:
        ways = split + (narrower(s, kv=False, keep=weights_fit) if s is not None
                        else ["--weights int8/int4"])
        out.append(f"memory: the weights alone ({si(fp.weights, 'B')}) do not fit in "
                   f"{si(fp.device_bytes, 'B')}: no batch of this sweep runs ("
                   + (", or ".join(ways) or "a smaller model, or a device with more memory")
                   + ")")
    elif cap is not None:
        big = [str(p.batch) for p in sw.points if p.batch > cap]
        # 'batches 1024 and 4096 of this sweep', not 'batch 1024 of this sweep, batch 4096
        # of this sweep' (review s33 E)
        over = ([f"batch {big[0]} of this sweep"] if len(big) == 1 else
                [f"batches {', '.join(big[:-1])} and {big[-1]} of this sweep"] if big else [])
        # the aggregate-AI ridge batch is no longer offered here: "too big: the ridge
        # batch 2666" read as the memory batching needs (review s18 r3 F1); where tokens/s
        # stops growing says itself whether that batch fits (saturation_words)
        b = sw.kv_equals_weights_batch
        if decode and b and b > cap:
            over.append(f"the KV = weights batch {b:.0f}")
        ways = split + (narrower(s, weights="least")[::-1] if s is not None else
                        ["--kv fp8", "--weights int4"])
        if over:
            out.append(f"memory: at most batch {cap} fits in {si(fp.device_bytes, 'B')} "
                       f"(context {fp.context}); too big: {', '.join(over)} ("
                       + (f"{', '.join(ways[:-1])} or {ways[-1]} make room" if len(ways) > 1
                          else f"{ways[0]} makes room" if ways else
                          "no narrower --weights/--kv makes room")
                       + ")")
    return head + out if decode else out

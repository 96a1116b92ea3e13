"""`rooflab llm --pp`'s section: the stages, latency and throughput views, the
in-flight memory (split from llm_render)."""

from __future__ import annotations

from ..units import fmt_fraction, fmt_seconds, per_s, si, si_apart
from .llm_words import device_word, rows_words, stream_dtype


def _dtypes_fit(r, device_bytes: float) -> bool:
    """Whether some narrower --weights/--kv fits the model on one device of that memory."""
    from ..workloads.llm.pipeline import quantized_fit

    fp = r.footprint
    return quantized_fit(r.config, r.settings, batch=fp.batch, context=fp.context,
                         prompt=r.request.prompt, device_bytes=device_bytes) is not None


def stage_kinds(ppr, r) -> list[str]:
    """Each stage's kinds of layers where the model has more than one, or its layers'
    weights differ (a GGUF file): " (10 full + 11 window 4096; KV a layer 67.1 MB / 33.6 MB
    a sequence)", " (a layer 123 MB-139 MB)"; "" for a model of one kind of layer. A
    stage's bytes are sums over its layers, and their mean hides the two kinds (s27)."""
    from ..workloads.llm.parallel import shard
    from ..workloads.llm.pipeline import layer_kinds

    cfg = shard(r.config, r.settings.tp)
    ctx = r.footprint.context
    every = layer_kinds(cfg, r.settings, range(cfg.layers), ctx)
    mixed_att = len({k.attention for k in every}) > 1
    mixed_mlp = len({k.mlp for k in every}) > 1
    order = {(k.attention, k.mlp): i for i, k in enumerate(every)}
    out = []
    for st in ppr.stages:
        kinds = sorted(layer_kinds(cfg, r.settings, st.layers, ctx),
                       key=lambda k: order[(k.attention, k.mlp)])    # every stage alike
        parts = []
        if mixed_att or mixed_mlp:
            names = [" ".join(w for w, on in ((k.attention, mixed_att), (k.mlp, mixed_mlp))
                              if on) for k in kinds]
            parts.append(" + ".join(f"{k.layers} {n}" for k, n in zip(kinds, names,
                                                                       strict=True)))
        if mixed_att and len({k.kv_bytes for k in kinds}) > 1:
            parts.append("KV a layer " + " / ".join(si(k.kv_bytes, "B") for k in kinds)
                         + f" a sequence at {ctx} tokens")
        lo = min(k.weights_bytes[0] for k in kinds)
        hi = max(k.weights_bytes[1] for k in kinds)
        if hi > lo * (1 + 1e-9):
            parts.append(f"a layer's weights {si(lo, 'B')}-{si(hi, 'B')}")
        out.append(f" ({'; '.join(parts)})" if parts else "")
    return out


def pipeline_lines(ppr, r) -> list[str]:
    """--pp's section: the stages, the latency view (TPOT) and the throughput view."""
    if ppr is None:
        return []
    mem = r.footprint.device_bytes
    if mem and mem != ppr.device_bytes:   # --memory reaches the footprint, not _pipeline
        from dataclasses import replace

        ppr = replace(ppr, device_bytes=mem)
    lk = ppr.link
    lat = f" + {fmt_seconds(lk.hop_latency_s, 4)} latency" if lk.hop_latency_s else ""
    kinds = stage_kinds(ppr, r)
    stage = "; ".join(f"stage {st.index}: {st.describe()}{kinds[st.index]}, "
                      f"{fmt_seconds(st.seconds)}"
                      + (f" (all-reduces {fmt_seconds(st.comm_s)})" if st.comm_s else "")
                      + f", {si(st.total_bytes, 'B')}" for st in ppr.stages)
    hops = ppr.pp - 1
    slow = ppr.slowest
    if ppr.round_s > ppr.micro_batches * ppr.period_s * (1 + 1e-9):
        # too few micro-batches to cover one token's trip: each waits for its last token
        pace = (f"each waits for its last token to pass every stage and transfer, so the "
                f"TPOT floor ({fmt_seconds(ppr.tpot_s)}) sets the pace")
    elif ppr.hop_s > slow.seconds:
        pace = (f"one stage transfer ({fmt_seconds(ppr.hop_s)}) outlasts the slowest stage "
                f"({slow.index}, {fmt_seconds(slow.seconds)}) and sets the pace")
    else:
        pace = f"the slowest stage ({slow.index}, {fmt_seconds(slow.seconds)}) sets the pace"
    unit = device_word(r.roof)
    out = [f"pipeline parallel x{ppr.pp}" + (f" (x TP {ppr.tp} = {ppr.gpus} {unit}s)"
                                             if ppr.tp > 1 else "") + f": {stage}",
           f"pipeline latency (one batch in flight): stages {fmt_seconds(ppr.stages_s)} + "
           f"{hops} transfer{'s' if hops > 1 else ''} of {si(ppr.transfer_bytes, 'B')} "
           f"(batch {ppr.batch} x {rows_words(r.settings)}hidden x "
           f"{r.settings.comm_bytes:g} B, the "
           f"{stream_dtype(r.settings)} residual stream) on "
           f"{si(lk.bus_bytes_per_s, 'B/s')}{lat} "
           f"({lk.source}) = {fmt_seconds(ppr.transfer_s)} -> TPOT floor "
           f"{fmt_seconds(ppr.tpot_s)}; a token passes every stage in turn, so pipeline "
           f"parallelism does not cut single-stream latency (it makes room: memory is per "
           f"stage)",
           f"pipeline throughput: {ppr.micro_batches} micro-batch"
           f"{'es' if ppr.micro_batches > 1 else ''} of {ppr.batch} in flight, {pace}: "
           f"{per_s(ppr.tokens_per_s)} tokens/s for the system, "
           f"{per_s(ppr.tokens_per_s_per_gpu)} per {unit}"
           + (f"; bubble {fmt_fraction(ppr.bubble)} of the slowest stage's time"
              + (f" (only {ppr.micro_batches} micro-batch"
                 f"{'es' if ppr.micro_batches > 1 else ''} for {ppr.pp} stages: "
                 f"--micro-batches {ppr.pp} fills it)"
                 if ppr.micro_batches < ppr.pp else "") if ppr.bubble else "")
           + ("; NOT reachable: the micro-batches in flight do not fit (next line)"
              if ppr.fits_in_flight is False else "")]
    return out + in_flight_lines(ppr)


def in_flight_lines(ppr) -> list[str]:
    """The throughput view's memory: every stage keeps the KV of all M x batch sequences
    in flight (the memory line above counts one batch, the latency view)."""
    if ppr.micro_batches < 2:
        return []
    st = ppr.heaviest_in_flight
    kv = ppr.in_flight_kv_bytes(st)
    total = ppr.in_flight_bytes(st)
    head = (f"pipeline memory ({ppr.micro_batches} micro-batches of {ppr.batch} in flight = "
            f"{ppr.in_flight} sequences, stage {st.index}): weights "
            f"{si(st.weights_bytes, 'B')} + KV {si(kv, 'B')} ({ppr.micro_batches} x "
            f"{si(st.kv_bytes, 'B')}) + prefill activations "
            f"{si(st.activations_bytes, 'B')} (one prompt in flight, reserved once)"
            + (f" + decode logits {si(ppr.micro_batches * st.logits_bytes, 'B')}"
               if st.logits_bytes else "") + " = ")
    if not ppr.device_bytes:
        return [head + f"{si(total, 'B')} (device memory unknown: give --memory)"]
    need, have = si_apart(total, ppr.device_bytes, "B")
    if ppr.fits_in_flight:
        return [head + f"{need} of {have} per device (fits)"]
    cap = ppr.max_micro_batch
    # cap 0: not one sequence per micro-batch fits (said "at most 0 per micro-batch
    # (--batch 0)", a batch the verb refuses, s36 J)
    fix = (f"at most {cap} per micro-batch (--batch {cap}), or fewer micro-batches "
           f"(--micro-batches)" if cap >= 1 else "not one sequence per micro-batch fits "
           "at that many: give fewer micro-batches (--micro-batches)")
    return [head + f"{need} of {have} per device: does NOT fit with "
            f"{ppr.micro_batches} micro-batches in flight; {fix}"]

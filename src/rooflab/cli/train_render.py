"""What `rooflab train` shows: the kernel table, the summary lines and the --json document.
Pure; -o's file (JSON, CSV or a chart) is written by cli/train_output.py, and cli/train.py
runs the step (workloads/llm/train.py)."""

from __future__ import annotations

from ..model.choose import WITH_LAUNCHES
from ..units import fmt_ai, fmt_pct, fmt_rate, fmt_seconds, per_s, si, si_apart
from ..workloads.llm.train import TrainResult
from ..workloads.llm.train_dp import unsharded
from ..workloads.llm.train_memory import (
    TrainMemory,
    loss_peak_bytes,
    zero3_devices,
    zero3_least,
)
from .llm_render import bound_cell
from .llm_words import span

PARTS = ("forward", "recompute", "backward", "optimizer")
MFU_SOURCE = {
    "full": ("PaLM (Chowdhery et al. 2022, appendix B): model FLOPs per token 6 N + 12 L H "
             "Q T, N the parameters a token's matmuls use (input embedding table out, "
             "lm_head in), the full T x T attention scores (not the causal half; "
             "--attention-flops full, as nanoGPT and the published MFUs count)"),
    "causal": ("PaLM's 6 N (Chowdhery et al. 2022, appendix B) + the causal half of the "
               "attention scores (--attention-flops causal: Megatron-LM's "
               "num_floating_point_operations, 'only half of the attention matrix is "
               "non-zero'), N the parameters a token's matmuls use"),
}
HFU_SOURCE = ("PaLM's hardware FLOPs: model FLOPs plus the recomputed ones (the --recompute "
              "kernels' and the S = Q K^T that FlashAttention-2's backward recomputes)")


def kernel_table(r: TrainResult):
    from rich.markup import escape
    from rich.table import Table

    st = r.setup
    acc = f" x {st.accumulate} micro-batches" if st.accumulate > 1 else ""
    t = Table(title=f"training step: {r.config.name}, batch {st.batch} x {st.seq} tokens"
                    f"{acc}, {st.dtype}, {st.attn} attention, recompute {st.recompute}, "
                    f"{st.optimizer}{settings_words(st)} (calls = per layer x layers{acc})")
    for col in ("kernel", "part", "calls", "FLOP", "bytes", "AI", "bound", "floor", "share"):
        t.add_column(col, justify="left" if col in ("kernel", "part", "bound") else "right",
                     no_wrap=col == "kernel", overflow="fold")
    by_name = {p.kernel: p for p in r.timing.points}
    total = r.floor_s
    for op in r.step.ops:
        p = by_name[op.op.name]
        t.add_row(escape(op.op.name), r.step.part_of(op.op.name), str(op.calls),
                  si(op.flop), si(op.bytes, "B"), fmt_ai(p.ai), bound_cell(p),
                  fmt_seconds(p.floor_s), fmt_pct(100 * p.floor_s / total))
    if r.dp is not None:     # --dp: the collectives' row (cli/train_dp_words.py)
        from .train_dp_words import add_dp_row

        add_dp_row(t, r)
    if r.tp is not None:     # --tp: a row per collective (cli/train_tp_words.py)
        from .train_tp_words import add_tp_rows

        add_tp_rows(t, r)
    step = r.timing.step
    t.add_section()
    t.add_row("step", "", str(step.launches), si(step.flop), si(step.bytes, "B"),
              fmt_ai(step.ai), r.timing.bound, fmt_seconds(total), "100 %")
    return t


def settings_words(st) -> str:
    """The table title's words for --loss fused and --clip-grad ('' at their defaults)."""
    return ((", fused loss (Liger)" if st.loss == "fused" else "")
            + (", clip-grad" if st.clip_grad else ""))


def summary_lines(r: TrainResult, mem: TrainMemory, step_ms: float | None,
                  largest: tuple[int, int] | None = None) -> list[str]:
    st = r.setup
    parts = ", ".join(f"{part} {fmt_seconds(r.part_s(part))}" for part in PARTS
                      if getattr(r.step, part))
    if r.dp is not None:               # the parts add up to the floor: its exposed comm too
        parts += f", communication exposed {fmt_seconds(r.dp.exposed_s)}"
    if r.tp is not None:
        parts += f", tensor-parallel communication {fmt_seconds(r.tp.comm_s)}"
    t = r.timing
    lo, hi = t.launch_s_range
    per = (f"{st.tokens} tokens per step" if st.accumulate == 1 else
           f"{st.step_tokens} tokens per optimizer step: {st.accumulate} micro-batches of "
           f"{st.tokens}")
    if st.dp > 1 or st.tp > 1:
        from .train_dp_words import tokens_words

        per = tokens_words(st, per)
    lines = [
        f"step floor {fmt_seconds(r.floor_s)} ({parts}; {WITH_LAUNCHES} "
        f"{fmt_seconds(r.with_launches_s)}: {t.step.launches} launches x "
        f"{span(*t.per_launch_s)} = {span(lo, hi)}) on {t.analysis.roof.name}; "
        f"{per_s(r.tokens_per_s)} tokens/s at the floor ({per})",
        f"model FLOPs {si(r.model_flop)} per step{tp_words(r)} "
        f"({si(r.model_flop * st.tp / st.step_tokens)} per "
        f"token: 6 N = {si(6 * r.n_params)} with N = {si(r.n_params)}, + "
        f"{st.attention_flops} attention); counted in "
        f"the kernels {si(r.counted_flop)} ({counted_attention_words(r)}, norms and the "
        f"rest; recomputed {si(r.recompute_flop)})",
        f"MFU at the floor {fmt_pct(100 * r.mfu_at_floor)} of {r.peak_label} "
        f"{fmt_rate(r.peak_flop_per_s, st.dtype)} ({fmt_pct(100 * r.mfu(r.with_launches_s))} "
        f"{WITH_LAUNCHES}; the best this step can reach on this roof, kernels one after "
        f"another){over_100_words(r)}",
    ]
    if step_ms is not None:
        s = step_ms / 1e3
        lines.append(f"measured step {fmt_seconds(s)}: MFU {fmt_pct(100 * r.mfu(s))}, HFU "
                     f"{fmt_pct(100 * r.hfu(s))}; {per_s(st.step_tokens * st.dp / s)} "
                     f"tokens/s; the floor is {fmt_pct(100 * r.floor_s / s)} of it"
                     + (" (FASTER THAN THE FLOOR: see the warning)" if s < r.floor_s else
                        " (MFU above 100 %: PaLM's full T x T count, as the MFU line says)"
                        if r.mfu(s) > 1 else ""))
    if r.tp is not None:
        from .train_tp_words import tp_lines

        lines += tp_lines(r)
    if r.dp is not None:
        from .train_dp_words import dp_lines

        lines += dp_lines(r)
    lines.append(memory_line(mem, st, largest, zero3_fewest(r, mem)))
    return lines


def tp_words(r: TrainResult) -> str:
    """', per device: 1/8 of the model's 189 T' under --tp 8, else ''."""
    n = r.setup.tp
    return f" per device, 1/{n} of the model's {si(r.model_flop * n)}" if n > 1 else ""


def zero3_fewest(r: TrainResult, mem: TrainMemory) -> tuple[int, str, float] | None:
    """The fewest ZeRO-3 devices at a smaller activation footprint (train_memory.
    zero3_least), where the states alone do not fit one device; else None."""
    if mem.device_bytes is None or mem.states <= mem.device_bytes:
        return None
    return zero3_least(r.config, r.setup, mem.device_bytes)


def counted_attention_words(r: TrainResult) -> str:
    """What the kernels count of attention: flash the causal scores (a sliding-window
    layer's window), naive (eager) the dense T x T product, the mask applied after it
    (kernel_ops.attention)."""
    if r.setup.attn == "naive":
        return "naive attention's dense T x T scores, the masked half included"
    cfg = r.config
    kind = "chunked" if cfg.chunked else "sliding-window"
    window = (f" ({kind} layers: their {'chunk' if cfg.chunked else 'window'})"
              if cfg.sliding_window and cfg.sliding_layers else "")
    return f"causal attention{window}"


def over_100_words(r: TrainResult) -> str:
    """Why an MFU at the floor passes 100 % (PaLM's full T x T scores against causal
    kernels), and the causal count's MFU; '' at or under 100 %."""
    if r.mfu_at_floor <= 1:
        return ""
    from ..workloads.llm.train import palm_flop_per_token

    six_n, attn, _ = palm_flop_per_token(r.config, r.setup.seq, "causal")
    causal = (six_n + attn) * r.setup.step_tokens / r.floor_s / r.peak_flop_per_s
    return (f"; above 100 % because PaLM's count (--attention-flops full) takes the full "
            f"T x T attention scores while the causal kernels compute half: model FLOPs "
            f"{r.model_flop / r.counted_flop:.2f}x the kernels' here; counting the causal "
            f"half (--attention-flops causal, Megatron-LM's) it is {fmt_pct(100 * causal)}")


def optimizer_note(r: TrainResult) -> tuple[str, ...]:
    """When the optimizer pass is a large share of the floor: what amortizes it (it is a
    memory-bound element-wise pass over every parameter, once per optimizer step)."""
    share = r.part_s("optimizer") / r.floor_s
    if share < 0.2:
        return ()
    st = r.setup
    return (f"the optimizer is {fmt_pct(100 * share)} of the floor: it runs once per "
            f"optimizer step over every parameter, so more tokens per step amortize it "
            f"(--accumulate N, now {st.accumulate}; a larger --batch), as do a fused "
            f"multi-tensor kernel (one pass, no per-tensor launches) and sharding its state "
            f"over data-parallel ranks (ZeRO-1)",)


def below_floor_words(r: TrainResult, step_s: float) -> str:
    """The stderr warning for a measured step faster than the floor: `rooflab llm`'s words
    for a TPOT below its floor (llm_gap.gap_line), and a training step's usual causes."""
    acc = (f" of {r.setup.accumulate} micro-batches" if r.setup.accumulate > 1 else "")
    return (f"--step-ms {step_s * 1e3:g} is faster than the floor "
            f"({fmt_seconds(r.floor_s)}) by {fmt_seconds(r.floor_s - step_s)}: no step can "
            f"beat max(FLOP / P, bytes / B), so the roof is too low (a disturbed probe?) or "
            f"the step does less work than counted; check the units (milliseconds, not "
            f"seconds), that the time is of one optimizer step{acc} (not a micro-batch), "
            f"and --batch, --seq, --accumulate, --dtype and --on; its MFU "
            f"({fmt_pct(100 * r.mfu(step_s))}) is not a reading")


def memory_line(mem: TrainMemory, setup, largest: tuple[int, int] | None = None,
                fewest: tuple[int, str, float] | None = None) -> str:
    """The memory sum and its verdict; `largest`: the largest --batch that fits as the
    step runs and under --recompute full; `fewest`: zero3_fewest's devices."""
    # the sum and the device with as many digits as tell them apart (16.7636 GB of
    # 16.763 GB, not 16.8 GB of 16.8 GB: review s28 R2 F5)
    total, device = si_apart(mem.total, mem.device_bytes or mem.total, "B")
    parts = (f"weights {si(mem.weights, 'B')} + grads {si(mem.grads, 'B')} + optimizer "
             f"{si(mem.optimizer, 'B')} + activations {si(mem.activations, 'B')} = {total}")
    if mem.device_bytes is None:
        return f"memory: {parts} (device memory unknown: give --memory)"
    fit = ""
    if largest is not None and mem.states <= mem.device_bytes:
        now, full = largest
        fit = f"; largest --batch that fits: {now}" + (
            f" ({full} with --recompute full)" if setup.recompute != "full" else "")
    if mem.fits:
        verdict = "fits"
    elif mem.states > mem.device_bytes and setup.dp > 1:    # the sharding: below, at --dp
        verdict = (f"DOES NOT FIT: {si(mem.total - mem.device_bytes, 'B')} over; the "
                   f"weights, gradients and optimizer state alone are "
                   f"{si(mem.states, 'B')} per device, so no --batch or --recompute fits")
    elif mem.states > mem.device_bytes:
        states = unsharded(mem, setup).states     # --dp --zero: the devices' together
        n = zero3_devices(unsharded(mem, setup))
        verdict = (f"DOES NOT FIT: {si(mem.total - mem.device_bytes, 'B')} over; the "
                   f"weights, gradients and optimizer state alone are "
                   f"{si(mem.states, 'B')}, so no --batch or --recompute fits: shard them "
                   f"over devices (ZeRO-3 / FSDP: "
                   + (f"{n} devices at this micro-batch, {si(states / n, 'B')} of state "
                      f"each" if n else f"the activations alone, {si(mem.activations, 'B')}, "
                      f"exceed one device: shard them after --recompute full or a smaller "
                      f"--batch or --seq")
                   + (f"; {fewest[0]} with {fewest[1]}, {si(fewest[2], 'B')} of state "
                      f"each" if fewest else "")
                   + ")")
    else:
        tries = ([] if setup.recompute == "full" else ["--recompute full"]) + (
            ["a smaller --batch (with --accumulate to keep the tokens per step)"]
            if setup.batch > 1 else [])
        verdict = (f"DOES NOT FIT: {si(mem.total - mem.device_bytes, 'B')} over; try "
                   f"{', '.join(tries) or 'a shorter --seq'}")
    if setup.dp > 1:
        from .train_dp_words import dp_memory_words

        verdict += f"; {dp_memory_words(mem, setup, fewest)}"
    where = "the device" if setup.dies == 1 else "one die (a rank's device)"
    return (f"memory: {parts} of {device} on {where} "
            f"({verdict}{fit})")


def train_dict(r: TrainResult, mem: TrainMemory, step_ms: float | None,
               notes: tuple[str, ...], largest: tuple[int, int] | None = None) -> dict:
    """The --json document and -o's .json: the schema's roof, kernels and analysis (what
    report, whatif, plot and choose read), and a `train` section."""
    from ..model.roof_schema import roof_to_dict
    from ..model.schema import SCHEMA_VERSION, kernel_to_dict, points_to_dicts
    from .train_dp_words import setup_more

    a, t = r.timing.analysis, r.timing
    st = r.setup
    measured = None
    if step_ms is not None:
        s = step_ms / 1e3
        measured = {"step_s": s, "mfu": r.mfu(s), "hfu": r.hfu(s),
                    "tokens_per_s": st.step_tokens / s, "floor_fraction": r.floor_s / s,
                    "faster_than_floor": s < r.floor_s}

    by_name = {p.kernel: p for p in r.timing.points}
    fewest = zero3_fewest(r, mem)
    train = {
        "model": {"name": r.config.name, "source": r.config.source, "layers": r.config.layers,
                  "hidden": r.config.hidden, "heads": r.config.heads, "vocab": r.config.vocab,
                  "params": mem.params if st.tp == 1 else model_params(r.config),
                  "palm_n": r.n_params},
        "setup": {"batch": st.batch, "seq": st.seq, "tokens": st.tokens,
                  "accumulate": st.accumulate, "step_tokens": st.step_tokens,
                  "dtype": st.dtype, "attn": st.attn, "recompute": st.recompute,
                  "optimizer": st.optimizer, "attention_flops": st.attention_flops,
                  "optimizer_state": st.optimizer_spec()[3],
                  "loss": st.loss, "clip_grad": st.clip_grad,
                  **({"dp": st.dp_devices, "zero": st.zero,
                      "grad_dtype": st.grad_dtype or st.storage} if st.dp > 1 else {}),
                  **({"tp": st.tp_devices, "sequence_parallel": st.sequence_parallel}
                     if st.tp > 1 else {}), **setup_more(st)},
        "floor_s": r.floor_s, "work_floor_s": r.floor_s,
        "with_launches_s": r.with_launches_s,
        "launches": {"per_step": t.step.launches, "per_launch_s": list(t.per_launch_s),
                     "launch_s": list(t.launch_s_range), "source": t.launch_source},
        # under --dp the exposed communication too, so the parts add up to floor_s (s30)
        "parts_s": {**{part: r.part_s(part) for part in PARTS},
                    **({"comm": r.comm_exposed_s}
                       if r.dp is not None or r.tp is not None else {})},
        "tokens_per_s": r.tokens_per_s,
        "model_flop": r.model_flop, "model_flop_source": MFU_SOURCE[st.attention_flops],
        "counted_flop": r.counted_flop, "recompute_flop": r.recompute_flop,
        "hfu_source": HFU_SOURCE,
        "peak_flop_per_s": r.peak_flop_per_s, "peak": r.peak_label,
        "mfu_at_floor": r.mfu_at_floor, "hfu_at_floor": r.hfu(r.floor_s),
        "mfu_with_launches": r.mfu(r.with_launches_s),
        "mfu_at_floor_note": over_100_words(r).removeprefix("; ") or None,
        "measured": measured,
        "memory": {"params": mem.params, "weights_bytes": mem.weights,
                   "grads_bytes": mem.grads, "optimizer_bytes": mem.optimizer,
                   "activations_bytes": mem.activations,
                   "activations_per_layer_bytes": mem.per_layer,
                   "outside_layers_bytes": mem.outside_layers, "total_bytes": mem.total,
                   "loss_peak_bytes": loss_peak_bytes(r.config, st),
                   "states_bytes": mem.states, "device_bytes": mem.device_bytes,
                   "fits": mem.fits,
                   "largest_batch": None if largest is None else largest[0],
                   "largest_batch_recompute_full": None if largest is None else largest[1],
                   "zero3_devices": zero3_devices(unsharded(mem, st)) if mem.fits is False
                   else None,
                   "zero3_fewest": None if fewest is None else
                   {"devices": fewest[0], "with": fewest[1], "state_bytes_each": fewest[2]},
                   **({"zero_fit": zero_fit_dict(mem, st)} if st.dp > 1 else {})},
        "kernels": [{"name": o.op.name, "part": r.step.part_of(o.op.name), "op": o.op.op,
                     "calls": o.calls, "flop": o.flop, "bytes": o.bytes,
                     "bytes_split": {k: o.split(k) for k in ("weights", "activations")},
                     "ai": by_name[o.op.name].ai, "bound": by_name[o.op.name].bound,
                     "floor_s": by_name[o.op.name].floor_s} for o in r.step.ops],
        "notes": list(notes),
    }
    doc = {"schema_version": SCHEMA_VERSION, "roof": roof_to_dict(a.roof),
           "kernels": [kernel_to_dict(k) for k in a.kernels],
           "analysis": points_to_dicts(a.points), "train": train}
    if r.dp is not None:     # --dp: train.dp and the collectives' kernel
        from .train_dp_words import add_dp_kernel, dp_dict

        train["dp"] = dp_dict(r)
        add_dp_kernel(doc, r)
    if r.tp is not None:     # --tp: train.tp and its collectives' kernel
        from .train_tp_words import add_tp_kernel, tp_dict

        train["tp"] = tp_dict(r)
        add_tp_kernel(doc, r)
    return doc


def model_params(cfg) -> int:
    """The whole model's parameters (under --tp the memory block's are one device's)."""
    from ..workloads.llm.params import count_params

    return count_params(cfg).total


def zero_fit_dict(mem: TrainMemory, st) -> dict | None:
    """memory.zero_fit under --dp: the smallest --zero stage that holds a step that does
    not fit, at its --dp N (None where it fits, or no stage does)."""
    from .train_dp_words import zero_fit

    fit = zero_fit(mem, st) if mem.fits is False else None
    return None if fit is None else {"dp": st.dp_devices, "zero": fit[0],
                                     "bytes_per_device": fit[1]}

"""rooflab train — one training step of a transformer on the roof: forward, backward,
recompute and optimizer kernels, the step floor, tokens/s, MFU and memory."""

from __future__ import annotations

import math
import warnings
from typing import Annotated

import typer

from ..errors import InputError
from .comm_options import (
    GradDtypeOpt,
    HopLatencyOpt,
    LinkFromOpt,
    hop_latency_s,
    link_latency_opt,
)
from .options import on_option
from .train_bucket_words import BUCKET_HELP, check_bucket_mb

OnTrain = Annotated[str | None, on_option()]
TpOpt = Annotated[int, typer.Option(
    "--tp", help="tensor-parallel devices per model replica (Megatron-LM): each holds 1/N "
    "of every layer's heads and MLP columns and of the vocabulary; 4 all-reduces of the "
    "b x s x h activation per layer (6 with --recompute full) on the node's link, not "
    "overlapped; inside one node (scale out with --dp)")]
SequenceParallelOpt = Annotated[bool, typer.Option(
    "--sequence-parallel", help="--tp: Korthikanti et al. 2022's sequence parallelism: "
    "the norms and residual adds, and their activations, split over the --tp devices; each "
    "all-reduce a reduce-scatter + all-gather (the same bytes); the norms' gradients "
    "all-reduced once per step at Megatron-LM's main_grad width (fp32 under bf16; "
    "--grad-dtype with --dp sets it)")]
TpLinkBwOpt = Annotated[str | None, typer.Option(
    "--tp-link-bw", help="--tp: the TP group's bus bandwidth with its unit, 450GB/s "
    "(default: the catalog link, as `rooflab llm --tp`)")]
LinkLatencyOpt = link_latency_opt()
MAX_STEP_MS = 86_400_000.0    # a day: --step-ms past it is a typo, not a measured step


def register(app) -> None:
    @app.command("train")
    def train(
        config: str = typer.Argument(..., help="config.json path, bundled name (`rooflab llm "
                                     "list`) or Hugging Face id, as `rooflab llm` takes it"),
        on: OnTrain = None,
        batch: int = typer.Option(1, "--batch", help="sequences per micro-batch on the "
                                  "device (one forward and backward)"),
        accumulate: int = typer.Option(1, "--accumulate", help="gradient accumulation: "
                                       "micro-batches per optimizer step (forward and "
                                       "backward N times, the optimizer once; memory at "
                                       "the micro-batch, tokens/s and MFU per optimizer "
                                       "step)"),
        seq: int = typer.Option(None, "--seq", help="tokens per sequence (default: 2048, or "
                                "the model's context when shorter)"),
        recompute: str = typer.Option("none", "--recompute", help="activation recompute: "
                                      "none, full (the blocks' forward again; keeps each "
                                      "layer's input) or selective (Korthikanti et al. "
                                      "2022: attention's core, which flash attention "
                                      "recomputes anyway)"),
        optimizer: str = typer.Option("adamw", "--optimizer", help="adamw or sgd (with "
                                      "momentum); fp32 state (and, under mixed precision, "
                                      "an fp32 master copy of the weights)"),
        dtype: str = typer.Option(None, "--dtype", help="weights, gradients and "
                                  "activations: bf16 or fp16 (mixed precision; default "
                                  "bf16, or fp16 on a roof with fp16 tensor math and no "
                                  "bf16, a V100 or T4, as `rooflab scale`), fp32 (no mixed "
                                  "precision, TF32 off: a CPU step) or tf32 (fp32 with the "
                                  "matmuls on TF32 tensor cores)"),
        attention_flops: str = typer.Option("full", "--attention-flops", help="MFU's "
                                            "attention term: full (PaLM's 12 L H Q T, the "
                                            "published MFU's, nanoGPT's; the default) or "
                                            "causal (the half a causal kernel computes, "
                                            "as Megatron-LM counts now)"),
        attn: str = typer.Option("flash", "--attn", help="flash (FlashAttention-2's "
                                 "backward) or naive (the s x s scores stored)"),
        loss: str = typer.Option("eager", "--loss", help="eager (Hugging Face's: the "
                                 "lm_head writes every logit, the cross-entropy reads them, "
                                 "12 B per logit held) or fused (Liger-Kernel's fused "
                                 "linear cross-entropy: chunked, the lm_head's backward "
                                 "in the forward, one chunk's logits held)"),
        clip_grad: bool = typer.Option(False, "--clip-grad", help="count "
                                       "clip_grad_norm_: a norm over every gradient (read "
                                       "once) and their scaling (read and written)"),
        step_ms: float = typer.Option(None, "--step-ms", help="a measured step time in "
                                      "milliseconds: its MFU and HFU against the roof's "
                                      "dense tensor peak at --dtype (fp32: the "
                                      "fp32 ceiling its matmuls run at)"),
        dp: int = typer.Option(1, "--dp", help="data-parallel devices, each running "
                               "--batch: the gradients' all-reduce (or ZeRO's collectives) "
                               "on the ring link `rooflab scale` picks; tokens/s of all "
                               "of them, MFU per device. On a package of several dies (an "
                               "MI250X) --dp and --tp count packages and every die is a "
                               "rank: --dp N is 2N ranks, each running --batch on one die "
                               "(the table, floors, MFU and memory are one die's)"),
        zero: int = typer.Option(0, "--zero", help="ZeRO stage over the --dp devices "
                                 "(Rajbhandari et al. 2020): 1 shards the optimizer state, "
                                 "2 also the gradients, 3 also the weights; needs --dp 2 or "
                                 "more"),
        overlap: bool | None = typer.Option(None, "--overlap/--no-overlap", help="--dp: "
                                            "overlap the collectives with the compute (the "
                                            "default: DDP's buckets, 1 MiB then 25 MiB, "
                                            "and ZeRO-1/2's 5e8-element reduce-scatter "
                                            "buckets, each filled tensor by tensor; FSDP "
                                            "units under --zero 3), or run them after it"),
        link_bw: str = typer.Option(None, "--link-bw", help="--dp: the ring's bus "
                                    "bandwidth with its unit, 450GB/s or 400Gb/s (default: "
                                    "the catalog link, as `rooflab scale`)"),
        link_from: LinkFromOpt = None,
        hop_latency_us: HopLatencyOpt = None,
        bucket_mb: float = typer.Option(None, "--bucket-mb", help=BUCKET_HELP),
        grad_dtype: GradDtypeOpt = None,
        tp: TpOpt = 1,
        sequence_parallel: SequenceParallelOpt = False,
        tp_link_bw: TpLinkBwOpt = None,
        link_latency: LinkLatencyOpt = None,
        memory: str = typer.Option(None, "--memory", help="one rank's device memory, "
                                   "e.g. 80GB (default: the catalog's; on a package of "
                                   "several dies, an MI250X, one die's: 64 GB)"),
        json_out: bool = typer.Option(False, "--json", help="print JSON"),
        output: str = typer.Option(None, "-o", "--output", help="kernel file .json (for "
                                   "`rooflab report`, `whatif`), .csv, or a chart .png/.svg"),
    ) -> None:
        """One training step on the roof: forward, backward, recompute and optimizer
        kernels, the step floor, tokens/s, MFU and whether it fits.

        The forward is `rooflab llm`'s prefill at --seq with the lm_head and the loss on
        every position; each linear's backward is two matmuls of its shape (dX, dW),
        flash attention's FlashAttention-2's (2.5x its FLOP), the optimizer a memory-bound
        pass over every parameter. Each kernel at max(FLOP / peak, bytes / bandwidth),
        summed (`rooflab docs train`). MFU uses PaLM's model FLOPs, 6 N + 12 L H Q T per token.

          rooflab train tinyllama-1.1b --on H100 --batch 8 --seq 2048
          rooflab train llama-3-8b --on H100 --batch 1 --seq 8192 --recompute full
          rooflab train llama-3-8b --on H100 --seq 8192 --loss fused --clip-grad
          rooflab train tinyllama-1.1b --on H100 --batch 1 --seq 2048 --accumulate 32
          rooflab train gpt2 --on A100 --batch 16 --seq 1024 --step-ms 310
          rooflab train path/to/config.json --on H200 --optimizer sgd --json
          rooflab train path/to/config.json --on cpu.json --dtype fp32 --attn naive
          rooflab train llama-2-7b --on H100 --batch 4 --seq 4096 -o step.json
          rooflab train llama-2-7b --on H100 --dp 8 --zero 1 --grad-dtype fp32
          rooflab train llama-2-7b --on H100 --dp 16 --link-from cluster.json
          rooflab train llama-2-7b --on H100 --tp 8 --seq 4096 --sequence-parallel
          rooflab report step.json
        """
        from ..workloads.llm.config_names import load_config
        from .common import check_output

        cfg = load_config(config)
        if on is None:
            raise InputError("--on is required: a catalog device (rooflab specs list) or a "
                             "profile JSON (rooflab probe -o FILE.json)")
        if step_ms is not None and (not step_ms > 0 or math.isinf(step_ms)):
            raise InputError(f"--step-ms must be a positive, finite time in milliseconds "
                             f"(e.g. 250); got {step_ms:g}")
        if step_ms is not None and step_ms > MAX_STEP_MS:
            # past a day a step is a typo (1e30), not a measurement (s36 N)
            raise InputError(f"--step-ms {step_ms:g} is past the range rooflab takes, up to "
                             f"a day ({MAX_STEP_MS:,.0f} ms): give one optimizer step's "
                             f"measured time in milliseconds, e.g. --step-ms 250")
        check_output(output, (".json", ".csv", ".png", ".svg"),
                     inputs=[config, on, link_from])
        from .train_tp_words import tp_link_options

        _check_dp_options(_dp_ranks(on, dp, tp), link_bw, overlap, link_from,
                          hop_latency_us, tp)
        check_bucket_mb(bucket_mb, _dp_ranks(on, dp, tp), zero)
        tp_link = tp_link_options(tp, tp_link_bw, link_latency, hop_latency_us)
        seq = _seq(seq, cfg)
        from ..workloads.llm.size_limits import check_seq

        check_seq(seq)     # an absurd --seq is refused before the context warning
        _check_positions(cfg, seq)
        run(cfg, on, dict(batch=batch, seq=seq, attn=attn, recompute=recompute,
                          optimizer=optimizer, accumulate=accumulate,
                          attention_flops=attention_flops, dp=dp, zero=zero, loss=loss,
                          clip_grad=clip_grad, grad_dtype=_grad_dtype(grad_dtype),
                          tp=tp, sequence_parallel=sequence_parallel),
            dtype=dtype, step_ms=step_ms, memory=memory, json_out=json_out, output=output,
            overlap=overlap is not False, link_bw=link_bw,
            link=dict(link_from=link_from, hop_s=hop_latency_s(hop_latency_us)),
            tp_link=tp_link, bucket_mb=bucket_mb)


def _grad_dtype(given: str | None) -> str | None:
    """--grad-dtype as its canonical name (`rooflab scale`'s parsing), None when not
    given: the gradients then are at --dtype's storage width."""
    from .comm_options import grad_dtype

    return None if given is None else grad_dtype(given, "bf16")


def _dp_ranks(on: str | None, dp: int, tp: int) -> int:
    """The data-parallel ranks --dp gives on --on (train_dies.per_rank: an MI250X's --dp 1
    is its 2 dies, a ring of 2); dp where --on is no package of several dies."""
    from ..hardware.resolve import load_roof
    from ..workloads.llm.train_dies import per_rank

    return per_rank(load_roof(on), dp, tp)[2] if on else dp


def _check_dp_options(dp: int, link_bw: str | None, overlap: bool | None,
                      link_from: str | None = None, hop_us: float | None = None,
                      tp: int = 1) -> None:
    """--link-bw, --link-from, --hop-latency-us and --overlap/--no-overlap time the
    collectives of --dp N (`dp`: its ranks, train_dies.per_rank): without N > 1 there are
    none, so they are refused (as `rooflab llm` refuses --link-from and --pp-link-bw
    without --tp/--pp), not silently ignored; --link-bw and --link-from are one link,
    given once (as `rooflab scale`). Under --tp N > 1, --link-from and --hop-latency-us
    also time its collectives. --grad-dtype is no link option: the gradients are held at
    it on any step (the memory line), reduced at it where they are reduced."""
    from .comm_options import check_link_from

    check_link_from(link_from, link_bw)
    tp_too = isinstance(tp, int) and tp > 1      # its link takes these two as well
    given = [name for name, v in (("--link-bw", link_bw),
                                  ("--link-from", None if tp_too else link_from),
                                  ("--hop-latency-us", None if tp_too else hop_us),
                                  ("--overlap" if overlap else "--no-overlap", overlap))
             if v is not None]
    if given and isinstance(dp, int) and dp == 1:
        raise InputError(f"{', '.join(given)}: only with data parallelism (the gradients' "
                         f"collectives run on the link); add --dp N (2 or more devices) or "
                         f"drop {given[0]}")


def _seq(seq: int | None, cfg) -> int:
    if seq is not None:
        return seq
    return min(2048, cfg.max_positions) if cfg.max_positions else 2048


def _check_positions(cfg, seq: int) -> None:
    """A sequence past a learned position table (GPT-2's wpe: 1024 rows) cannot be trained
    without resizing it (the lookup indexes past the table): an error. RoPE has no table:
    past max_position_embeddings is context extension, `rooflab llm`'s warning (stderr)."""
    if not cfg.max_positions or seq <= cfg.max_positions:
        return
    if cfg.positions == "learned":
        raise InputError(f"--seq {seq} is longer than {cfg.name}'s learned position table "
                         f"({cfg.max_positions} rows, max_position_embeddings): the step "
                         f"cannot run without resizing it; give --seq {cfg.max_positions} "
                         f"or less, or a config with a larger max_position_embeddings")
    from ..workloads.llm.analysis import check_context
    from .common import warn

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # said once, on stderr, below
        msg = check_context(cfg, seq)
    warn(f"{msg} (RoPE: training past it is context extension)")


def run(cfg, on: str, options: dict, *, dtype: str | None, step_ms: float | None,
        memory: str | None, json_out: bool, output: str | None, overlap: bool = True,
        link_bw: str | None = None, link: dict | None = None,
        tp_link: dict | None = None, bucket_mb: float | None = None) -> None:
    """`link`: --link-from and --hop-latency-us (in seconds) of the --dp ring, as
    dp_ring takes them; `tp_link`: --tp-link-bw (bytes/s) and the hop latency of the --tp
    group's link (train_tp_words.tp_link_options)."""
    from ..hardware.resolve import load_roof
    from ..units import si_apart
    from ..workloads.llm.train import run_train
    from ..workloads.llm.train_memory import train_memory
    from .common import console, emit_json, warn, wrote
    from .options import say_name_note_now
    from .train_output import write_output
    from .train_ranks import die_words, rank_memory, rank_setup
    from .train_render import (
        below_floor_words,
        kernel_table,
        optimizer_note,
        summary_lines,
        train_dict,
    )
    from .train_tp_words import on_tp

    package = load_roof(on)
    say_name_note_now(on)    # which device a family name chose, before the tables
    roof, setup, picked = rank_setup(cfg, package, options, dtype)
    mem_bytes, host_notes = rank_memory(on, package, memory, setup.dies)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # llm's context warnings: said once, above
        r = run_train(cfg, roof, setup)
    r, chosen = on_tp(r, on, package, link, tp_link)
    r, ring = _on_ring(r, on, link_bw, link, overlap, chosen, bucket_mb)
    mem = train_memory(cfg, setup, mem_bytes)
    notes = (tuple(picked) + r.notes + host_notes + _notes(cfg, setup, r.dp) + optimizer_note(r)
             + die_words(package, setup) + _link_notes(ring, chosen))
    if step_ms is not None and step_ms / 1e3 < r.floor_s:
        warn(below_floor_words(r, step_ms / 1e3))
    largest = _largest(cfg, setup, mem_bytes)
    data = train_dict(r, mem, step_ms, notes, largest)
    _add_provenance(data, ring, chosen)
    if output:
        write_output(output, data, r)
    if json_out:
        emit_json(data)
    else:
        out = console()
        out.width = max(out.width, 120)
        out.print(kernel_table(r))
        for line in summary_lines(r, mem, step_ms, largest):
            out.print(line, soft_wrap=True, markup=False)
        for line in notes:
            out.print(f"note: {line}", soft_wrap=True, markup=False)
    if mem.fits is False:    # as many digits as tell the two apart, as llm and choose
        need, has = si_apart(mem.total, mem.device_bytes, "B")
        warn(f"the step does not fit: it needs {need}, the device has {has}")
    if output:
        wrote(output)


def _link_notes(ring, chosen) -> tuple[str, ...]:
    """The notes of the --dp ring's link and of the --tp group's."""
    return (ring.notes if ring else ()) + (chosen.notes if chosen else ())


def _add_provenance(data: dict, ring, chosen) -> None:
    """Where the links came from, as scale --json's links: train.dp.link, train.tp.link."""
    if ring is not None:
        data["train"]["dp"]["link"].update(ring.provenance())
    if chosen is not None:
        data["train"]["tp"]["link"].update(chosen.provenance())


def _on_ring(r, on: str, link_bw: str | None, link: dict | None, overlap: bool,
             chosen=None, bucket_mb: float | None = None):
    """Under --dp N, the collectives on the ring link (workloads/llm/train_dp.py): (the
    result with them, the ring with its provenance and notes: dp_ring); else (r, None).
    Under --tp N the ring's link is chosen for all dp x tp devices (a data-parallel ring
    leaves the node once they do), its collectives over --dp of them; named apart
    from the --tp group's link (`chosen`) where both are of one kind (named_apart)."""
    if r.setup.dp < 2:
        return r, None
    from dataclasses import replace

    from ..workloads.llm.train_dp import own_link, with_dp
    from .train_dp_words import named_apart, train_ring

    st = r.setup     # the links are chosen per package (train_dies): --dp's and --tp's
    ring = named_apart(train_ring(on, st.dp_devices, st.tp_devices, link_bw,
                                  **(link or {})), chosen.link if chosen else None)
    # its own ceiling where the roof's of its level is another bandwidth (a cluster
    # profile's send/recv loopback; own_link)
    ring = replace(ring, link=own_link((r.timing.analysis.roof,), ring.link))
    return with_dp(r, ring.link, overlap, bucket_mb), ring


def _largest(cfg, setup, mem_bytes: float | None) -> tuple[int, int] | None:
    """The largest --batch that fits, as the step runs and under --recompute full (None
    where the device memory is unknown)."""
    from dataclasses import replace

    from ..workloads.llm.train_memory import largest_batch

    if mem_bytes is None:
        return None
    return (largest_batch(cfg, setup, mem_bytes),
            largest_batch(cfg, replace(setup, recompute="full"), mem_bytes))


# --dtype fp32 / tf32: what runs where (the optimizer's words say the state)
PRECISION_WORDS = {
    "fp32": ("--dtype fp32: no mixed precision: weights (their own master "
             "copy), gradients and activations at 4 B; the matmuls at IEEE fp32 "
             "(TF32 off), on the roof's fp32 tensor ceiling where it has one (MI300X's "
             "matrix cores), else fp32 vector, which is also MFU's peak; --dtype tf32 puts "
             "them on TF32 tensor cores"),
    "tf32": ("--dtype tf32: fp32 storage as --dtype fp32 (4 B weights, gradients, "
             "activations), the matmuls (linears and attention, forward and backward) on "
             "the TF32 tensor ceiling (torch.backends.cuda.matmul.allow_tf32, "
             "set_float32_matmul_precision('high')), also MFU's peak; norms, element-wise "
             "kernels, the loss and the optimizer at fp32"),
}


# tokens per optimizer step past which the step gets a note (size_limits: 1e13 refused)
UNUSUAL_STEP_TOKENS = 10**8


def _notes(cfg, setup, dp=None) -> tuple[str, ...]:
    from ..workloads.llm.train_clip import grad_pass_words
    from ..workloads.llm.train_loss import chunk_words

    words = setup.optimizer_spec()[3]
    notes = [words + " (ZeRO, Rajbhandari et al. 2020, sec. 3.1)" if setup.mixed else words,
             "one device, no data parallelism: no gradient all-reduce counted (--dp N "
             "times this step's all-reduce or ZeRO collectives over N devices; --tp N "
             "splits the model over N devices)"]
    if setup.dp > 1:
        from .train_dp_words import dp_notes

        notes[1:2] = dp_notes(setup, dp)
    elif setup.tp > 1:
        notes[1] = ("no data parallelism: no gradient all-reduce counted (--dp N times "
                    "this step's all-reduce or ZeRO collectives over N model replicas)")
    if setup.tp > 1:
        from .train_tp_words import tp_notes

        notes[2:2] = tp_notes(setup)
    if setup.dp < 2:     # with --dp its notes say it (dp_notes)
        from .train_dp_words import grad_words

        notes += grad_words(setup)
    if not setup.mixed:
        notes.append(PRECISION_WORDS[setup.dtype])
    # clipping, fp16's unscale, zeroing (workloads/llm/train_clip); --loss fused's chunks
    notes.append(grad_pass_words(setup.dtype, setup.clip_grad))
    if setup.loss == "fused":
        notes.append(chunk_words(setup.tokens, cfg.vocab, cfg.hidden, setup.width))
    if setup.recompute == "selective" and setup.attn == "flash":
        notes.append("--recompute selective under flash attention adds no kernel: "
                     "FlashAttention-2's backward already recomputes the scores (the "
                     "selective recompute of Korthikanti et al. 2022)")
    if setup.accumulate > 1:
        notes.append(f"--accumulate {setup.accumulate}: forward and backward "
                     f"{setup.accumulate} times, the optimizer once; each micro-batch's dW "
                     f"adds into the gradient buffer ({_accumulate_read(setup)}); memory "
                     f"is the micro-batch's")
    if setup.dp * setup.step_tokens > UNUSUAL_STEP_TOKENS:
        notes.append(f"{setup.dp * setup.step_tokens:.3g} tokens per optimizer step: past "
                     f"the global batches models are trained at (4M-60M tokens; Llama 3 "
                     f"405B's 16M): the floors hold, the training at that batch is untried")
    if getattr(cfg, "quantization", None) is not None:
        notes.append(f"the config's quantization_config is not used: training counts "
                     f"the weights at --dtype {setup.dtype}")
    return tuple(notes)


def _accumulate_read(setup) -> str:
    """Whether the dW's read of the gradient it adds into is counted: under a gradient
    wider than the weights (Megatron-LM's fp32 main_grad) the dW GEMM accumulates into it
    and its read is counted every micro-batch (train_ops.dw_passes); else in micro-batches
    2 to N, which add into it (train_ops.accumulated)."""
    if setup.grad_width > setup.width:
        return "the fp32 main_grad read and written by every micro-batch's dW GEMM, counted"
    n = setup.accumulate
    return (f"read in {n - 1} of the {n} micro-batches by the dW GEMM and norm that add "
            f"into it, counted")

"""The sizes a training step (TrainSetup) and an inference request (analysis.Request) take:
each count is an integer >= 1 (their own checks), and together they stay in a range where
the numbers mean something (s36 J).

`rooflab train llama-2-7b --on H100 --dp 999999999999999999999999999999` printed a step of
1e30 devices and 1.3e34 tokens/s, exit 0; `--accumulate 1e30` was refused as "kernel
'embedding': bytes[DRAM] 3.36e37 ... is the unit right?", and `--seq 1e30` as "tokens is
1e+30", neither naming the option. The bounds, each far past what is built or trained:
  * devices (--dp x --tp, in packages as given): at most 2**20 = 1,048,576; Llama 3 405B
    trained on up to 16,384 H100s (Llama Team 2024, The Llama 3 Herd of Models, Table 4).
  * --seq: at most 2**24 = 16,777,216 tokens, past the longest released context windows
    (Llama 4 Scout's 10M tokens, Meta 2025); a step's attention then stays inside the
    FLOP a kernel file takes.
  * tokens per optimizer step (--dp x --batch x --seq x --accumulate): at most 1e13, less
    than a whole pretraining corpus (Llama 3 405B's: 15.6T tokens) in one step;
    global batches in practice are 4M-60M tokens (Llama 3 405B's grew 4M -> 8M -> 16M;
    DeepSeek-V3's 15,360 sequences of 4,096 are 63M).
  * `rooflab llm`: --prompt, --context and --generate at most 2**24 tokens each (as --seq),
    --batch at most 2**20 = 1,048,576 sequences on a device (vLLM's default max_num_seqs
    is 256, 1024 on a GPU of 70 GiB or more other than the A100: vllm/engine/arg_utils.py,
    EngineArgs.get_batch_defaults). `--batch 1e30` said "tokens is 1e+30", `--prompt 1e30`
    "kernel 'attention': flop[fp16] 5.2e+35 is outside the range ... is the unit right?".
"""

from __future__ import annotations

from ...errors import InputError

MAX_DEVICES = 2**20
MAX_SEQ = 2**24
MAX_STEP_TOKENS = 10**13
MAX_BATCH = 2**20


def check_sizes(setup) -> None:
    """InputError naming the option, its value, the range and why, for a setup past the
    bounds above; `dies` (ranks per package) checked here too."""
    dies = setup.dies
    if not isinstance(dies, int) or isinstance(dies, bool) or dies < 1:
        raise InputError(f"dies must be an integer >= 1 (ranks per package); got {dies!r}")
    devices = setup.dp_devices * setup.tp_devices
    if devices > MAX_DEVICES:
        which = " or ".join(name for name, n in (("--dp", setup.dp_devices),
                                                 ("--tp", setup.tp_devices)) if n > 1)
        raise InputError(f"--dp {setup.dp_devices} x --tp {setup.tp_devices} is "
                         f"{_count(devices)} devices; rooflab takes 1 to {MAX_DEVICES:,} "
                         f"(2**20; Llama 3 405B trained on 16,384 GPUs): give a smaller "
                         f"{which}")
    check_seq(setup.seq)
    # dp counts the data-parallel ranks, each running --batch (a package of two dies
    # under --dp 4 and no --tp: 8 of them, train_dies.rank_counts)
    tokens = setup.dp * setup.step_tokens
    if tokens > MAX_STEP_TOKENS:
        ranks = (f"--dp {setup.dp}" if setup.dp == setup.dp_devices else
                 f"--dp {setup.dp_devices} ({setup.dp} ranks)")
        raise InputError(f"{ranks} x --batch {setup.batch} x --seq "
                         f"{setup.seq} x --accumulate {setup.accumulate} is {tokens:.3g} "
                         f"tokens per optimizer step; rooflab takes up to {MAX_STEP_TOKENS:g} "
                         f"(more than a whole pretraining corpus, Llama 3's 15.6T tokens, "
                         f"in one step; global batches are 4M-60M tokens): give a smaller "
                         f"--batch, --accumulate or --dp")


def check_seq(seq: int) -> None:
    """--seq inside 1 to MAX_SEQ (an integer >= 1 is TrainSetup's check); the CLI asks
    before its warning of a --seq past the model's context, so an absurd one is one line."""
    if isinstance(seq, int):
        _check_length("--seq", seq, "tokens per sequence")


def check_request(batches, lengths: dict[str, tuple[int, ...]]) -> None:
    """`rooflab llm`'s --batch values and token lengths (option name -> its values, each
    an integer >= 1 already) inside MAX_BATCH and MAX_SEQ."""
    for b in batches:
        if b > MAX_BATCH:
            raise InputError(f"--batch {b} sequences on a device is past the range rooflab "
                             f"takes, 1 to {MAX_BATCH:,} (2**20; vLLM's default "
                             f"max_num_seqs is 256, 1024 on an H100 or MI300X): give a "
                             f"smaller --batch")
    for option, values in lengths.items():
        for v in values:
            _check_length(option, v, "tokens")


def _check_length(option: str, v: int, what: str) -> None:
    """A token length past MAX_SEQ: the InputError naming `option` (train's --seq, llm's
    --prompt/--context/--generate)."""
    if v > MAX_SEQ:
        raise InputError(f"{option} {v} {what} is past the range rooflab takes, 1 to "
                         f"{MAX_SEQ:,} (2**24; the longest released context windows are "
                         f"10M tokens): give a shorter {option}")


def _count(n: int) -> str:
    """4,194,304 as digits; past a billion as 1e+30 (thirty digits say less)."""
    return f"{n:,}" if n < 10**9 else f"{n:.3g}"

"""The checks of `rooflab llm`'s options (split from cli/llm.py): the comma lists of --batch,
--context and --prompt, --phase and --whatif, the measured times, --on and --compare, and
the --tp/--pp link options, each refused with how to fix it before any work is done."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    # imported where used: the model, the workloads and their numpy cost `llm --help`
    # 0.3 s of CPU and every other verb nothing (cli/app.py loads a verb's module only)
    from ..workloads.llm.links import GivenLatency

PHASES = ("decode", "prefill", "both")


def _ints(text: str, option: str, example: str) -> tuple[int, ...]:
    """A comma-separated list of integers (one value: a tuple of one)."""
    out = []
    for part in str(text).replace(" ", "").split(","):
        try:
            out.append(int(part))
        except ValueError:
            raise InputError(f"{option} takes integers separated by commas, e.g. {example}; "
                             f"got '{text}'") from None
    return tuple(out)


def _batches(text: str) -> tuple[int, ...]:
    from ..workloads.llm.sweep import check_batches

    return check_batches(_ints(text, "--batch", "1,4,16"))


def _lengths(text: str | None, option: str, example: str) -> tuple[int, ...]:
    """--context / --prompt: one length, or several for a sweep (checked >= 1 here, so
    that `--context 0,512` says which option)."""
    if text is None:
        return ()
    from ..workloads.llm.sweep import sweep_lengths

    values = _ints(text, option, example)
    sweep_lengths(values, option)
    return values


def _check_modes(phase: str, whatif: bool, tp: int, pp: int) -> None:
    if phase not in PHASES:
        raise InputError(f"--phase must be one of {', '.join(PHASES)}; got '{phase}'")
    if whatif and (tp > 1 or pp > 1):
        raise InputError("--whatif compares settings on one device; drop --tp/--pp or "
                         "--whatif")


def _check_measured(**times: float | None) -> None:
    """--tpot-ms and --ttft-ms: positive and finite (NaN and inf refused)."""
    for name, ms in times.items():
        if ms is not None and (not ms > 0 or math.isinf(ms)):
            raise InputError(f"--{name}-ms must be a positive, finite time in milliseconds "
                             f"(e.g. {15 if name == 'tpot' else 40}); got {ms:g}")


def _compared_names(compare: str) -> list[str]:
    names = [x.strip() for x in compare.split(",") if x.strip()]
    if not names:   # `--compare ,` would table the --on device against nothing
        raise InputError(f"--compare takes device names separated by commas, e.g. "
                         f"--compare H200,MI300X; got '{compare}'")
    return names


def _on_or_first_compared(on: str | None, compare: str | None
                          ) -> tuple[str, str | None, str | None]:
    """--on, --compare and a note. Without --on, --compare's first device is --on: the
    tables, the summary and the memory line need one roof, and the compared devices are
    roofs already (--compare T4,A100,H100 alone was refused); the rest are compared with
    it, and the note says which device the tables are on."""
    if on is not None:
        return on, compare, None
    if not compare:
        raise InputError("--on is required: a catalog device (rooflab specs list) or a "
                         "profile JSON (rooflab probe -o FILE.json); or give --compare "
                         "HW,... and the tables use its first device")
    first, *rest = _compared_names(compare)
    return first, ",".join(rest) or None, (
        f"no --on: the tables, floors and memory line are on {first}, the first device "
        f"of --compare")


def _given_latency(hop_us: float | None, allreduce_us: float | None, tp: int, pp: int
                   ) -> GivenLatency | None:
    """--hop-latency-us (per ring hop) or the older --link-latency (per all-reduce under
    --tp, per send under --pp alone), checked, in seconds."""
    from ..workloads.llm.links import GivenLatency
    from .comm_options import check_hop_us

    if hop_us is not None and allreduce_us is not None:
        raise InputError("give one of --hop-latency-us (per ring hop) and --link-latency (per "
                         "all-reduce); --link-latency US is --hop-latency-us US / 2(tp-1)")
    option, us = (("--hop-latency-us", hop_us) if hop_us is not None
                  else ("--link-latency", allreduce_us))
    if us is None:
        return None
    if not (us >= 0 and math.isfinite(us)):
        per = "per ring hop" if option == "--hop-latency-us" else "per all-reduce"
        raise InputError(f"{option} must be >= 0 and finite, in microseconds {per} (e.g. 10); "
                         f"got {us:g}")
    check_hop_us(us, option, "per ring hop" if option == "--hop-latency-us" else "per all-reduce")
    if us and tp == 1 and pp == 1:
        raise InputError(f"{option} is the latency of --tp's all-reduces (or of --pp's "
                         f"sends); add --tp N or --pp N (2 or more) or drop it")
    return GivenLatency(us / 1e6, option)


def _check_link_from(link_from: str | None, link_bw: str | None, tp: int, pp: int) -> None:
    if link_from and link_bw:
        raise InputError("give one of --link-bw and --link-from (--pp-link-bw and "
                         "--pp-link-latency may still replace the stage link's figures)")
    if link_from and tp == 1 and pp == 1:
        raise InputError("--link-from gives the links of --tp's all-reduces and --pp's "
                         "sends; add --tp N or --pp N (2 or more) or drop it")
    if link_bw is not None and tp == 1 and pp == 1:
        # without a link the rate changed nothing and was dropped without a word, while
        # the latency options were refused (review s28 R1 #1)
        raise InputError("--link-bw is the bandwidth of --tp's all-reduces (or of --pp's "
                         "sends); add --tp N or --pp N (2 or more) or drop it")


def _check_pp(pp: int, micro_batches: int | None, pp_link_bw: str | None,
              pp_link_latency: float | None) -> None:
    """--pp's options, refused with how to fix them before any work is done."""
    if pp < 1:
        raise InputError(f"--pp must be >= 1 (pipeline stages; 1: no pipeline); got {pp}")
    extras = [name for name, v in (("--micro-batches", micro_batches),
                                   ("--pp-link-bw", pp_link_bw),
                                   ("--pp-link-latency", pp_link_latency)) if v is not None]
    if extras and pp == 1:
        raise InputError(f"{', '.join(extras)}: only with a pipeline; add --pp N (2 or "
                         f"more stages) or drop {extras[0]}")
    if micro_batches is not None and micro_batches < 1:
        raise InputError(f"--micro-batches must be >= 1 (micro-batches of --batch in flight); "
                         f"got {micro_batches}")
    if pp_link_latency is not None and not (pp_link_latency >= 0
                                            and math.isfinite(pp_link_latency)):
        raise InputError(f"--pp-link-latency must be >= 0 and finite, in microseconds per "
                         f"send (e.g. 5); got {pp_link_latency:g}")
    from .comm_options import check_hop_us

    check_hop_us(pp_link_latency, "--pp-link-latency", "per send")


def one_spelling(decode_tokens: int, parallel_decode: int | None) -> int:
    """--decode-tokens N, or its other spelling --parallel-decode N (LLM-Viewer's
    n_parallel_decode), given once: two different counts are refused."""
    if parallel_decode is None:
        return decode_tokens
    if decode_tokens not in (1, parallel_decode):
        raise InputError(f"--decode-tokens {decode_tokens} and --parallel-decode "
                         f"{parallel_decode} are one option spelt two ways; give one")
    return parallel_decode

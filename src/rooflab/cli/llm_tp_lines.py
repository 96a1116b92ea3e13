"""What `rooflab llm --tp` adds to the text and the sweep: the link's share of a step (the
per-layer all-reduces, the vocab-parallel embedding's all-reduce, the logits gather),
split out of cli/llm_render.py, whose text uses tp_line, tp_link_words and tp_sweep_line
(the --json sweep, llm_output, takes tp_sweep_rows)."""

from __future__ import annotations

from ..units import fmt_seconds, per_s, si
from ..workloads.llm.parallel import HOP_SENSITIVITY_S
from .llm_words import comm_width, rows_words


def gather_words(seconds: float) -> str:
    """' + logits gather 128 us' (the vocab-parallel lm_head's), or nothing when 0."""
    return f" + logits gather {fmt_seconds(seconds)}" if seconds else ""


def embedding_words(seconds: float) -> str:
    """' + embedding all-reduce 12 us' (VocabParallelEmbedding's), or nothing when 0."""
    return f" + embedding all-reduce {fmt_seconds(seconds)}" if seconds else ""


def tp_link_words(tpr, prefill: bool = False) -> str:
    """'all-reduces 1.76 ms + embedding all-reduce 11 us + logits gather 13 us': every
    term the step (or the prefill) pays on the link, as tpot_s (prefill_link_s) adds
    them."""
    if prefill:
        return (f"all-reduces {fmt_seconds(tpr.prefill_comm_s)}"
                f"{embedding_words(tpr.prefill_embedding_s)}"
                f"{gather_words(tpr.prefill_gather_s)}")
    return (f"all-reduces {fmt_seconds(tpr.comm_s)}{embedding_words(tpr.embedding_s)}"
            f"{gather_words(tpr.gather_s)}")


def tp_sweep_rows(sw, tpr, tabled_batch: int) -> list[dict[str, float]]:
    """Each sweep batch's TPOT with --tp's all-reduces: the sweep table times one device's
    kernels, and the all-reduce payload grows with the batch (at --tp 8 on NVLink,
    llama-3-70b batch 256 adds 2.6 ms to a 9 ms step)."""
    rows = []
    for p in sw.points:
        comm = tpr.comm_s_at(p.batch, tabled_batch)
        embed = tpr.embedding_s_at(p.batch, tabled_batch)
        gather = tpr.gather_s_at(p.batch, tabled_batch)
        tpot = p.tpot_s + comm + embed + gather
        rows.append({"batch": p.batch, "allreduce_s": comm,
                     "embedding_allreduce_s": embed, "logits_gather_s": gather,
                     "tpot_s": tpot, "tokens_per_s": p.batch / tpot})
    return rows


def tp_sweep_line(sw, tpr, tabled_batch: int) -> str:
    parts = [f"b={row['batch']} {fmt_seconds(row['tpot_s'])} ({per_s(row['tokens_per_s'])} "
             f"tokens/s)" for row in tp_sweep_rows(sw, tpr, tabled_batch)]
    return (f"the sweep's TPOT floors are one device's kernels; with --tp {tpr.tp}'s "
            f"{tpr.allreduces} all-reduces per step"
            + (", its embedding all-reduce" if tpr.embedding_bytes else "")
            + (" and its logits gather" if tpr.gather_bytes else "")
            + " (their payload grows with the batch): "
            + ", ".join(parts))


def tp_line(tpr, settings) -> str:
    """'tensor parallel x8: compute 5.2 ms + 160 all-reduces of 16.4 kB ... + the
    embedding's all-reduce of 16.4 kB + a logits gather of 257 kB: communication 10.7 us
    -> TPOT floor 5.21 ms'; communication is tpr.link_s, the whole account."""
    return (f"tensor parallel x{tpr.tp}: compute {fmt_seconds(tpr.compute_s)} + "
            f"{tpr.allreduces} all-reduces of {si(tpr.allreduce_bytes, 'B')}"
            f"{comm_width(settings)} on "
            f"{si(tpr.link_bytes_per_s, 'B/s')} ({tpr.link_source})"
            + (f" + {fmt_seconds(tpr.latency_s, 4)} latency each" if tpr.latency_s else "")
            + (f" + the embedding's all-reduce of {si(tpr.embedding_bytes, 'B')} "
               f"(vocab-parallel, {fmt_seconds(tpr.embedding_s)})"
               if tpr.embedding_s else "")
            + (f" + a logits gather of {si(tpr.gather_bytes, 'B')} (batch x "
               f"{rows_words(settings)}vocab, "
               f"{fmt_seconds(tpr.gather_s)})" if tpr.gather_s else "")
            + f": communication {fmt_seconds(tpr.link_s)} -> TPOT floor "
            f"{fmt_seconds(tpr.tpot_s)}{latency_weight_words(tpr)}")


def latency_weight_words(tpr) -> str:
    """' (bandwidth only; at 1 us per hop: +2.26 ms -> 9.1 ms, --hop-latency-us)' when the
    link counts no hop latency (catalog and given links): at decode sizes the latency can
    outweigh the bandwidth term, so the floor says what it leaves out (review r3 F2)."""
    extra = tpr.hop_latency_step_s()
    if tpr.link is None or tpr.link.hop_latency_s or not extra:
        return ""
    return (f" (bandwidth only; at {HOP_SENSITIVITY_S * 1e6:g} us per hop: "
            f"+{fmt_seconds(extra)} -> {fmt_seconds(tpr.tpot_s + extra)}, "
            f"--hop-latency-us)")

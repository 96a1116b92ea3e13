"""`rooflab choose` on an `rooflab llm --tp N --json` document: each device's own link time
for the step's all-reduces and logits gather, by the term `rooflab llm --on DEVICE --tp N`
adds (workloads.llm.parallel.TPResult.link_s on model.comm_link.device_ring_link), so a TP
ranking does not compare shards alone (review r3 F6). On a prefill document (its kernels are
the prefill: choose_tokens.StepScope) the term is the prefill's, TPResult.prefill_link_s:
its all-reduces carry batch x prompt hidden states, not the decode step's batch (s21 d1:
Llama-3-70B --tp 8 batch 4 prompt 2048 on H200 added 43 us, the decode step's link, where
`rooflab llm` adds 84.0 ms: all-reduces 83.5 ms + embedding 522 us + gather 2 us)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _prompt(scope) -> int:
    """The prompt tokens per sequence of a prefill step (StepScope.context), 0 for a
    decode step or kernels that are no llm step (scope None)."""
    return int(scope.context) if scope is not None and scope.phase == "prefill" else 0


def tp_link_s(parallel: Mapping[str, Any] | None, device_name: str, scope=None
              ) -> tuple[float, str] | None:
    """(seconds, link words) the step pays on `device_name`'s catalog link for the llm
    document's `parallel` block (bandwidth only, as `rooflab llm` on a catalog link): a
    decode step's link_s, or with a prefill `scope` the prefill's prefill_link_s; None for
    a device without a catalog link (a profile file, a CPU), or a document without the
    all-reduce figures."""
    from ..errors import RooflabError
    from ..hardware.catalog import lookup
    from ..model.comm_link import device_ring_link
    from ..units import si
    from ..workloads.llm.parallel import TPResult

    parallel = parallel or {}
    tp = int(parallel.get("tp") or 1)
    if tp <= 1 or not parallel.get("allreduce_bytes") or not parallel.get("allreduces_per_step"):
        return None
    try:
        dev = lookup(device_name)
        # choose ranks a package of several dies as one die (model/dies.py): --tp counts
        # dies there, joined as the dies are (xgmi_ring_link)
        link = device_ring_link(dev, tp, dies=dev.software_devices > 1)
    except RooflabError:
        return None
    tpr = TPResult(tp, 0.0, float(parallel["allreduce_bytes"]),
                   int(parallel["allreduces_per_step"]), link,
                   prompt=_prompt(scope),
                   gather_bytes=float(parallel.get("logits_gather_bytes") or 0.0),
                   embedding_bytes=float(parallel.get("embedding_allreduce_bytes") or 0.0),
                   query_tokens=int(parallel.get("decode_tokens") or 1))
    return (tpr.prefill_link_s if tpr.prompt else tpr.link_s), si(link.bus_bytes_per_s, "B/s")


def tp_link_times(parallel: Mapping[str, Any] | None, names, scope=None) -> dict[str, float]:
    """Each named device's tp_link_s, for rank() to add to the time it ranks on (review
    W4); a device without a catalog link is left out (ranked on its shard alone)."""
    got = {n: tp_link_s(parallel, n, scope) for n in names}
    return {n: g[0] for n, g in got.items() if g is not None}


def tp_link_fields(parallel: Mapping[str, Any] | None, choice, scope=None
                   ) -> dict[str, float | None]:
    """--json's per-device link terms: tp_link_s (None without a catalog link) and the
    step's floor with it, work floor + tp_link_s: tp_step_floor_s on every document, and
    under its old name tp_tpot_floor_s on a decode step only (the contract since review
    r3 F6). A prefill's floor is its TTFT floor, not a TPOT one (s21 d1), so a script
    reads tp_step_floor_s on both and an old decode script finds its key as before."""
    got = tp_link_s(parallel, choice.name, scope)
    floor = got and choice.seconds + got[0]
    out = {"tp_link_s": got and got[0], "tp_step_floor_s": floor}
    if not _prompt(scope):
        out["tp_tpot_floor_s"] = floor
    return out


def tp_link_lines(parallel: Mapping[str, Any] | None, choices,
                  floor: str = "TPOT floor", scope=None) -> list[str]:
    """Each ranked device's link term, in the table's order (which includes it: rank's
    link_s): the work floor + link = the `floor` `rooflab llm --on DEVICE --tp N` prints
    (bandwidth only: a decode step's TPOT floor, a prefill's TTFT floor), and the time
    with launches + link."""
    from ..units import fmt_seconds

    rows, none = [], []
    for c in choices:
        got = tp_link_s(parallel, c.name, scope)
        if got is None:
            none.append(c.name)
            continue
        link_s, words = got
        rows.append((c.ranked_s, f"  {c.name}{_die_unit(c.name, parallel)}: + "
                     f"{fmt_seconds(link_s)} on {words}: "
                     f"{floor} {fmt_seconds(c.seconds + link_s)}, "
                     f"{fmt_seconds(c.step_s + link_s)} with launches"))
    if not rows:
        return []
    from ..model.document_parts import LINK_TERMS, OLDER_FILE

    tp = parallel.get("tp") if parallel else "?"
    # an older file without the terms and without the model to count them from: the
    # per-layer all-reduces alone, said so (review s21 r1 F3)
    embedding, gather = (parallel.get(k) is not None for k in LINK_TERMS)
    terms = ("all-reduces and logits gather" if gather
             else "all-reduces" if embedding else "per-layer all-reduces")
    out = [f"with --tp {tp}'s {terms} on each device's catalog link "
           f"(as `rooflab llm --on DEVICE --tp {tp}`; bandwidth only, no hop latency), "
           f"the TP link in the table:"] + [line for _, line in rows]
    if parallel.get(OLDER_FILE):
        out.append(f"  note: {parallel[OLDER_FILE]}")
    if none:
        out.append(f"  no catalog link (give one to `rooflab llm --link-bw`): "
                   f"{', '.join(none)}: ranked on the shard alone, without a link")
    return out


def _die_unit(name: str, parallel: Mapping[str, Any] | None) -> str:
    """What --tp counts on a row of a package of several dies (MI250X): dies here, one per
    row, where `rooflab llm --on MI250X --tp` counts packages (cli/llm_words.die_note);
    "" for any other device."""
    from .choose_dies import die_count

    dies = die_count(name)
    tp = int((parallel or {}).get("tp") or 1)
    if dies <= 1 or tp <= 1:
        return ""
    on = f'"{name}"' if " " in name else name
    same = (f"`rooflab llm --on {on} --tp {tp // dies}` counts packages: the same "
            f"{tp} dies" if tp % dies == 0 else
            f"`rooflab llm --on {on} --tp N` counts packages, {dies} dies each")
    return f" (--tp {tp} counts dies here, {tp / dies:g} packages; {same})"

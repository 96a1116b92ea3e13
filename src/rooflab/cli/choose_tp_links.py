"""`rooflab choose` on an `rooflab llm --tp N --json` document: each device's own link time
for the step's all-reduces and logits gather, by the term `rooflab llm --on DEVICE --tp N`
adds (workloads.llm.parallel.TPResult.link_s on model.comm_link.device_ring_link), so a TP
ranking does not compare shards alone (review r3 F6)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def tp_link_s(parallel: Mapping[str, Any] | None, device_name: str
              ) -> tuple[float, str] | None:
    """(seconds, link words) a decode step pays on `device_name`'s catalog link for the
    llm document's `parallel` block (bandwidth only, as `rooflab llm` on a catalog link);
    None for a device without a catalog link (a profile file, a CPU), or a document
    without the all-reduce figures."""
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
        link = device_ring_link(lookup(device_name), tp)
    except RooflabError:
        return None
    tpr = TPResult(tp, 0.0, float(parallel["allreduce_bytes"]),
                   int(parallel["allreduces_per_step"]), link,
                   gather_bytes=float(parallel.get("logits_gather_bytes") or 0.0),
                   embedding_bytes=float(parallel.get("embedding_allreduce_bytes") or 0.0))
    return tpr.link_s, si(link.bus_bytes_per_s, "B/s")


def tp_link_times(parallel: Mapping[str, Any] | None, names) -> dict[str, float]:
    """Each named device's tp_link_s, for rank() to add to the time it ranks on (review
    W4); a device without a catalog link is left out (ranked on its shard alone)."""
    got = {n: tp_link_s(parallel, n) for n in names}
    return {n: g[0] for n, g in got.items() if g is not None}


def tp_link_fields(parallel: Mapping[str, Any] | None, choice) -> dict[str, float | None]:
    """--json's per-device link terms: tp_link_s (None without a catalog link) and the
    TPOT floor with it, tp_tpot_floor_s = work floor + tp_link_s."""
    got = tp_link_s(parallel, choice.name)
    return {"tp_link_s": got and got[0],
            "tp_tpot_floor_s": got and choice.seconds + got[0]}


def tp_link_lines(parallel: Mapping[str, Any] | None, choices,
                  floor: str = "TPOT floor") -> list[str]:
    """Each ranked device's link term, in the table's order (which includes it: rank's
    link_s): the work floor + link = the `floor` `rooflab llm --on DEVICE --tp N` prints
    (bandwidth only: a decode step's TPOT floor, a prefill's TTFT floor), and the time
    with launches + link."""
    from ..units import fmt_seconds

    rows, none = [], []
    for c in choices:
        got = tp_link_s(parallel, c.name)
        if got is None:
            none.append(c.name)
            continue
        link_s, words = got
        rows.append((c.ranked_s, f"  {c.name}: + {fmt_seconds(link_s)} on {words}: "
                     f"{floor} {fmt_seconds(c.seconds + link_s)}, "
                     f"{fmt_seconds(c.step_s + link_s)} with launches"))
    if not rows:
        return []
    tp = parallel.get("tp") if parallel else "?"
    out = [f"with --tp {tp}'s all-reduces and logits gather on each device's catalog link "
           f"(as `rooflab llm --on DEVICE --tp {tp}`; bandwidth only, no hop latency), "
           f"the TP link in the table:"] + [line for _, line in rows]
    if none:
        out.append(f"  no catalog link (give one to `rooflab llm --link-bw`): "
                   f"{', '.join(none)}: ranked on the shard alone, without a link")
    return out

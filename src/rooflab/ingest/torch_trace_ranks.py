"""Which rank of a distributed job a chrome trace is, and the label its ops' names get so
that several ranks' traces in one table (`rooflab torch a.json b.json`, `rooflab report`)
tell their rows apart (review r7 F4). Split from ingest/torch_trace.py.

kineto writes `distributedInfo` ({"backend", "rank", "world_size", ...}) into the trace of
a process with torch.distributed initialised (tensorboard_trace_handler names the files by
worker, not by rank).
"""

from __future__ import annotations

from collections.abc import Sequence


def rank_of(data: dict) -> int | None:
    """The trace's rank when it is one of two or more (distributedInfo.world_size > 1)."""
    info = data.get("distributedInfo")
    if not isinstance(info, dict):
        return None
    rank, world = info.get("rank"), info.get("world_size")
    ok = isinstance(rank, int) and not isinstance(rank, bool) and rank >= 0
    return rank if ok and isinstance(world, int) and world > 1 else None


def trace_labels(steps: Sequence[str], ranks: Sequence[int | None]) -> list[str | None]:
    """The label each trace's op names get ('[rank1]'), None for none. One trace: its rank,
    where it is one rank of several (report reads each trace alone, so this is what tells
    two ranks' rows apart there; the label is the same in every step of one rank, so
    `plot --trajectory` still joins a rank's steps). Several traces: their ranks when
    those differ, else their step labels (file names), as before."""
    if len(steps) == 1:
        return [f"rank{ranks[0]}" if ranks[0] is not None else None]
    if all(r is not None for r in ranks) and len(set(ranks)) == len(ranks):
        return [f"rank{r}" for r in ranks]
    return list(steps)

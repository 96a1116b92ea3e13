"""Which rank of a distributed job a chrome trace is, and the label its ops' names get so
that several ranks' traces in one table (`rooflab torch a.json b.json`, `rooflab report`)
tell their rows apart (review r7 F4), and the file labels of traces read one at a time but
given together (labelled_by_file). Split from ingest/torch_trace.py.

kineto writes `distributedInfo` ({"backend", "rank", "world_size", ...}) into the trace of
a process with torch.distributed initialised (tensorboard_trace_handler names the files by
worker, not by rank).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .kernel_names import step_labels

if TYPE_CHECKING:
    from ..model.kernel import Kernel


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


def labelled_by_file(paths: Sequence[str], per_trace: Sequence[Sequence[Kernel]]
                     ) -> list[list[Kernel]]:
    """Each trace's kernels, read alone (ingest.profile_files: a trace alone keeps its op
    names), labelled as `rooflab torch` labels several traces read together (trace_labels):
    where their ranks do not tell them apart (the same rank, or none) the op names get the
    file's step label instead of the rank ('aten::mm [...] [run_b.pt.trace]', meta
    'trace'), so `report a.json b.json` on two runs of one rank shows which file a row is
    from (s21 d1: two '[rank0]' rows, or two unlabelled ones). Distinct ranks, or one
    trace, keep their names as read."""
    ranks = [next((k.meta.get("rank") for k in ks), None) for ks in per_trace]
    if len(paths) < 2 or (all(r is not None for r in ranks) and len(set(ranks)) == len(ranks)):
        return [list(ks) for ks in per_trace]
    out = []
    for ks, rank, label in zip(per_trace, ranks, trace_labels(step_labels(paths), ranks),
                               strict=True):
        own = f" [rank{rank}]" if rank is not None else ""   # what reading alone added
        out.append([k.with_(name=f"{k.name.removesuffix(own)} [{label}]",
                            meta={**k.meta, "trace": label}) for k in ks])
    return out

"""`rooflab choose` on a `rooflab train --dp/--tp --json` file, on a candidate whose ranks
differ from the file's device's (workloads/llm/train_dies.py): an MI250X is 2 dies, each a
rank, so `train --on MI250X --dp 4` rings its all-reduce over 8 ranks, 2 x 7/8 x 13.5 GB
= 23.6 GB sent per device for llama-2-7b, while `train --on H100 --dp 4` rings it over 4,
2 x 3/4 x 13.5 GB = 20.2 GB. Choose kept the file's 23.6 GB on the H100 (52.4 ms on its
NVLink where train says 44.9 ms; session 34 G).

What choose re-derives per candidate, from the file's train.setup (--dp and --tp as given,
in packages, and the dies that made them ranks):
  * each communication row's bytes: a ring of N ranks sends (N - 1)/N of the collective's
    bytes (all-reduce twice that), so the row is scaled by (Nc - 1)/Nc / ((Nf - 1)/Nf),
    the candidate's ring Nc for the file's Nf; no row where Nc is 1 (`train --on H100`
    at --dp 1 is one device, the MI250X file's --dp 1 a ring of its 2 dies);
  * the link, per package as train picks it (the row's meta devices are --dp as given).
The kernels' FLOP and bytes and the memory need are one rank's of the file. Without ZeRO
or --tp they are every candidate's too (each rank runs --batch and holds all states);
under --zero N the optimizer's shard and the states are 1/Nf of them, not 1/Nc; under --tp
each rank holds 1/Nf of every layer, not 1/Nc: choose_train_own recomputes that
candidate's rank from the file's train.setup (s35 E), and where it cannot (a model config
it cannot read again) rank_notes says what of the row is still the file's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..model.kernel import Kernel


@dataclass(frozen=True)
class FileRanks:
    """A train file's parallel setup as given (packages) and its device's dies."""

    dp: int = 1       # --dp as given
    tp: int = 1       # --tp as given
    zero: int = 0
    dies: int = 1     # ranks per package on the file's device

    def ranks(self, dies: int) -> tuple[int, int]:
        """(data-parallel ranks, tensor-parallel ranks) on a device of `dies` dies, as
        train makes them (train_dies.rank_counts)."""
        from ..workloads.llm.train_dies import rank_counts

        return rank_counts(self.dp, self.tp, dies)

    def flags(self) -> str:
        """' --dp 4 --zero 1': the file's options as given ('' for none)."""
        flags = [f"--dp {self.dp}"] if self.dp > 1 or self.dies > 1 and self.tp == 1 else []
        flags += [f"--tp {self.tp}"] if self.tp > 1 else []
        flags += [f"--zero {self.zero}"] if self.zero else []
        return "".join(f" {f}" for f in flags)


def _whole(v: object, default: int) -> int:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 1 \
        and float(v).is_integer()
    return int(v) if ok else default


def file_ranks(files: Sequence[str], docs: Mapping[str, object]) -> FileRanks | None:
    """The FileRanks of the first `rooflab train --json` file among the inputs (its
    train.setup); None where none is one."""
    for path in files:
        data = docs.get(path)
        train = data.get("train") if isinstance(data, Mapping) else None
        st = train.get("setup") if isinstance(train, Mapping) else None
        if isinstance(st, Mapping):
            return FileRanks(dp=_whole(st.get("dp"), 1), tp=_whole(st.get("tp"), 1),
                             zero=_whole(st.get("zero"), 0) if st.get("zero") else 0,
                             dies=_whole(st.get("dies"), 1))
    return None


def _ring(n: int) -> float:
    return (n - 1) / n


def rings(k: Kernel, ranks: FileRanks | None, dies: int) -> tuple[int, int]:
    """(the file's ring ranks, the candidate's) for the communication row k."""
    tp_row = 1 if k.meta.get("tensor_parallel") else 0
    if ranks is None:
        n = k.meta.get("devices")
        n = int(n) if isinstance(n, (int, float)) and n >= 2 else 2
        return n, n
    return ranks.ranks(ranks.dies)[tp_row], ranks.ranks(dies)[tp_row]


def row_on(k: Kernel, ranks: FileRanks | None, dies: int) -> Kernel | None:
    """The communication row k as `rooflab train --on` a device of `dies` dies sends it:
    its bytes scaled to that device's ring (module docstring); k itself where the rings
    agree, None where the device's ring is one rank (no collective)."""
    nf, nc = rings(k, ranks, dies)
    if nc == nf:
        return k
    if nc < 2:
        return None
    scale = _ring(nc) / _ring(nf)
    return k.with_(bytes={lv: b * scale for lv, b in k.bytes.items()})


def rank_notes(ranks: FileRanks | None, shown, dies_of, has_comm: bool) -> list[str]:
    """The lines under choose's table that say what of a candidate's row is still the
    file's ranks' (module docstring), one per distinct ring; [] where every shown device
    ranks as the file's does."""
    if ranks is None:
        return []
    nf_dp, nf_tp = ranks.ranks(ranks.dies)
    by: dict[tuple[int, int], list[str]] = {}
    for c in shown:
        got = ranks.ranks(dies_of(c.name))
        if got != (nf_dp, nf_tp):
            by.setdefault(got, []).append(c.name)
    out = []
    run = f"`rooflab train ... --on DEVICE{ranks.flags()}`"
    for (dp, tp), names in by.items():
        who = ", ".join(names)
        if not has_comm and dp > 1:
            out.append(f"note: {who}: {run} runs {dp} data-parallel ranks (a package's "
                       f"dies, each a rank) with the gradients' all-reduce over their link; "
                       f"this file's step has none, so {'its' if len(names) == 1 else 'their'}"
                       f" time leaves it out")
        if tp != nf_tp:
            out.append(f"note: {who}: {run} splits every layer over a group of {tp} ranks, "
                       f"not the file's {nf_tp}: the kernels and the memory need here are a "
                       f"rank's of the file (1/{nf_tp} of every layer), not the 1/{tp} its "
                       f"own step counts; its collectives are re-ringed (above); run train "
                       f"--on it for its own figures")
        elif ranks.zero and dp != nf_dp:
            out.append(f"note: {who}: {run} shards ZeRO-{ranks.zero} over its {dp} "
                       f"data-parallel ranks, not the file's {nf_dp}: the optimizer's kernel "
                       f"and the memory need here are the file's 1/{nf_dp} shard's, not the "
                       f"1/{dp} its own step counts; its collectives are re-ringed (above); "
                       f"run train --on it for its own figures")
    return out

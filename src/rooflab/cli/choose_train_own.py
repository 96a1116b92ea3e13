"""`rooflab choose` on a `rooflab train --zero N/--tp N --json` file, on a candidate whose
ranks differ from the file's device's (choose_train_ranks: an MI250X is 2 dies, each a
rank): the candidate's own rank, recomputed from the file's train.setup, as `rooflab train
--on DEVICE` runs it. ZeRO shards the optimizer's state and its pass over the
data-parallel ranks and --tp splits every layer over the group's, so the file's rank is
not the candidate's: llama-2-7b `train --on MI250X --dp 4 --zero 1` steps a 1/8 shard
(8 ranks), `--on H100 --dp 4 --zero 1` a 1/4 one; choose kept the file's 1/8 on the H100
(226 ms where train prints 233 ms; s34 review, s35 E).

Without ZeRO or --tp every rank runs --batch and holds every state, the file's rank is
every candidate's, and nothing is recomputed. Neither is it where the file's model is
not a bundled config or a config.json found at its path (choose_train_ranks.rank_notes
then says what of the row is still the file's)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..model.kernel import Kernel


@dataclass(frozen=True)
class OwnRank:
    """A candidate's own rank of a train file's step: its kernels (the communication
    rows left out: choose re-rings the file's) and the bytes it holds."""

    kernels: tuple[Kernel, ...]
    need_bytes: float


def own_ranks(files: Sequence[str], docs: Mapping[str, object], cands, ranks
              ) -> dict[str, OwnRank]:
    """{candidate name: its own rank} for each candidate whose data-parallel or
    tensor-parallel ranks differ from the file's under --zero or --tp (module docstring);
    {} where none does, or the file's model cannot be read again."""
    from .choose_dies import die_count

    if ranks is None or not (ranks.zero or ranks.tp > 1):
        return {}
    mine = ranks.ranks(ranks.dies)
    other = [(n, roof) for n, roof, _ in cands if ranks.ranks(die_count(n)) != mine]
    if not other:
        return {}
    found = _train_doc(files, docs)
    cfg = _config(found[1]) if found else None
    if cfg is None:
        return {}
    out = {}
    for name, roof in other:
        own = _own(cfg, found[1], name, roof)
        if own is not None:
            out[name] = own
    return out


def device_rank(files: Sequence[str], spec: str, ranks) -> OwnRank | None:
    """The own rank of one device `spec` (a catalog name or a profile, as --among takes
    it) for the train file among `files` (whatif --on/--hardware, as choose ranks that
    device: own_ranks); None where its ranks are the file's, or it cannot be recomputed."""
    from ..errors import RooflabError
    from ..files import load_json
    from ..ingest.profile_checks import split_boost
    from .choose import candidates

    if ranks is None or not (ranks.zero or ranks.tp > 1):
        return None
    try:
        cands = candidates(split_boost(spec)[0], None)
        docs = {f: load_json(f) for f in files if str(f).lower().endswith(".json")}
    except RooflabError:
        return None
    return next(iter(own_ranks(files, docs, cands[:1], ranks).values()), None)


def _train_doc(files, docs) -> tuple[str, Mapping] | None:
    """(path, train block) of the first train file among the inputs (file_ranks's)."""
    for path in files:
        data = docs.get(path)
        train = data.get("train") if isinstance(data, Mapping) else None
        if isinstance(train, Mapping) and isinstance(train.get("setup"), Mapping):
            return path, train
    return None


def _config(train: Mapping):
    """The file's model config again: a bundled one by name, a config.json at the path
    its source names; None where neither reads (the row then keeps the file's rank)."""
    from pathlib import Path

    from ..errors import RooflabError
    from ..workloads.llm.config_names import load_config

    model = train.get("model") if isinstance(train.get("model"), Mapping) else {}
    source, name = model.get("source"), model.get("name")
    if isinstance(source, str) and source.startswith("bundled config "):
        spec = source.removeprefix("bundled config ")
    elif isinstance(source, str) and Path(source).is_file():
        spec = source
    else:
        return None
    try:
        cfg = load_config(spec)
    except RooflabError:
        return None
    return cfg if cfg.name == name or not isinstance(name, str) else None


# train.setup's keys that are TrainSetup's options as `rooflab train` takes them (--dp,
# --tp as given: rank_setup makes them ranks on the candidate's dies)
_OPTIONS = ("batch", "seq", "attn", "recompute", "optimizer", "accumulate",
            "attention_flops", "loss", "clip_grad", "zero", "dp", "tp", "sequence_parallel")


def _own(cfg, train: Mapping, name: str, package) -> OwnRank | None:
    """The candidate's rank as `rooflab train --on NAME` runs the file's setup: its
    kernels (timed on nothing: choose times them) and its memory need."""
    import warnings

    from ..errors import RooflabError
    from ..workloads.llm.train import run_train
    from ..workloads.llm.train_memory import train_memory
    from .train_ranks import rank_memory, rank_setup

    st = train["setup"]
    options = {k: st[k] for k in _OPTIONS if k in st}
    options.setdefault("tp", 1)
    options.setdefault("dp", 1)
    # the gradients' type where it is not the storage's (train.setup names it under --dp
    # whether given or not; the norm-gradient all-reduce is the file's row, re-ringed)
    grads = st.get("grad_dtype")
    storage = "fp32" if st.get("dtype") in ("fp32", "tf32") else st.get("dtype")
    options["grad_dtype"] = grads if grads and grads != storage else None
    try:
        roof, setup, _ = rank_setup(cfg, package, options, st.get("dtype"))
        mem_bytes, _ = rank_memory(name, package, None, setup.dies)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = run_train(cfg, roof, setup)
        need = train_memory(cfg, setup, mem_bytes).total
    except (RooflabError, KeyError, TypeError):
        return None
    return OwnRank(tuple(r.timing.analysis.kernels), float(need))


def own_needs(data: list[dict], own: Mapping[str, OwnRank]) -> None:
    """Each recomputed device's --json row: the memory its own rank needs (rank() judged
    its fit by it), not the file's."""
    for d in data:
        if d.get("name") in own and "needs_bytes" in d:
            d["needs_bytes"] = own[d["name"]].need_bytes

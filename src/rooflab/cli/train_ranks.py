"""`rooflab train` on a catalog package that is several devices to software (--on MI250X:
two GCDs, model/dies.py): one rank per die (workloads/llm/train_dies.py). The setup in
ranks and one die's roof, one rank's memory, and the note that says what the step's
figures are."""

from __future__ import annotations


def rank_setup(cfg, package, options: dict, dtype: str | None):
    """(the roof one rank runs on, the TrainSetup in ranks, the dtype's notes): one rank
    per die on a package of several (an MI250X: workloads/llm/train_dies.py), the --tp
    group's ranks dividing the heads; the dtype fp16 where the roof has fp16 tensor math
    and no bf16 (V100, T4), as `rooflab scale`."""
    from ..workloads.llm.train import TrainSetup
    from ..workloads.llm.train_dies import check_rank_tp, per_rank
    from .scale import _default_dtype

    roof, dies, dp, tp = per_rank(package, options["dp"], options["tp"])
    dtype, picked = _default_dtype(dtype, roof)
    setup = TrainSetup(dtype=dtype, **{**options, "dp": dp, "tp": tp, "dies": dies})
    check_rank_tp(cfg, setup)
    return roof, setup, picked


def rank_memory(on: str, package, memory: str | None, dies: int):
    """(one rank's device memory in bytes or None, the host's notes): --memory as given
    (one rank's), else the catalog's, which on a package of several dies is the package's:
    / dies (one die's, an MI250X's 64 GB)."""
    from .llm_memory import device_capacity
    from .llm_words import catalog_device

    mem_bytes, _, host_notes = device_capacity(catalog_device(on, package), on, memory)
    if mem_bytes is not None and memory is None:
        mem_bytes /= dies
    return mem_bytes, host_notes


def die_words(roof, setup) -> tuple[str, ...]:
    """On a catalog package that is several devices to software (--on MI250X: two GCDs,
    model/dies.py): the roof's own note, then what it means for a training step, whose
    ranks run one per die (workloads/llm/train_dies.py): the step is one rank's on one
    die, --dp and --tp count packages, each die a rank."""
    from ..model.dies import note

    n = setup.dies
    if n <= 1:
        return ()
    if setup.tp > 1:    # as `rooflab llm --tp` says it (llm_words), the link words too
        r = setup.tp
        ranks = (f"; --tp {r // n} counts packages, as `rooflab llm --tp` does: {r} dies, "
                 f"each a rank of its collectives' ring (all-reduce 2 x {r - 1}/{r} of the "
                 f"bytes), while ROCm and `rooflab choose` count dies (their --tp {r}); "
                 f"each die holds 1/{r} of every layer")
    elif setup.dp > n:   # the ring's ranks (train_dp.dp_ranks)
        r = setup.dp
        ranks = (f"; --dp {r // n} counts packages here, {r} dies, each a rank of the "
                 f"data-parallel ring (all-reduce 2 x {r - 1}/{r} of the gradients)")
    else:
        ranks = (f"; --dp 1 is the one package: its {n} dies train as {n} data-parallel "
                 f"ranks over their links (all-reduce 2 x {n - 1}/{n} of the gradients)")
    return (f"{note(roof.name, n)}. A training process (one rank) runs on one die, so this "
            f"step is one rank's: its kernels, floors, MFU's peak and memory line on one "
            f"die's roof (the package's ceilings and memory / {n}), each die a rank running "
            f"--batch {setup.batch}{ranks}",)

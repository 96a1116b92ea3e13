"""A training step on a catalog package that is several devices to software (an MI250X:
two GCDs, each its own GPU to ROCm; model/dies.py).

One rank per die: a training process (torchrun's, Megatron-LM's, one per GCD as Frontier
runs them) sees one die, half the package's ceilings and memory (64 GB, 1.64 TB/s,
191.5 TFLOP/s bf16 on an MI250X). So the step is timed on one die's roof (model.dies.
one_die), its memory judged against one die's, and every die is a rank that runs --batch:

  --dp N (no --tp): N packages, N x dies data-parallel ranks, each holding what DDP or
    its ZeRO shard holds (the ring and ZeRO's shards over N x dies); --dp 1 is the one
    package, its dies a ring of their own on the package's die links;
  --tp N: N packages, a tensor-parallel group of N x dies ranks, each 1/(N x dies) of
    every layer (as `rooflab llm --tp N` counts packages and rings over their dies); --dp
    M then counts TP groups (model replicas), M of them.

Tokens per optimizer step are the data-parallel ranks' x --batch x --seq (x --accumulate).
TrainSetup carries the rank counts (dp, tp) and `dies`, from which the counts as given
(dp_devices, tp_devices) are read back for the words and the links, chosen per package as
`rooflab scale` and `llm --tp` choose them.
"""

from __future__ import annotations


def per_rank(roof, dp: int, tp: int) -> tuple[object, int, int, int]:
    """(the roof one rank runs on, dies per package, data-parallel ranks, tensor-parallel
    ranks) for --dp dp and --tp tp on `roof`: the roof itself and (1, dp, tp) for a device
    that is one to software; one die's roof and the counts x dies (module docstring) for
    a package of several. dp and tp are checked by TrainSetup afterwards (left as given
    where they are not positive integers, so its error names them)."""
    from ...model.dies import one_die, software_devices

    dies = software_devices(roof)
    if dies <= 1 or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1
                            for v in (dp, tp)):
        return roof, 1, dp, tp
    die, _ = one_die(roof, None, dies)
    return (die, dies, *rank_counts(dp, tp, dies))


def rank_roof(cfg, roof, setup):
    """(the roof one rank runs on, the setup in ranks) for `run_train(cfg, roof, setup)`
    from Python: given the package's roof (`load_roof("MI250X")`) with a setup in packages
    (dies 1, as TrainSetup(dp=4) reads) the step was timed on the package's 383 TFLOP/s as
    one device of --dp 4, where `rooflab train --on MI250X --dp 4` times one die's 191.5
    over 8 ranks (s35 A): both are split here as per_rank splits them for the CLI; a setup
    already in ranks (dies as the package's) keeps its counts, the roof split; one die's
    roof, or any other device's, as given."""
    from dataclasses import replace

    from ...model.dies import one_die, software_devices

    dies = software_devices(roof)
    if dies <= 1:
        return roof, setup
    if setup.dies == dies:
        return one_die(roof, None, dies)[0], setup
    die, dies, dp, tp = per_rank(roof, setup.dp, setup.tp)
    ranks = replace(setup, dp=dp, tp=tp, dies=dies)
    check_rank_tp(cfg, ranks)
    return die, ranks


def rank_counts(dp: int, tp: int, dies: int) -> tuple[int, int]:
    """(data-parallel ranks, tensor-parallel ranks) for --dp dp and --tp tp given in
    packages of `dies` dies: --tp's group is every die of its packages, else --dp's ring
    is (module docstring)."""
    if tp > 1:
        return dp, tp * dies
    return dp * dies, 1


def check_rank_tp(cfg, setup) -> None:
    """The TP group's ranks must divide the heads and KV heads (train_tp.check_tp); on a
    package of several dies the error names --tp as given (packages) and the ranks it
    makes, so the fix it offers is in the user's units."""
    from ...errors import InputError
    from .train_tp import check_tp

    if setup.tp < 2 or setup.dies == 1:
        check_tp(cfg, setup.tp)
        return
    n, pk = setup.dies, setup.tp_devices
    try:
        check_tp(cfg, setup.tp)
    except InputError:
        ok = [d for d in range(1, cfg.heads + 1)
              if cfg.heads % (d * n) == 0 and cfg.kv_heads % (d * n) == 0]
        raise InputError(f"--tp {pk} on a package of {n} dies is a tensor-parallel group of "
                         f"{setup.tp} ranks (one per die), which must divide the "
                         f"{cfg.heads} attention heads and {cfg.kv_heads} KV heads of "
                         f"{cfg.name}; give --tp {' or '.join(map(str, ok[:6]))}") from None

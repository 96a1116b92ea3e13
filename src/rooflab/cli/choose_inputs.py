"""Reading `rooflab choose`'s inputs: the kernel files (each .json parsed once) and, in an
`rooflab llm --json` document, the footprint, the least footprint, the TP/PP split and the
TP links that the ranking and its rows read."""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import InputError


def load_work(files: list[str], docs: dict[str, object]) -> tuple[list, list]:
    """(kernels, steps) of the files: the work to rank by, and the measured whole steps
    (each with the roof it ran on) to compare the ranking with."""
    from ..ingest.kernelfile import load_kernels  # every profiler file, by content
    from ..model.choose import own_steps, split_whole_steps
    from .inputs import refuse_repeated

    kernels, steps = [], []
    refuse_repeated(files)     # a file given twice would count its kernels twice
    for path in files:
        _refuse_roof(_doc(docs, path), path)
        work, whole = split_whole_steps(load_kernels(path))
        # another phase's step (an llm file's --ttft-ms prefill beside its decode kernels)
        # is no measure of this work's floor: not compared
        whole = own_steps(work, whole)[0]
        kernels += work
        if whole:
            roof = _roof_name(_doc(docs, path))
            steps += [(k, roof) for k in whole]
    return kernels, steps


def _doc(docs: dict[str, object], path: str) -> object | None:
    """The parsed document of a .json input (None for other files), parsed on first use
    and kept in docs, so the roof name, footprint and TP/PP split read one parse."""
    from ..files import load_json

    if not path.lower().endswith(".json"):
        return None
    if path not in docs:
        docs[path] = load_json(path)
    return docs[path]


def _llm(docs: dict[str, object], path: str) -> Mapping | None:
    """The `llm` block of a .json input, its figures checked (model.document_parts.llm_part: the
    same words in choose, whatif and compare); None for other inputs."""
    from ..model.document_parts import llm_part

    return llm_part(_doc(docs, path), path)


def _refuse_roof(data: object | None, path: str) -> None:
    """A profile or a roof given as the kernels: the kernel reader's words send it to
    --on, which choose has not; here it is a device, for --among."""
    from ..model.document_parts import document_kind

    if document_kind(data) in ("profile", "roof"):
        raise InputError(f"{path}: this is a machine profile or roof, not a list of kernels: "
                         f"choose ranks devices for a kernel file; name it among the "
                         f"devices, e.g. `rooflab choose kernels.json --among {path},H100`")


def _roof_name(data: object | None) -> str | None:
    """The roof an analysis document was made on (where its measured step ran)."""
    from ..model.document_parts import roof_parts

    # the roof that judges the document's kernels, as every reader finds it
    parts = roof_parts(data)
    return str(parts[0][1].get("name") or "unnamed") if parts else None


def _footprint(files: list[str], docs: dict[str, object]) -> float | None:
    """Bytes one device must hold for an `rooflab llm` document (its footprint: weights +
    KV + activations at its batch, per device under --tp) or a `rooflab train` step (its
    memory: train_need); None for other inputs. Seed 002:
    a device the model does not fit in is no choice, however fast its roof."""
    total = None
    for path in files:
        llm = _llm(docs, path)
        fp = llm.get("footprint") if llm is not None else None
        need = fp.get("total_bytes") if isinstance(fp, Mapping) else None
        if need is None:   # a `rooflab train` step holds its states and activations
            need = train_need(_doc(docs, path), path)
        if need is not None and need > 0:   # a number: llm_part checked it
            total = max(total or 0.0, float(need))
    return total


def train_need(data: object | None, path: str) -> float | None:
    """Bytes one device holds for a `rooflab train --json` step: train.memory.total_bytes
    (weights, gradients, optimizer state and activations at its micro-batch, docs/json.md
    "train --json"); None for other documents. Review s27 v3-F4: choose ranked an H100 as
    an ordinary choice for a 183 GB step that `train` itself said does not fit."""
    import math

    train = data.get("train") if isinstance(data, Mapping) else None
    mem = train.get("memory") if isinstance(train, Mapping) else None
    if not isinstance(mem, Mapping) or "total_bytes" not in mem:
        return None
    need = mem["total_bytes"]
    if (isinstance(need, bool) or not isinstance(need, (int, float)) or not math.isfinite(need)
            or need <= 0):
        raise InputError(f"{path}: train.memory.total_bytes must be a positive number of "
                         f"bytes (the step's memory, as `rooflab train --json` writes it); got "
                         f"{need!r}: rerun `rooflab train ... -o {path}`")
    return float(need)


def train_inputs(files: list[str], docs: dict[str, object]) -> bool:
    """Whether the memory need comes from a `rooflab train` document (the words and the
    remedies of the fit differ from an llm document's)."""
    return any(train_need(_doc(docs, f), f) is not None for f in files)


def _least(files: list[str], docs: dict[str, object]) -> float | None:
    """least_bytes of the `rooflab llm` documents among the files (the largest, as
    _footprint takes the largest need); None for other inputs."""
    from .choose_fit import least_bytes

    found = [least_bytes(llm) for llm in (_llm(docs, f) for f in files)
             if llm is not None]
    found = [x for x in found if x is not None]
    return max(found) if found else None


def _parallel(files: list[str], docs: dict[str, object]) -> dict | None:
    """{"gpus", "tp", "pp"} of the `rooflab llm --json` documents among the files (their
    settings.tp/pp), None when none is one. Under --tp the kernels are one GPU's shard, under
    --pp the whole model stage after stage; either way a row stands for tp x pp GPUs, which
    the ranking must say (it read as one GPU). Documents that disagree are an input error:
    their kernels would add up across different splits."""
    found: dict[str, tuple[int, int]] = {}
    for path in files:
        llm = _llm(docs, path)
        st = llm.get("settings") if llm is not None else None
        if isinstance(st, Mapping):
            # whole numbers >= 1 where given (llm_part); 2.0 is --tp 2
            found[path] = (int(st.get("tp") or 1), int(st.get("pp") or 1))
    if not found:
        return None
    if len(set(found.values())) > 1:
        each = ", ".join(f"{p}: --tp {tp} --pp {pp}" for p, (tp, pp) in found.items())
        raise InputError(f"the llm documents split the model differently ({each}); their "
                         f"kernels cannot add up to one device's work: choose one split, "
                         f"i.e. rerun `rooflab llm` with the same --tp/--pp for every file")
    tp, pp = next(iter(found.values()))
    return {"gpus": tp * pp, "tp": tp, "pp": pp}


def _tp_block(files: list[str], docs: dict[str, object]) -> Mapping | None:
    """The `parallel` block of the first `rooflab llm --tp` document (_parallel checked
    that they agree); None when none has one (a hand-written settings.tp)."""
    return next((llm["parallel"] for llm in (_llm(docs, f) for f in files)
                 if llm is not None and isinstance(llm.get("parallel"), Mapping)), None)

"""rooflab whatif's lines for a `rooflab llm --json` document: whether the model fits the
what-if's device, and the TP all-reduces the kernels leave out (split from
cli/whatif.py)."""

from __future__ import annotations


def _llm_doc(files: list[str]) -> dict | None:
    """The `llm` block of the first `rooflab llm --json` document among the files, or None:
    it holds what the kernels alone do not (footprint, the TP all-reduces, the pipeline)."""
    from ..files import load_json
    from ..ingest.kernelfile import file_kind
    from ..model.document_parts import llm_part

    for path in files:
        # rooflab's own JSON only: a .json may be a (gzipped) torch trace
        if not path.lower().endswith(".json") or file_kind(path) != "rooflab":
            continue
        # its figures checked as choose and compare check them (a string --tp was a
        # traceback here, a "3 GB" footprint skipped the fit without a word)
        llm = llm_part(load_json(path), path)
        if llm is not None:
            return llm
    return None


def _new_comm_s(llm: dict, hardware: str | None) -> tuple[float, str] | None:
    """The file's TP all-reduce time on the what-if's device, and where its link is from:
    on --hardware with the file's link taken from the catalog, the new device's catalog
    link (the bandwidth part recomputed, the latency part kept); otherwise the file's own
    time (the same link). None without --tp or without the figures."""
    par = llm.get("parallel")
    need = ("comm_s", "allreduces_per_step", "allreduce_bytes", "link_bytes_per_s")
    if not isinstance(par, dict) or any(par.get(f) is None for f in need):
        return None   # numbers where present (document_parts.llm_part); a part missing: no line
    tp = int(par.get("tp") or 1)
    ring = int(par.get("ring_ranks") or tp)   # tp x dies (an MI250X package: 2 ranks)
    # the vocab-parallel logits gather (review 18d E) rides the same link: a ring
    # all-gather moving (tp-1)/tp of its bytes, its latency part kept as the file has it
    gather_moved = (ring - 1) / ring * float(par.get("logits_gather_bytes") or 0.0)
    comm = _file_link_s(par)
    kind = (par.get("link_provenance") or {}).get("kind")
    if hardware is None or kind != "catalog":
        return comm, f"the file's link ({par.get('link', 'as in the file')})"
    from types import SimpleNamespace

    from ..errors import RooflabError
    from ..hardware.catalog import lookup
    from ..model.parallel import allreduce_link_bytes
    from ..workloads.llm.links import tp_link

    try:
        dev = lookup(hardware)
        new = tp_link(SimpleNamespace(tp=tp), None, dev, None, None, None).link
    except (RooflabError, AttributeError):
        return comm, f"the file's link (no catalog link for {hardware})"
    # the vocab-parallel embedding's one all-reduce (H1) sends 2(tp-1)/tp of its payload
    # as each per-layer one does (0 in a file from before it was counted whose model
    # does not give it either: document_parts.with_link_terms, said by _terms_words)
    embedding = float(par.get("embedding_allreduce_bytes") or 0.0)
    moved = (float(par["allreduces_per_step"]) * allreduce_link_bytes(
        float(par["allreduce_bytes"]), ring) + allreduce_link_bytes(embedding, ring)
        + gather_moved)
    latency = comm - moved / float(par["link_bytes_per_s"])
    return latency + moved / new.bus_bytes_per_s, f"{new.source}"


def _file_link_s(par: dict) -> float:
    """The decode step's link time as the file has it: the per-layer all-reduces, the
    embedding's all-reduce and the logits gather (llm.parallel.tpot_s - compute_s)."""
    return (float(par["comm_s"]) + float(par.get("embedding_allreduce_s") or 0.0)
            + float(par.get("logits_gather_s") or 0.0))


def _llm_extras(llm: dict | None, result, hardware: str | None) -> dict:
    """whatif --json keys for an llm document: whether the model fits the what-if's
    device, and the TP all-reduces the kernels leave out (review 11b #8, #13)."""
    if llm is None:
        return {}
    out: dict = {}
    fit = _fit(llm, result, hardware)
    if fit is not None:
        out["fit"] = fit
    comm = _new_comm_s(llm, hardware) if _batch_kept(result) else None
    if comm is not None:
        from ..model.whatif_floors import total_floors

        (wb, wa) = total_floors(result)["work"]
        par = llm["parallel"]
        before = _file_link_s(par)
        out["parallel"] = {"tp": par.get("tp"),
                           "allreduces_per_step": par.get("allreduces_per_step"),
                           "comm_before_s": before, "comm_after_s": comm[0],
                           "comm_link": comm[1]}
        from ..model.document_parts import OLDER_FILE

        if par.get(OLDER_FILE):   # review s21 r1 F3: an older file's link terms
            out["parallel"]["note"] = par[OLDER_FILE]
        if wb and wa:
            out["parallel"].update({"total_before_tpot_s": wb + before,
                                    "total_after_tpot_s": wa + comm[0]})
    return out


def _terms_words(llm: dict) -> str:
    """The link terms the line counts besides the per-layer all-reduces: the embedding's
    all-reduce and the logits gather, unless the file predates them and they could not be
    counted from it (document_parts.with_link_terms): then the line does not claim them."""
    from ..model.document_parts import LINK_TERMS

    par = llm.get("parallel") or {}
    has = [w for k, w in zip(LINK_TERMS, ("the embedding's all-reduce", "the logits gather"),
                             strict=True) if par.get(k) is not None]
    return f", {' and '.join(has)}" if has else ""


def _batch_kept(result) -> bool:
    """Whether the what-if leaves the batch alone (a batch change resizes the all-reduces,
    which this line does not recount)."""
    from ..model.whatif_batch import meta_batch

    return all(meta_batch(old) == meta_batch(new) for old, new in result.moves)


def _fit(llm: dict, result, hardware: str | None) -> dict | None:
    """Whether the document's footprint (bytes per device) fits the what-if's device, as
    `rooflab llm --on` and `rooflab choose` judge it (choose_memory.device_memory): the
    document's --gpu-mem-util x the device's memory (the driver's total where the catalog
    has it), the whole memory where the document used it. {"device", "needs_bytes",
    "memory_bytes", "fits"}; None when the footprint or the memory is unknown. Judged
    against the full catalog memory, Llama-3-70B bf16 at batch 64 (189.7 GB) fitted an
    MI300X that llm at --gpu-mem-util 0.9 (172.8 GB) said it did not. The what-if's roof
    is the package's (MI250X: both dies), and so is the memory, as in `rooflab llm`."""
    from .choose_memory import device_memory, document_util

    if hardware is None:   # other what-ifs change the bytes the footprint counted
        return None
    fp = llm.get("footprint")
    need = fp.get("total_bytes") if isinstance(fp, dict) else None
    mem = device_memory(hardware, document_util(llm))[0]
    if not isinstance(need, (int, float)) or not mem:
        return None
    return {"device": result.after.roof.name, "needs_bytes": float(need),
            "memory_bytes": float(mem), "fits": need <= mem}


def _llm_lines(llm: dict | None, result, hardware: str | None) -> list[str]:
    """The lines an llm document adds under the table: the all-reduces and the fit."""
    from ..units import fmt_seconds, fmt_times, si_apart

    extras = _llm_extras(llm, result, hardware)
    out = []
    par = extras.get("parallel")
    if par and "total_before_tpot_s" in par:
        tb, ta = par["total_before_tpot_s"], par["total_after_tpot_s"]
        out.append(f"with the {par['allreduces_per_step']} all-reduces{_terms_words(llm)} "
                   f"of --tp {par['tp']}: {fmt_seconds(par['comm_before_s'])} -> "
                   f"{fmt_seconds(par['comm_after_s'])} (on {par['comm_link']}), so the "
                   f"TPOT floor {fmt_seconds(tb)} -> {fmt_seconds(ta)} ({fmt_times(tb / ta)}), as "
                   f"`rooflab llm` gives it")
        if par.get("note"):
            out.append(f"note: {par['note']}")
    fit = extras.get("fit")
    if fit and not fit["fits"]:
        from .choose_fit import fit_remedy

        need, mem = si_apart(fit["needs_bytes"], fit["memory_bytes"], "B")
        from .choose_memory import document_util

        util = document_util(llm) if llm else None
        held = f", {util:g} x its memory as the document's --gpu-mem-util" if util else ""
        out.append(f"does not fit: the model needs {need} per device (weights + KV + "
                   f"activations, from the llm document) > the memory of {fit['device']} "
                   f"({mem}{held}); the floor assumes it fit "
                   f"({fit_remedy([fit['device']])})")
    return out


def _scope(llm: dict | None) -> str:
    """What the kernels of an llm document cover under --tp/--pp (as `rooflab llm
    --compare` says it), or `rooflab llm`'s TPOT floor for one device."""
    if llm is None:
        return "(`rooflab llm`'s TPOT floor)"
    st = llm.get("settings") or {}
    tp, pp = int(st.get("tp") or 1), int(st.get("pp") or 1)
    par = llm.get("parallel") if isinstance(llm.get("parallel"), dict) else {}
    tp = int(par.get("tp") or tp)
    parts = []
    if tp > 1:
        parts.append(f"per device of {tp}, without the all-reduces")
    if pp > 1:
        parts.append(f"all {pp} pipeline stages, without stage transfers")
    return f"({', '.join(parts)})" if parts else "(`rooflab llm`'s TPOT floor)"

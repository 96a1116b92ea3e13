"""Which rooflab document a parsed JSON is (document_kind) and the parts the readers and
verbs take from it: its kernels, its profile, its roofs, an `llm --json` block and an
analysis's floors, each checked once so every verb refuses a bad file in the same words.
Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InputError
from .json_values import number_field, short_value

# Which rooflab document a JSON is, told once (review 14b F12): the kernel reader, the roof
# reader and the verbs ask here instead of testing keys in their own orders. Each verb's
# --json (or -o .json) writes one of these shapes:
DOCUMENT_KINDS = {
    "kernels": "a kernel list: a list, or {'kernels': [...]} without a roof",
    "analysis": "kernels with the roof they were placed on ({'roof', 'kernels'}: report, "
                "bench, ncu, rocprof, torch, llm and ai --on --json; a kernel file with "
                "its roof)",
    "chart": "plot --json: {'roofs', 'kernels', 'drawn'}",
    "whatif": "whatif --json / -o .json: {'after': {'roof', 'kernels'}}",
    "demo": "demo --json: {'profile', 'analysis'}",
    "profile": "a machine profile (probe -o, demo's profile.json): {'measured', 'nominal'}",
    "roof": "a roof alone ({'compute', 'memory'}) or a document carrying one without "
            "kernels (specs show, scale --json)",
    "compare": "compare --json: {'matches'}",
    "choose": "choose --json: {'devices': ranked rows} (a bare list of them before)",
    "devices": "specs list / specs compare --json: {'devices': catalog entries}",
    "torch_trace": "a torch.profiler chrome trace: {'traceEvents'}",
}


def document_kind(data: Any) -> str | None:
    """Which rooflab document `data` (a parsed JSON) is: a key of DOCUMENT_KINDS, or None
    for none of them. Kernels first: a document that lists kernels is read as kernels."""
    if isinstance(data, list):
        return "choose" if _bare_ranking(data) else "kernels"
    if not isinstance(data, Mapping):
        return None
    if "kernels" in data:
        if isinstance(data.get("roof"), Mapping):
            return "analysis"
        return "chart" if isinstance(data.get("roofs"), list) else "kernels"
    if isinstance(data.get("after"), Mapping):
        return "whatif"
    if isinstance(data.get("analysis"), Mapping) or isinstance(data.get("profile"), Mapping):
        return "demo"
    if "matches" in data:
        return "compare"
    devices = data.get("devices")
    if isinstance(devices, list):
        ranked = bool(devices) and isinstance(devices[0], Mapping) and "rank" in devices[0]
        return "choose" if ranked else "devices"
    if "measured" in data or "nominal" in data:
        return "profile"
    if isinstance(data.get("roof"), Mapping) or "compute" in data:
        return "roof"
    if isinstance(data.get("traceEvents"), list):
        return "torch_trace"
    return None


def _bare_ranking(data: list) -> bool:
    """Whether a list is `rooflab choose --json` as the first releases wrote it, the ranked
    devices bare ([{"rank": 1, "name": ..., "seconds": ..., "relative": 1.0, "binding":
    ..., "kernels": [...]}]; {'devices': [...]} since): read as kernels, its 14 devices
    were 14 timed kernels in report, whatif and plot (review s21 r1 F2). A kernel has no
    rank, and a ranked row no FLOP or bytes."""
    first = data[0] if data else None
    return (isinstance(first, Mapping) and "rank" in first
            and ("relative" in first or "binding_share" in first)
            and "flop" not in first and "bytes" not in first)


def kernels_part(data: Any) -> Any:
    """What a document holds under its kernels (a list when well formed; the reader checks
    it), or None for a document without kernels (a profile, a roof, a comparison)."""
    kind = document_kind(data)
    if kind == "kernels" and isinstance(data, list):
        return data
    if kind in ("kernels", "analysis", "chart"):
        return data["kernels"]
    if kind == "whatif":             # the predicted kernels
        return data["after"].get("kernels")
    if kind == "demo" and isinstance(data.get("analysis"), Mapping):
        return data["analysis"].get("kernels")
    return None


def profile_part(data: Any) -> Mapping[str, Any] | None:
    """The machine profile a document is or carries (a profile; demo's 'profile'), else
    None. A profile's roofs come before any other roof of the document."""
    kind = document_kind(data)
    if kind == "profile":
        return data
    if kind == "demo" and isinstance(data.get("profile"), Mapping):
        return data["profile"]
    return None


def roof_parts(data: Any) -> tuple[tuple[str, Any], ...]:
    """(where, roof dict) of each roof a document carries outside a profile, the one that
    judges its kernels first: 'roof' (an analysis, specs show, scale), 'after.roof' (a
    what-if: the roof its predicted kernels sit on), 'roofs[i]' (a chart), '' (a bare
    roof). Empty for a document without one (a plain kernel list)."""
    kind = document_kind(data)
    if kind in ("analysis", "roof") and isinstance(data.get("roof"), Mapping):
        return (("roof", data["roof"]),)
    if kind == "roof":
        return (("", data),)
    if kind == "whatif" and isinstance(data["after"].get("roof"), Mapping):
        return (("after.roof", data["after"]["roof"]),)
    if kind == "chart":
        return tuple((f"roofs[{i}]", r) for i, r in enumerate(data["roofs"]))
    return ()


# The figures of an `rooflab llm --json` document's `llm` block that choose, whatif and
# compare read besides its kernels: (field, unit, whole number?, least value). Checked once
# here (llm_part), so one bad file gets the same words in every verb; each verb read them
# its own way before, and a "3 GB" footprint was skipped without a word (no fit check), a
# string --tp was a traceback and a negative floor a negative step time.
LLM_FIELDS = (
    ("footprint.total_bytes", "bytes", False, 0.0),
    ("footprint.weights_bytes", "bytes", False, 0.0),
    ("footprint.kv_bytes", "bytes", False, 0.0),
    ("footprint.activations_bytes", "bytes", False, 0.0),
    ("settings.weight_bytes_per_param", "bytes per parameter", False, 0.0),
    ("settings.group_size", "weights per scale", True, 1.0),
    ("settings.tp", "GPUs", True, 1.0),
    ("settings.pp", "GPUs", True, 1.0),
    ("decode.floor_s", "seconds", False, 0.0),
    ("prefill.floor_s", "seconds", False, 0.0),
    ("parallel.tp", "GPUs", True, 1.0),
    ("parallel.comm_s", "seconds", False, 0.0),
    ("parallel.allreduces_per_step", "all-reduces", True, 0.0),
    ("parallel.allreduce_bytes", "bytes", False, 0.0),
    ("parallel.link_bytes_per_s", "bytes/s", False, 1.0),   # divided by: not 0
)
LLM_FIX = "write the file again with `rooflab llm CONFIG ... --json`, or fix the field"


def llm_part(data: Any, where: str) -> Mapping[str, Any] | None:
    """The `llm` block of a `rooflab llm --json` document (an analysis with an 'llm'
    object; a hand-cut one without its roof too), None for any other document;
    InputError naming the file, the field and the fix when the block or one of LLM_FIELDS
    is malformed (a string, NaN, negative, a fractional --tp), so the verbs can read those
    figures as plain numbers."""
    if not isinstance(data, Mapping) or "llm" not in data:
        return None
    llm = data["llm"]
    if not isinstance(llm, Mapping):
        raise InputError(f"{where}: field 'llm' must be an object (the block `rooflab llm "
                         f"--json` writes); got {short_value(llm)}; {LLM_FIX}")
    for field, unit, whole, least in LLM_FIELDS:
        _llm_number(llm, field, where, unit, whole, least)
    return with_link_terms(llm)


# The keys of an `llm --tp N` document's parallel block that older files lack: the
# vocab-parallel embedding's all-reduce and the logits gather (review 18d E, H1), and the
# key the parallel block says so under, for the lines of choose and whatif (review s21 r1 F3)
LINK_TERMS = ("embedding_allreduce_bytes", "logits_gather_bytes")
OLDER_FILE = "older_file_note"


def with_link_terms(llm: Mapping[str, Any]) -> Mapping[str, Any]:
    """An llm block whose `--tp` parallel block lacks the embedding's all-reduce and the
    logits gather (written before rooflab counted them) with both filled in as `rooflab
    llm` counts them today (workloads.llm.parallel.tensor_parallel): the embedding's
    payload is a per-layer all-reduce's (batch x hidden x 16 bit, allreduce_bytes), the
    gather batch x vocab of the same width (allreduce_bytes x vocab / hidden), their times
    on the file's link, and parallel[OLDER_FILE] saying so. Without model.hidden and
    model.vocab the terms stay out and the note says the file's link time leaves them
    out. Taken as 0 without a word, choose added 400 ns where `rooflab llm` adds 481 ns
    and whatif's line named terms it had not counted (review s21 r1 F3). A copy: the
    parsed document is left as it was."""
    par = llm.get("parallel")
    if (not isinstance(par, Mapping) or not isinstance(par.get("tp"), (int, float))
            or par["tp"] <= 1 or all(par.get(k) is not None for k in LINK_TERMS)):
        return llm
    tp = int(par["tp"])
    model = llm.get("model") if isinstance(llm.get("model"), Mapping) else {}
    name = model.get("name") or "CONFIG"
    rerun = f"`rooflab llm {name} --tp {tp} --json` with the file's other options"
    # what the file lacks (a file of review 18d E's time has the gather, not the embedding)
    lacks = " or ".join(w for k, w in zip(LINK_TERMS, ("embedding all-reduce",
                                                        "logits gather"), strict=True)
                        if par.get(k) is None)
    them = "them" if " or " in lacks else "it"
    added = _link_terms(par, model, tp)
    if added is None:
        note = (f"this file, written by an older rooflab, has no {lacks}, so its TP link "
                f"time leaves {them} out; {rerun} counts {them}")
        return {**llm, "parallel": {**par, OLDER_FILE: note}}
    note = (f"this file, written by an older rooflab, has no {lacks}: counted here from "
            f"its model (hidden {model['hidden']}, vocab {model['vocab']}) as `rooflab "
            f"llm` counts {them}; {rerun} writes {them}")
    filled = {k: v for k, v in added.items() if par.get(k) is None}
    return {**llm, "parallel": {**par, **filled, OLDER_FILE: note}}


def _link_terms(par: Mapping[str, Any], model: Mapping[str, Any], tp: int
                ) -> dict[str, float] | None:
    """The embedding all-reduce's and the logits gather's bytes and seconds on the file's
    link, or None where the block or model lacks a figure they come from. The file's hop
    latency is its per-layer all-reduces' time less their bytes over the link, per hop."""
    from .comm_link import allreduce_link_bytes, ring_hops

    try:
        hidden, vocab = float(model["hidden"]), float(model["vocab"])
        payload, count = float(par["allreduce_bytes"]), int(par["allreduces_per_step"])
        comm_s, bw = float(par["comm_s"]), float(par["link_bytes_per_s"])
    except (KeyError, TypeError, ValueError):
        return None
    if not (hidden > 0 and vocab > 0 and payload > 0 and count > 0 and bw > 0):
        return None
    # one all-reduce of the same payload: the per-layer ones' time each, latency included
    one_s = comm_s / count
    hop_s = max(0.0, one_s - allreduce_link_bytes(payload, tp) / bw) / ring_hops(tp)
    gather = payload * vocab / hidden
    return {"embedding_allreduce_bytes": payload, "embedding_allreduce_s": one_s,
            "logits_gather_bytes": gather,
            "logits_gather_s": (tp - 1) * hop_s + (tp - 1) / tp * gather / bw}


def _llm_number(llm: Mapping[str, Any], field: str, where: str, unit: str, whole: bool,
                least: float) -> None:
    """Check one dotted field of an llm block; absent (or null) is fine."""
    head, _, key = field.partition(".")
    part = llm.get(head)
    if part is None:
        return
    name = f"llm.{field}"
    if not isinstance(part, Mapping):
        raise InputError(f"{where}: field 'llm.{head}' must be an object; got "
                         f"{short_value(part)}; {LLM_FIX}")
    if part.get(key) is None:
        return
    value = _fixable({name: part[key]}, name, where, unit)
    if (whole and value != int(value)) or value < least:
        need = f"a whole number >= {least:g}" if whole else f">= {least:g}"
        raise InputError(f"{where}: field '{name}' must be {need} {unit}; got "
                         f"{short_value(part[key])}; {LLM_FIX}")


def analysis_floors(data: Any, where: str) -> list[tuple[str, float | None]]:
    """(kernel, floor_s) of each row of a document's 'analysis' list (a floor not written:
    None); InputError naming the row when a floor is no number or negative."""
    rows = data.get("analysis") if isinstance(data, Mapping) else None
    out: list[tuple[str, float | None]] = []
    for i, r in enumerate(rows if isinstance(rows, list) else ()):
        if not isinstance(r, Mapping):
            raise InputError(f"{where}: analysis[{i}] must be an object (a point `rooflab "
                             f"report --json` writes); got {short_value(r)}")
        floor = None
        if r.get("floor_s") is not None:
            here = f"{where}: analysis[{i}] '{r.get('kernel')}'"
            floor = _fixable(r, "floor_s", here, "seconds")
            if floor < 0:
                raise InputError(f"{here}: field 'floor_s' must be >= 0 seconds; got "
                                 f"{short_value(r['floor_s'])}; {LLM_FIX}")
        out.append((str(r.get("kernel")), floor))
    return out


def _fixable(d: Mapping[str, Any], field: str, where: str, unit: str) -> float:
    """number_field, its refusal saying how to write the file again (LLM_FIX)."""
    try:
        return number_field(d, field, where, unit)
    except InputError as exc:
        raise InputError(f"{exc}; {LLM_FIX}") from None


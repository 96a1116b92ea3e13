"""A `rooflab train --dp N --tp M -o FILE.json` file written before each link had its own
ceiling (session 33): its roof held one ceiling for the two links where they were of one
kind (the --dp ring's, added first: MI300X --tp 4 --dp 2, one "xGMI" 448 GB/s for the TP
group's 192 GB/s too), so `whatif FILE` without --on, `report` and `compare` timed the TP
row at the ring's bandwidth (llama-2-7b --batch 1 --seq 4096: 63.6 ms for train's 83.1 ms).

Such a file still says both links in its train section (train.dp.link, train.tp.link: level
and bus_bytes_per_s). Read, it is given the shape a newer file has (units.GROUP_LINKS): the
level's ceiling is the TP group's link, the ring's row moves to "LEVEL (--dp ring)" with
its own ceiling, each from the train section, so the file verbs reproduce the floor train
wrote. Pure: the document in, a new one out (the input is not changed), no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

RING = "--dp ring"
# What a link ceiling of a `rooflab train` file is (its "method"), by the group whose
# collectives run on it (units.LINK_GROUPS; workloads/llm/train_dp.link_roof writes them);
# one ceiling both groups share says both (s33 G: the --tp group's read "(rooflab train
# --dp)")
LINK_METHODS = {
    RING: "ring collectives' bus bandwidth (rooflab train --dp: the data-parallel ring's "
          "link)",
    "--tp group": "ring collectives' bus bandwidth (rooflab train --tp: the tensor-parallel "
                  "group's link)",
}
SHARED_LINK_METHOD = ("ring collectives' bus bandwidth (rooflab train --dp and --tp: the "
                      "data-parallel ring's and the tensor-parallel group's link, one "
                      "bandwidth)")


def per_link_document(data: object) -> tuple[object, str | None]:
    """(the document, None) where it needs nothing; else (the document with each link its
    own ceiling and each communication row on its own link, the note that says so)."""
    links = _links(data)
    if links is None:
        return data, None
    dp, tp = links
    level, ring_level = dp["level"], f"{dp['level']} ({RING})"
    roof = data["roof"]
    memory = roof["memory"]
    old = next(m for m in memory if isinstance(m, Mapping) and m.get("level") == level)
    tp_ceiling = {**old, "bytes_per_s": tp["bus_bytes_per_s"],
                  "method": LINK_METHODS["--tp group"]}
    ring_ceiling = {**old, "level": ring_level, "bytes_per_s": dp["bus_bytes_per_s"],
                    "method": LINK_METHODS[RING]}
    for ceiling, link in ((tp_ceiling, tp), (ring_ceiling, dp)):
        if isinstance(link.get("source"), str):
            ceiling["source"] = link["source"]
    moved = [k.get("name") for k in data["kernels"] if _ring_row(k, level)]
    note = (f"written before each link had its own ceiling (rooflab before session 33): its "
            f"one '{level}' ceiling ({_gbs(old.get('bytes_per_s'))}) served the --tp group's "
            f"link ({_gbs(tp['bus_bytes_per_s'])}) and the --dp ring's "
            f"({_gbs(dp['bus_bytes_per_s'])}); read with each its own, as train timed them "
            f"(train.tp.link, train.dp.link): {', '.join(map(str, moved))} on '{ring_level}'")
    out = dict(data)
    out["roof"] = {**roof, "memory": [tp_ceiling if m is old else m for m in memory]
                   + [ring_ceiling]}
    said = (f"on its own ceiling '{ring_level}' ({_gbs(dp['bus_bytes_per_s'])}, the "
            f"file's train.dp.link): the file predates per-link ceilings")
    out["kernels"] = [_on_ring(k, level, ring_level, said) if _ring_row(k, level) else k
                      for k in data["kernels"]]
    train = dict(data["train"])
    train["dp"] = {**train["dp"], "link": {**dp, "level": ring_level}}
    out["train"] = train
    return out, note


def _links(data: object) -> tuple[Mapping, Mapping] | None:
    """(train.dp.link, train.tp.link) of a document in the older shape: both links of one
    level at different bandwidths, one ceiling of that level in its roof and none for the
    ring apart; None for any other document."""
    if not isinstance(data, Mapping):
        return None
    train, roof = data.get("train"), data.get("roof")
    if not isinstance(train, Mapping) or not isinstance(roof, Mapping):
        return None
    dp, tp = (train.get(g) for g in ("dp", "tp"))
    dp, tp = (g.get("link") if isinstance(g, Mapping) else None for g in (dp, tp))
    if not (_link(dp) and _link(tp)) or dp["level"] != tp["level"]:
        return None
    if dp["bus_bytes_per_s"] == tp["bus_bytes_per_s"]:
        return None       # one bandwidth: one ceiling serves both, as a newer file has it
    memory = roof.get("memory")
    if not isinstance(memory, list) or not isinstance(data.get("kernels"), list):
        return None
    levels = [m.get("level") for m in memory if isinstance(m, Mapping)]
    if levels.count(dp["level"]) != 1 or f"{dp['level']} ({RING})" in levels:
        return None
    return dp, tp


def _link(link: object) -> bool:
    """Whether `link` is a train section's link with a level and a bandwidth."""
    if not isinstance(link, Mapping) or not isinstance(link.get("level"), str):
        return False
    bw = link.get("bus_bytes_per_s")
    return (isinstance(bw, (int, float)) and not isinstance(bw, bool) and math.isfinite(bw)
            and bw > 0)


def _ring_row(k: object, level: str) -> bool:
    """Whether kernel dict k is the --dp ring's communication row on `level`."""
    if not isinstance(k, Mapping):
        return False
    meta, nbytes = k.get("meta"), k.get("bytes")
    return (isinstance(meta, Mapping) and meta.get("train_part") == "comm"
            and not meta.get("tensor_parallel") and isinstance(nbytes, Mapping)
            and list(nbytes) == [level])


def _on_ring(k: Mapping, level: str, ring_level: str, note: str) -> dict:
    """The ring's row with its bytes on the ring's level and the note after its own."""
    meta = dict(k["meta"])
    said = meta.get("note")
    meta["note"] = f"{said}; {note}" if isinstance(said, str) and said else note
    return {**k, "bytes": {ring_level: k["bytes"][level]}, "meta": meta}


def _gbs(bw: object) -> str:
    from ..units import si

    ok = isinstance(bw, (int, float)) and not isinstance(bw, bool)
    return si(float(bw), "B/s") if ok else "?"

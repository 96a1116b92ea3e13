"""`rooflab compare` of two untimed runs (`rooflab llm --json`, `rooflab train --json`):
each kernel's roofline floor and the step's, before and after, from the files' analysis
floors (a train --dp step's exposed communication counted), and the communication row named
as the terminal shows it. Split from cli/compare.py."""

from __future__ import annotations


def untimed_floors(path: str) -> tuple[dict[str, float], str, float] | None:
    """(work floor by kernel, step name, step floor) of an untimed `rooflab llm --json`
    file: its analysis[].floor_s (the roofline floor of each kernel on the file's roof),
    which add up to the tabled step's floor (llm.decode or llm.prefill floor_s). None for
    any other input, or a file whose kernels carry seconds (then the times compare)."""
    from ..model.document_parts import analysis_floors, llm_part
    from .compare_train import json_doc

    doc = json_doc(path)
    if doc is None:
        return None
    # the llm block and the floors checked as choose and whatif check them: a negative
    # floor_s made a "-993 ms" step, a NaN one a step without a floor, without a word
    llm = llm_part(doc, path)
    # a `rooflab train --json` step: its analysis floors add up to train.floor_s (v3-F4)
    train = isinstance(doc, dict) and isinstance(doc.get("train"), dict)
    rows = doc.get("analysis") if llm is not None or train else None
    if not isinstance(rows, list) or not rows or any(
            not isinstance(r, dict) or r.get("seconds") for r in rows):
        return None
    floors: dict[str, float] = {}
    for name, floor in analysis_floors(doc, path):
        if floor is None:
            return None
        floors[name] = floors.get(name, 0.0) + floor
    # a train --dp step counts its communication's exposed part, as train's floor does
    from .compare_train import comm_exposed, step_floor

    step = step_floor(floors, comm_exposed(path))
    # the analysis is the decode step's, or the prefill's under --phase prefill
    # `or {}`: a part present as null (which the validator lets by) gave None.get
    phases = {name: (llm.get(key) or {}).get("floor_s") for key, name in
              (("decode", "TPOT floor"), ("prefill", "TTFT floor"))} if llm else {}
    known = {n: v for n, v in phases.items() if isinstance(v, (int, float))}
    label = (min(known, key=lambda n: abs(known[n] - step)) if known
             else "train floor" if train else "step floor")
    return floors, label, step


def step_floors(cmp, before: str, after: str):
    """(kernel FloorMoves, step FloorMove) when both runs are untimed llm documents and no
    matched kernel has a time; None otherwise (timed runs compare their seconds)."""
    if cmp.timed:
        return None
    b, a = untimed_floors(before), untimed_floors(after)
    if b is None or a is None:
        return None
    from ..model.compare_floors import FloorMove, floor_moves

    name = b[1] if b[1] == a[1] else f"{b[1]} -> {a[1]}"
    return floor_moves(cmp, b[0], a[0]), FloorMove(f"step ({name})", b[2], a[2])


def comm_labelled(floors, before: str, after: str):
    """The floors as the terminal table shows them: a train --dp file's communication row
    named as the whole of it, with the exposed part the step row counts (s29 gA)."""
    from dataclasses import replace

    from .compare_train import comm_exposed, comm_label

    b, a = comm_exposed(before), comm_exposed(after)
    if floors is None or not (b or a):
        return floors
    moves = tuple(replace(m, name=comm_label(m.name, b.get(m.name), a.get(m.name)))
                  if m.name in b or m.name in a else m for m in floors[0])
    return moves, replace(floors[1], name=f"{floors[1].name[:-1]}: kernels + exposed "
                                          f"communication)")

"""`rooflab report` of a `rooflab llm --tp/--pp --tpot-ms` file: the measured step's link
term. `rooflab llm` judges the step against its floor with the all-reduces and stage
transfers (workloads.llm.study._on_links, which writes them on the step's meta as link_s
and link); the roof holds the kernels alone, so the report's floor for the step leaves the
link out, and its headroom and gain count the link's time as the kernels'. One note per
such step says both floors (with `--pp 2 --pp-link-latency 2000`: 41.1 ms of kernels, 43.1
ms with the transfer)."""

from __future__ import annotations


def link_notes(analysis) -> tuple[str, ...]:
    """'decode step b=1 (measured): `rooflab llm` judges it against the floor with 1 stage
    transfer, 43.1 ms (1.16x); this roof's floor is the kernels' alone, 41.1 ms (1.22x):
    the 2 ms on the link is in its headroom and gain here, not the kernels'' for each
    measured whole step whose meta carries a link term that moves its headroom as printed
    (none for one device)."""
    from ..sides import times_text
    from ..units import fmt_seconds

    out = []
    for k in analysis.kernels:
        link, words = k.meta.get("link_s"), k.meta.get("link")
        points = analysis.points_of(k)
        if not (isinstance(link, (int, float)) and link > 0 and words and points
                and k.seconds):
            continue
        floor = max(p.floor_s for p in points)
        whole, alone = times_text(k.seconds / (floor + link)), times_text(k.seconds / floor)
        if whole == alone:    # NVLink's 36 ns transfer under a 41 ms step: nothing to say
            continue
        out.append(f"{k.name}: `rooflab llm` judges it against the floor with {words}, "
                   f"{fmt_seconds(floor + link)} ({whole}); "
                   f"this roof's floor is the kernels' alone, {fmt_seconds(floor)} "
                   f"({alone}): the {fmt_seconds(link)} on the link "
                   f"is in its headroom and gain here, not the kernels'")
    return tuple(out)

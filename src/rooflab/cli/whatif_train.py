"""`rooflab whatif` and `rooflab choose` on a `rooflab train --dp --json` file: the link its
communication row runs on, on each device the verb times it (the link `rooflab train --on
DEVICE --dp N` picks, train_dp_words.dp_link), and the words that say the step floor counts
the row's exposed part (model/train_comm.py, model/whatif_comm.py).

A catalog roof has no link ceiling: judged there, the row's bytes were set against DRAM
(choose: 7 ms for llama-2-7b's 52.4 ms of NVLink) or had no floor at all (whatif --on H100:
no total), so the link is added to the roof, as `rooflab train` writes it into its file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..errors import RooflabError
from ..model.comm_link import Link
from ..model.kernel import Kernel
from ..model.train_comm import is_comm


def comm_devices(kernels: Sequence[Kernel]) -> int | None:
    """The data-parallel devices of the file's communication row (meta devices), None
    where the kernels hold no such row."""
    for k in kernels:
        if is_comm(k):
            n = k.meta.get("devices")
            return int(n) if isinstance(n, (int, float)) and n >= 2 else 2
    return None


def device_link(spec: str, n: int) -> Link | None:
    """The ring link `rooflab train --on SPEC --dp N` runs its collectives on (the catalog
    device's, past one node the network, or a profile's link ceiling); None where there is
    none (a profile without a link ceiling, a device without an interconnect)."""
    from ..hardware.resolve import split_threads
    from ..ingest.profile_checks import split_boost
    from .train_dp_words import dp_link

    spec = split_boost(spec)[0]   # 'h200@boost': the device's link, whatever its clock
    if split_threads(spec) is not None:
        return None
    try:
        return dp_link(spec, n, None)
    except RooflabError:
        return None


def relevel(k: Kernel, level: str) -> Kernel:
    """A communication row with its bytes on `level` (an H100 file's NVLink bytes on an
    MI300X's xGMI); any other kernel as it is."""
    if not is_comm(k) or list(k.bytes) == [level]:
        return k
    return k.with_(bytes={level: sum(k.bytes.values())})


def for_whatif(inputs, on: str | None):
    """whatif's inputs with a train file's communication row on the --on device's link
    where the judging roof has none for it (a catalog name: the link train picks for it);
    without --on the file's own roof holds the link train wrote. Other inputs: as given."""
    n = comm_devices(inputs.kernels)
    if n is None or on is None:
        return inputs
    level = next((lv for k in inputs.kernels if is_comm(k) for lv in k.bytes), None)
    if level is None or inputs.roof.find_memory(level) is not None:
        return inputs
    link = device_link(on, n)
    if link is None:
        return inputs   # the row has no ceiling: whatif says so, and gives no total
    from ..workloads.llm.train_dp import link_roof

    # the link as a ceiling of every --on roof (the judging one, and the basis --hardware
    # takes efficiencies against), as train writes it into its own file's roof
    roofs = tuple(link_roof(r, link) for r in inputs.roofs)
    return replace(inputs, roofs=roofs,
                   kernels=tuple(relevel(k, link.level) for k in inputs.kernels))


def hardware_change(kernels: Sequence[Kernel], targets: tuple, hardware: str):
    """--hardware on a train file: (target roofs with the device's link, the change that
    moves the communication row onto it); (targets, None) for other kernels."""
    n = comm_devices(kernels)
    link = device_link(hardware, n) if n is not None else None
    if link is None:
        return targets, None
    from ..workloads.llm.train_dp import link_roof

    return tuple(link_roof(t, link) for t in targets), lambda k: relevel(k, link.level)


def comm_label(name: str, pair) -> str:
    """The table's name for a communication row: its times are the whole of it, the step
    counts the exposed part, before -> after (the line under the floors says so; short, so
    the name fits its column whole in a 160-column log)."""
    from ..units import fmt_seconds

    said = " -> ".join(fmt_seconds(e.exposed_s) if e is not None else "-" for e in pair)
    return f"{name} (whole; {said} exposed)"


def comm_lines(result) -> list[str]:
    """The line under whatif's floors for a train --dp file: what the totals count of the
    communication row, with the older file's held share said."""
    from ..model.whatif_comm import comm_exposures, held_share
    from ..units import fmt_seconds

    exposures = comm_exposures(result)
    if not exposures:
        return []
    names = {id(old): old.name for old, _ in result.moves}
    names.update({id(k): k.name for k in result.before.kernels})
    parts = []
    for key, (b, a) in exposures.items():
        if b is None or a is None:
            continue
        parts.append(f"{names[key]}: {fmt_seconds(b.exposed_s)} -> {fmt_seconds(a.exposed_s)}"
                     f" of its whole {fmt_seconds(b.comm_s)} -> {fmt_seconds(a.comm_s)}")
    if not parts:
        return []
    line = ("a training step's communication counts its exposed part in the floors above, "
            "as `rooflab train`'s step floor adds it (the rest runs under the backward): "
            + "; ".join(parts))
    if held_share(exposures):
        line += ("; the file lists no collectives (a JSON or CSV from before they were "
                 "written), so its exposed share is kept (`rooflab train ... -o FILE.json` "
                 "or `.csv` writes them, to time the overlap again)")
    return [line]

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
from ..model.train_comm import is_comm, on_link


def comm_devices(kernels: Sequence[Kernel]) -> int | None:
    """The data-parallel devices of the file's communication row (meta devices), None
    where the kernels hold no such row."""
    for k in kernels:
        if is_comm(k):
            n = k.meta.get("devices")
            return int(n) if isinstance(n, (int, float)) and n >= 2 else 2
    return None


def file_tp(kernels: Sequence[Kernel]) -> int:
    """The tensor-parallel degree of a train file (its --tp row's meta tensor_parallel), 1
    where it has none."""
    for k in kernels:
        tp = k.meta.get("tensor_parallel") if is_comm(k) else None
        if isinstance(tp, int) and not isinstance(tp, bool) and tp > 1:
            return tp
    return 1


def row_devices(k: Kernel, tp: int) -> tuple[int, int]:
    """(ring devices, tp) a communication row is timed with: a --tp row's group alone, a
    --dp row's ring of meta devices under the file's --tp (train_dp_words.train_ring)."""
    n = k.meta.get("devices")
    n = int(n) if isinstance(n, (int, float)) and n >= 2 else 2
    return (n, 1) if k.meta.get("tensor_parallel") else (n, tp)


def device_link(spec: str, n: int, tp: int = 1) -> Link | None:
    """The ring link `rooflab train --on SPEC --dp N [--tp M]` runs its collectives on (the
    catalog device's, past one node the network, shared by the node's M rings; or a
    profile's link ceiling); None where there is none (a profile without a link ceiling,
    a device without an interconnect)."""
    from ..hardware.resolve import split_threads
    from ..ingest.profile_checks import split_boost
    from .train_dp_words import dp_link

    spec = split_boost(spec)[0]   # 'h200@boost': the device's link, whatever its clock
    if split_threads(spec) is not None:
        return None
    try:
        return dp_link(spec, n, None, tp)
    except RooflabError:
        return None


def relevel(k: Kernel, level: str) -> Kernel:
    """A communication row with its bytes on `level` (an H100 file's NVLink bytes on an
    MI300X's xGMI); any other kernel as it is."""
    if not is_comm(k) or list(k.bytes) == [level]:
        return k
    return k.with_(bytes={level: sum(k.bytes.values())})


def row_links(kernels: Sequence[Kernel], spec: str, roof=None, ranks=None
              ) -> dict[int, Link]:
    """{id(row): the link `rooflab train --on SPEC` times it on} for each communication
    row whose level `roof` lacks (every row without a roof); a row without a link is left
    out. Two links on one level at different bandwidths (a --dp ring past the node and a
    --tp group's, or two meshes' counts): the --dp row's level is named apart. `ranks`:
    the file's setup, whose --dp as given picks the link as choose picks it
    (choose_train_comm.ring_of: `train --on MI250X --dp 1` rings its 2 dies on their die
    links, 67.4 ms for llama-2-7b, not on a ring of 2 packages' 270 ms; s35 A)."""
    from .choose_train_comm import ring_of

    tp, out = file_tp(kernels), {}
    for k in kernels:
        if not is_comm(k) or (roof is not None and all(roof.find_memory(lv) is not None
                                                      for lv in k.bytes)):
            continue
        link = device_link(spec, *ring_of(k, tp, ranks))
        if link is not None:
            out[id(k)] = link
    # the --dp rows' (not whichever came second: the file lists the ring's row first, and
    # the TP group's link was named "(--dp ring)"; s33 G)
    dp_rows = {id(k) for k in kernels if not k.meta.get("tensor_parallel")}
    return {key: replace(lk, level=f"{lk.level} (--dp ring)")
            if key in dp_rows and any(o.level == lk.level and o != lk for o in out.values())
            else lk for key, lk in out.items()}


def with_links(roofs: tuple, kernels: Sequence[Kernel], links: dict[int, Link]):
    """(the roofs with each row's link as a ceiling, the kernels with each row's bytes on
    its link's level), as train writes them into its own file; `links` as apart_links
    names them."""
    from ..workloads.llm.train_dp import link_roof

    groups = _groups(kernels)
    for key, link in links.items():     # each ceiling's method names its group (link_roof)
        roofs = tuple(link_roof(r, link, groups.get(key, "--dp ring")) for r in roofs)
    return roofs, tuple(relevel(k, links[id(k)].level) if id(k) in links else k
                        for k in kernels)


def _groups(kernels: Sequence[Kernel]) -> dict[int, str]:
    return {id(k): "--tp group" if k.meta.get("tensor_parallel") else "--dp ring"
            for k in kernels}


def apart_links(roofs: tuple, kernels: Sequence[Kernel], links: dict[int, Link]
                ) -> dict[int, Link]:
    """`links` ({id(row): link}, row_links'), each named for its group ("loopback (--dp
    ring)") where a roof has its level at another bandwidth (train_dp.own_link, as `train
    --on` names it), so that with_links gives the row a ceiling of its own: `whatif
    --hardware` a cluster profile timed the row at its 3.98 GB/s send/recv ceiling, 830
    ms where `train --on` that profile says 3.38 s (s38 C)."""
    from ..workloads.llm.train_dp import own_link

    groups = _groups(kernels)
    return {key: own_link(roofs, lk, groups.get(key, "--dp ring"))
            for key, lk in links.items()}


def train_file_ranks(files: Sequence[str], kernels: Sequence[Kernel]):
    """The train file's setup (choose_train_ranks.file_ranks: --dp, --tp as given, its
    device's dies) where the kernels hold a communication row; None otherwise (no file
    read again) or where no .json input has one."""
    if comm_devices(kernels) is None:
        return None
    from ..files import load_json
    from .choose_train_ranks import file_ranks

    docs = {}
    for f in files:
        if str(f).lower().endswith(".json"):
            try:
                docs[f] = load_json(f)
            except RooflabError:
                continue
    return file_ranks(files, docs)


def rering(k: Kernel, ranks, spec: str) -> Kernel | None:
    """Row k as `rooflab train --on SPEC` sends it on its own ring (choose_train_ranks.
    row_on, as choose re-rings it: an MI250X file's 8-rank ring of --dp 4 is 4 H100s', 2 x
    3/4 x 13.5 GB = 20.2 GB, not 2 x 7/8 x 13.5 = 23.6 GB); None where that ring is one
    device; any other kernel, or no file setup (ranks None), as it is."""
    if ranks is None or not is_comm(k):
        return k
    from ..ingest.profile_checks import split_boost
    from .choose_dies import die_count
    from .choose_train_ranks import row_on

    return row_on(k, ranks, die_count(split_boost(spec)[0]))


def own_work(files: Sequence[str], spec: str, ranks):
    """(a change: each work kernel of the file's rank -> the same kernel of `spec`'s own
    rank, the note that says so) under --zero/--tp where the device's ranks are not the
    file's (choose_train_own.device_rank, as choose ranks it: llama-2-7b `train --on
    MI250X --dp 4 --zero 1` steps a 1/8 optimizer shard, `--on H100` a 1/4 one, 233 ms
    where the file's rank read 226 ms); (None, "") otherwise. Communication rows stay the
    file's, re-ringed (rering)."""
    from .choose_train_own import device_rank

    own = device_rank(files, spec, ranks) if files else None
    if own is None:
        return None, ""
    by_name = {k.name: k for k in own.kernels}
    mine, theirs = ranks.ranks(ranks.dies), ranks.ranks(_dies(spec))
    said = (f"the work kernels on {spec} are its own rank's, recomputed from the file's "
            f"train.setup as `rooflab train ... --on {spec}{ranks.flags()}` runs it "
            f"({theirs[0]} data- x {theirs[1]} tensor-parallel ranks there, {mine[0]} x "
            f"{mine[1]} in the file)")
    return (lambda k: k if is_comm(k) else by_name.get(k.name, k)), said


def _dies(spec: str) -> int:
    from ..ingest.profile_checks import split_boost
    from .choose_dies import die_count

    return die_count(split_boost(spec)[0])


def for_whatif(inputs, on: str | None, ranks=None, files: Sequence[str] = ()):
    """whatif's inputs with a train file's communication rows re-ringed for the --on
    device (rering, from the file's `ranks`) and on its links where the judging roof has
    none for them (a catalog name: the links train picks for it, the --dp ring's under the
    file's --tp); without --on the file's own roof holds the links train wrote. Under
    --zero/--tp the work is the --on device's own rank (own_work, from the train file
    among `files`). Other inputs: as given. With the `ranks` the kernels now run at (the
    --on device's dies: --hardware re-rings from them, not from the file's device's)."""
    if comm_devices(inputs.kernels) is None or on is None:
        return inputs, ranks
    inputs = _on_rank(inputs, on, ranks, files)
    return inputs, None if ranks is None else replace(ranks, dies=_dies(on))


def _on_rank(inputs, on: str, ranks, files: Sequence[str]):
    """for_whatif's inputs: the --on device's own rank, rows and links."""
    mine, said = own_work(files, on, ranks)
    if mine is not None:
        inputs = replace(inputs, kernels=tuple(mine(k) for k in inputs.kernels),
                         notes=(*inputs.notes, said))
    # a ring of one device there (an MI250X --dp 1 file --on H100): no row, and said
    kept, alone = one_device_rows(inputs.kernels, on, ranks, both=False)
    inputs = replace(inputs, kernels=tuple(rering(k, ranks, on) for k in kept),
                     notes=(*inputs.notes, *([alone] if alone else [])))
    links = row_links(inputs.kernels, on, inputs.roof, ranks)
    if not links:
        return inputs   # no row lacks a ceiling, or none has a link: whatif says so
    # the links as ceilings of every --on roof (the judging one, and the basis --hardware
    # takes efficiencies against), as train writes them into its own file's roof
    links = apart_links(inputs.roofs, inputs.kernels, links)
    # each row pays that link's hops, as `train --on` the device counts them (on_link; s38
    # C: `--on` a cluster profile kept an H100 file's none, 3.3 s where train says 3.38 s)
    kernels = tuple(on_link(k, links[id(k)].bus_bytes_per_s, links[id(k)].hop_latency_s,
                            _ring_ranks(k, ranks, on)) if id(k) in links else k
                    for k in inputs.kernels)
    links = {id(new): links[id(old)] for old, new in zip(inputs.kernels, kernels, strict=True)
             if id(old) in links}
    roofs, kernels = with_links(inputs.roofs, kernels, links)
    return replace(inputs, roofs=roofs, kernels=kernels)


def one_device_rows(kernels: Sequence[Kernel], hardware: str, ranks=None,
                    both: bool = True) -> tuple[Sequence[Kernel], str]:
    """A train file's communication rows whose ring is one device on `hardware` (an
    MI250X --dp 1 file, its 2 dies a ring, on one H100: rering None): (the kernels less
    those rows, the note that says so), (kernels, "") where none is. --on that device
    leaves them out (for_whatif, both False), and --hardware on both sides (both): a
    kernel cannot move onto nothing, and kept, it was timed on the H100's NVLink (29.9 ms)
    where `rooflab train --on H100` sends none (s35 A)."""
    if ranks is None or comm_devices(kernels) is None:
        return kernels, ""
    gone = [k for k in kernels if rering(k, ranks, hardware) is None]
    if not gone:
        return kernels, ""
    from ..units import fmt_seconds

    said = ", ".join(k.name + (f" ({fmt_seconds(e)} exposed in the file)"
                               if isinstance(e := k.meta.get("exposed_s"), (int, float))
                               else "") for k in gone)
    why = (f"`rooflab train ... --on {hardware}{ranks.flags()}` is one device, with no "
           f"collective to send")
    return ([k for k in kernels if not any(k is g for g in gone)],
            f"{said} left out on both sides: {why} (as --on {hardware} leaves it out); "
            f"the floor before is the file's less it" if both else f"{said} left out: {why}")


def hardware_change(kernels: Sequence[Kernel], targets: tuple, hardware: str, ranks=None,
                    files: Sequence[str] = ()):
    """--hardware on a train file: (target roofs with the device's links, the change that
    moves each communication row onto its link, re-ringed for the device from the file's
    `ranks` (rering; a ring of one device keeps the row as it is), and under --zero/--tp
    each work kernel onto the device's own rank's (own_work), the note that says so);
    (targets, None, "") for other kernels."""
    if comm_devices(kernels) is None:
        return targets, None, ""
    mine, said = own_work(files, hardware, ranks)
    mine = mine or (lambda k: k)
    links = apart_links(targets, kernels, row_links(kernels, hardware, ranks=ranks))
    by_name = {k.name: links[id(k)] for k in kernels if id(k) in links}
    targets = with_links(targets, kernels, links)[0] if links else targets
    said = "; ".join(n for n in (said, *(_unpriced(k, by_name[k.name], hardware)
                                         for k in kernels if k.name in by_name)) if n)

    def change(k: Kernel) -> Kernel:
        if k.name not in by_name:
            return mine(k)
        link = by_name[k.name]
        moved = rering(k, ranks, hardware) or k
        # the hop latency is the target link's (model/train_comm.on_link), as choose's
        return relevel(on_link(moved, link.bus_bytes_per_s, link.hop_latency_s,
                               _ring_ranks(k, ranks, hardware)), link.level)

    return targets, change, said


def _unpriced(k: Kernel, link: Link, hardware: str) -> str:
    """The note on row k's ZeRO stages whose hops on `link` are not priced
    (train_comm.unpriced_stages: a file from before their hop_rounds, with no hop latency
    to scale); "" where each stage is."""
    from ..model.train_comm import unpriced_stages
    from ..units import fmt_seconds

    keys = unpriced_stages(k, link.hop_latency_s)
    if not keys:
        return ""
    stages = ", ".join("DDP" if key == "0" else f"ZeRO-{key}" for key in keys)
    return (f"{k.name}: the file's by_zero gives no hop_rounds (a file from before session "
            f"37) and it had no hop latency to scale, so its {stages} "
            f"times (what `rooflab report` prices a --zero move with) pay none of "
            f"{hardware}'s {fmt_seconds(link.hop_latency_s)} per ring hop; `rooflab train "
            f"... -o` writes them")


def _ring_ranks(k: Kernel, ranks, spec: str) -> int | None:
    """The ranks of row k's ring on device `spec` (choose_train_ranks.rings); None without
    the file's setup (the row's meta devices)."""
    if ranks is None:
        return None
    from ..ingest.profile_checks import split_boost
    from .choose_dies import die_count
    from .choose_train_ranks import rings

    return rings(k, ranks, die_count(split_boost(spec)[0]))[1]


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

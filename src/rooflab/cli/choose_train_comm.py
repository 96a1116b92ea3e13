"""`rooflab choose` on a `rooflab train --dp N --json` file: its communication row timed on
each candidate's own GPU-GPU link, the one `rooflab train --on DEVICE --dp N` picks
(cli/whatif_train.device_link), and only the part the compute leaves exposed added to the
step's time (model/train_comm.exposure, with that device's forward and backward as the
windows), so each row's work floor is the step floor `rooflab train --on DEVICE` prints.

s30: a catalog roof has no link ceiling, so the row's 23.6 GB were judged against DRAM
(7.04 ms on an H100 for its 52.4 ms of NVLink, 26.3 ms of it exposed): H100 211 ms where
train says 230 ms. A `--dp M --tp N` file's --dp row runs on the ring of all M x N devices
(past a node, its 1/N share of the node's network), as train times it (train_ring)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..model.comm_link import Link
from ..model.kernel import Kernel
from ..model.train_comm import Exposure, exposure, is_comm, on_link, part_windows

PLUS = " + exposed comm"      # the table's word for what the times add


@dataclass(frozen=True)
class DeviceComm:
    """A train file's communication on one candidate: the link, and its whole and exposed
    time there."""

    link: Link
    exposure: Exposure
    row: str = ""      # the communication row's name (comm.allreduce, comm.tp)
    # bytes each device sends on this candidate's ring, its ranks, and whether that ring
    # is the file's (choose_train_ranks: an MI250X file's 8 ranks are 4 H100s)
    sent: float = 0.0
    ranks: int = 0
    refit: bool = False


def split_comm(kernels: Sequence[Kernel]) -> tuple[list[Kernel], list[Kernel]]:
    """(the step's kernels, its communication rows): the rows are timed apart, on each
    device's link, not as kernels of the roof."""
    return ([k for k in kernels if not is_comm(k)], [k for k in kernels if is_comm(k)])


def candidate_link(name: str, roof, n: int, tp: int = 1) -> Link | None:
    """The link a candidate runs the --dp ring on: a catalog device's as `rooflab train
    --on NAME --dp N --tp M` picks it (train_dp_words.train_ring), else the roof's own
    link ceiling (a profile that measured one); None where it has neither."""
    from ..errors import RooflabError
    from ..hardware.catalog import lookup
    from ..model.comm_link import link_from_roof
    from .whatif_train import device_link

    try:
        lookup(name)
    except RooflabError:
        try:
            return link_from_roof(roof)
        except RooflabError:
            return None
    return device_link(name, n, tp)


def device_comms(comm: Sequence[Kernel], work: Sequence[Kernel], first, cands,
                 ranks=None) -> dict[str, tuple[DeviceComm, ...]]:
    """{candidate name: each communication row on its link}, from a first ranking of the
    work (`first`: its per-kernel work floors give the windows); a candidate without a
    link is left out (ranked without the communication, said under the table). Each row
    is sent on the candidate's own ring (choose_train_ranks.row_on, from the file's
    `ranks`): () where that ring is one device."""
    from .choose_dies import die_count
    from .choose_train_ranks import rings, row_on
    from .whatif_train import file_tp

    tp = file_tp(comm)
    roofs = {name: roof for name, roof, _ in cands}
    out: dict[str, tuple[DeviceComm, ...]] = {}
    for c in first:
        dies = die_count(c.name)
        rows = [(k, r) for k in comm if (r := row_on(k, ranks, dies)) is not None]
        # each row on the ring of its own devices (a --tp row's group, a --dp row's ring
        # on its share of the node's network under the file's --tp, as train times it)
        links = [candidate_link(c.name, roofs.get(c.name, c.roof), *ring_of(k, tp, ranks))
                 for k, _ in rows]
        if any(link is None for link in links):
            continue
        floors = {t.kernel: t.work_floor_s for t in c.per_kernel}
        windows = part_windows((k, floors.get(k.name)) for k in work)
        # each row's hop latency that of the link it runs on, not the file's (on_link)
        out[c.name] = tuple(
            DeviceComm(link, exposure(on_link(r, link.bus_bytes_per_s, link.hop_latency_s,
                                              rings(k, ranks, dies)[1]),
                                      sum(r.bytes.values()) / link.bus_bytes_per_s,
                                      windows), k.name, sent=sum(r.bytes.values()),
                       ranks=rings(k, ranks, dies)[1], refit=r is not k)
            for (k, r), link in zip(rows, links, strict=True))
    return out


def ring_of(k: Kernel, tp: int, ranks) -> tuple[int, int]:
    """(devices, tp) the link of row k is picked for: a --dp row's --dp and --tp as the
    file's setup gives them (packages: `train --on MI250X --dp 1` rings its 2 dies on
    their die links, not a ring of 2 packages), else row_devices'."""
    from .whatif_train import row_devices

    if ranks is not None and not k.meta.get("tensor_parallel"):
        return ranks.dp, ranks.tp
    return row_devices(k, tp)


def _devices(k: Kernel, default: int) -> int:
    """The devices a communication row's ring runs over (meta devices; a `train --tp`
    row's is its group)."""
    n = k.meta.get("devices")
    return int(n) if isinstance(n, (int, float)) and n >= 2 else default


def _group_words(comm: Sequence[Kernel], n: int) -> str:
    """'--dp 8' for a data-parallel file's rows, '--tp 8' for a tensor-parallel one's,
    both where it has both."""
    tp = next((k.meta.get("tensor_parallel") for k in comm
               if k.meta.get("tensor_parallel")), None)
    dp = [k for k in comm if not k.meta.get("tensor_parallel")]
    words = ([f"--dp {_devices(dp[0], n)}"] if dp else []) + ([f"--tp {tp}"] if tp else [])
    return " ".join(words)


def _row_words(ds: Sequence[DeviceComm]) -> str:
    """'22.6 ms on NVLink 450 GB/s' for one link; each row's own time, link and exposed
    part where a --dp --tp file's rows run on two (the ring past the node, the group in
    it), so the --dp row reads as train's `communication` line."""
    from ..units import fmt_seconds, si

    def on(d: DeviceComm) -> str:
        return f"{d.link.level} {si(d.link.bus_bytes_per_s, 'B/s')}"

    whole = fmt_seconds(sum(d.exposure.comm_s for d in ds))
    if len({on(d) for d in ds}) < 2:
        return f"{whole} on {on(ds[0])}"
    return whole + " (" + "; ".join(
        f"{d.row} {fmt_seconds(d.exposure.comm_s)} on {on(d)}, "
        f"{fmt_seconds(d.exposure.exposed_s)} exposed" for d in ds) + ")"


def _file_rings(ranks) -> list[int]:
    """The file's rings' ranks (--dp's, --tp's) of more than one rank."""
    return [n for n in ranks.ranks(ranks.dies) if n > 1]


def _ring_words(ds: Sequence[DeviceComm]) -> str:
    """' (20.2 GB sent per device, a ring of 4 ranks)' where the device's ring is not the
    file's (choose_train_ranks), '' where it is."""
    from ..units import si

    if not any(d.refit for d in ds):
        return ""
    return (f" ({si(sum(d.sent for d in ds), 'B')} sent per device, a ring of "
            f"{' and '.join(str(d.ranks) for d in ds)} ranks, as `rooflab train --on` it)")


def _as_train(ds: Sequence[DeviceComm], ranks, own: bool = False) -> str:
    """'as train prints it', or where the device's ranks shard the step otherwise than the
    file's (--zero, --tp: choose_train_ranks.rank_notes) and its own rank could not be
    recomputed (`own`: choose_train_own) what it is instead."""
    if own:
        return "its own rank's kernels and memory, from the file's train.setup: as train " \
               "prints it"
    if ranks is not None and (ranks.zero or ranks.tp > 1) and any(d.refit for d in ds):
        return "the file's ranks' compute: train's own differs, the note below"
    return "as train prints it"


def exposed_times(comms: Mapping[str, tuple[DeviceComm, ...]]) -> dict[str, float]:
    """{candidate: seconds the step waits for its communication}: what rank() adds."""
    return {name: sum(d.exposure.exposed_s for d in ds) for name, ds in comms.items()}


def comm_fields(comms: Mapping[str, tuple[DeviceComm, ...]], choice) -> dict:
    """--json's per-device keys: the link and the communication's whole and exposed
    time on it, and the step floor (work floor + exposed) `rooflab train --on` prints;
    None for a device without a link."""
    ds = comms.get(choice.name)
    if ds == ():   # its ring is one device (choose_train_ranks): no collective
        return {"dp_link": None, "dp_comm_s": 0.0, "dp_exposed_s": 0.0,
                "dp_step_floor_s": choice.floor_s, "dp_sent_bytes": 0.0, "dp_ring_ranks": 1}
    if not ds:
        return {"dp_link": None, "dp_comm_s": None, "dp_exposed_s": None,
                "dp_step_floor_s": None}
    out = {"dp_link": _link_dict(ds[0].link),
           "dp_comm_s": sum(d.exposure.comm_s for d in ds),
           "dp_exposed_s": sum(d.exposure.exposed_s for d in ds),
           "dp_step_floor_s": choice.floor_s,
           # what this device sends on its own ring (choose_train_ranks), and its ranks
           "dp_sent_bytes": sum(d.sent for d in ds), "dp_ring_ranks": ds[0].ranks}
    if len(ds) > 1:   # a --dp --tp file: each row on its own link
        out["comm_rows"] = [{"name": d.row, "link": _link_dict(d.link), "comm_s": d.exposure.comm_s,
                             "exposed_s": d.exposure.exposed_s, "sent_bytes": d.sent,
                             "ring_ranks": d.ranks} for d in ds]
    return out


def _link_dict(lk: Link) -> dict:
    return {"level": lk.level, "bus_bytes_per_s": lk.bus_bytes_per_s, "source": lk.source}


def comm_lines(comm: Sequence[Kernel], comms: Mapping[str, tuple[DeviceComm, ...]],
               shown, ranks=None, recomputed=frozenset()) -> list[str]:
    """The lines under the table: each shown device's link, the communication's whole
    time there and the exposed part in its times, and the devices without a link;
    `recomputed`: the devices ranked on their own rank (choose_train_own)."""
    from ..units import fmt_seconds, si
    from .whatif_train import comm_devices

    n = comm_devices(comm) or 2
    sent = sum(sum(k.bytes.values()) for k in comm)
    # --dp and --tp as given (packages on an MI250X: choose_train_ranks), else the rows'
    group = ranks.flags().strip() if ranks is not None else _group_words(comm, n)
    refit = any(ds == () or any(d.refit for d in ds) for ds in comms.values())
    own = (f" on the file's ring of {' and '.join(map(str, _file_rings(ranks)))} ranks; a "
           f"device of other ranks sends what its own ring does, said in its line"
           if refit and ranks is not None else "")
    out = [f"with {group}'s collectives ({', '.join(k.name for k in comm)}: "
           f"{si(sent, 'B')} sent per device{own}) on each device's own link, as `rooflab "
           f"train --on DEVICE {group}` picks it (bandwidth only); the part its compute "
           f"leaves exposed is in the table's times, which are `rooflab train`'s step floor:"]
    none = []
    for c in shown:
        ds = comms.get(c.name)
        if ds == ():
            out.append(f"  {c.name}: no collectives: `rooflab train --on` it at {group} is "
                       f"one device, a ring of one rank; step floor {fmt_seconds(c.floor_s)}")
            continue
        if not ds:
            none.append(c.name)
            continue
        out.append(f"  {c.name}{_ring_words(ds)}: {_row_words(ds)}, "
                   f"{fmt_seconds(c.link_s)} exposed: step "
                   f"floor {fmt_seconds(c.seconds)} compute + {fmt_seconds(c.link_s)} = "
                   f"{fmt_seconds(c.floor_s)} ({_as_train(ds, ranks, c.name in recomputed)}), "
                   f"{fmt_seconds(c.ranked_s)} with launches")
    if any(d.exposure.share_held for ds in comms.values() for d in ds):
        out.append("  note: the file lists no collectives (a train CSV, or a file from "
                   "before they were written), so each device keeps its exposed share "
                   "(`rooflab train ... --json` writes them, to time the overlap on each "
                   "device)")
    if none:
        out.append(f"  no GPU-GPU link in the catalog or the roof: {', '.join(none)}: "
                   f"ranked without the communication (a lower bound that leaves it out)")
    return out


def rank_with_comm(kernels: Sequence[Kernel], cands, links: Mapping[str, float],
                   ranks=None, own=None, **rank_kw):
    """(work kernels, comm rows, {device: its comm}, the ranking): a train --dp file's
    communication timed on each device's own link and its exposed part added as a --tp
    shard's link time is (s30: judged against DRAM, the H100 read 211 ms for train's 230).
    The windows come from a first ranking of the work alone; without comm rows, one rank.
    `ranks`: the train file's setup (choose_train_ranks.file_ranks), each row re-ringed;
    `own`: {device: choose_train_own.OwnRank}, a device ranked on its own rank's kernels
    and memory need instead of the file's (--zero/--tp on other ranks)."""
    from dataclasses import replace

    from ..model.choose import ranked

    work, comm = split_comm(kernels)
    own = own or {}
    comms: dict[str, tuple[DeviceComm, ...]] = {}
    choices: list = []
    rest = [c for c in cands if c[0] not in own]
    if rest:
        comms, got = _rank_group(work, comm, rest, links, ranks, rank_kw)
        choices += got
    for name, o in own.items():
        kw = {**rank_kw, "needs_bytes": o.need_bytes}
        mine, got = _rank_group(list(o.kernels), comm, [c for c in cands if c[0] == name],
                                links, ranks, kw)
        comms.update(mine)
        flop = sum(k.total_flop for k in o.kernels)
        choices += [replace(c, work_flop=flop) for c in got]
    return work, comm, comms, ranked(choices)


def _rank_group(work, comm, cands, links, ranks, rank_kw):
    """({device: its comm}, the ranking) of candidates that run the same `work`."""
    from ..model.choose import rank

    comms: dict[str, tuple[DeviceComm, ...]] = {}
    if comm:
        first = rank(work, cands, link_s=links, **rank_kw)
        comms = device_comms(comm, work, first, cands, ranks)
        links = {n: links.get(n, 0.0) + t for n, t in exposed_times(comms).items()}
    return comms, list(rank(work, cands, link_s=links, **rank_kw))


def add_comm_fields(data: list[dict], choices, comm, comms) -> None:
    """Each device's --json row gains comm_fields where the file has communication."""
    if comm:
        for c, d in zip(choices, data, strict=True):
            d.update(comm_fields(comms, c))


def print_comm_lines(comm, comms, shown, ranks=None, own=frozenset()) -> None:
    """comm_lines under the table, where the file has communication; then what of a
    candidate's row stays the file's ranks' (choose_train_ranks.rank_notes; none for the
    devices in `own`, whose rank was recomputed: choose_train_own)."""
    from .choose_dies import die_count
    from .choose_train_ranks import rank_notes

    lines = comm_lines(comm, comms, shown, ranks, own) if comm else []
    lines += rank_notes(ranks, [c for c in shown if c.name not in own], die_count,
                        bool(comm))
    if lines:
        print("\n".join(lines))

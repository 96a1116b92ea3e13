"""One rank of the communication probe, and rank 0's merge into a cluster profile.

`run_rank(mode)` is what every process runs (spawned by launch.py, or by torchrun): join
the process group (env:// rendezvous), sweep the collectives, probe its own device, send
its roof to rank 0. Rank 0 returns the cluster profile; the other ranks return None.

Links are named as measured: the world-wide collectives run at the speed of the slowest
link they cross, so they measure `network` when the ranks span several hosts; on one host
they measure `loopback` (gloo over 127.0.0.1 / shared memory) or the GPU link (`NVLink`
when NVML reports an active NVLink, on ROCm `xGMI` when amdsmi or the catalog entry has
one; else `PCIe`). Point-to-point pairs measure the
intra-node link and, with several hosts, the inter-node one separately.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...errors import InputError, ProbeError, require
from ...hardware.profile import MachineProfile, now_iso, profile_from_dict, profile_to_dict
from ...model.ceiling import Ceiling, Roof
from ..cpu.load import loadavg_1m, snapshot
from ..cpus import usable_cpus
from ..stats import rates_warning
from .busbw import COLLECTIVES
from .collectives import CollectiveResult, Comm, get_plan, memory_cap, sweep
from .device import rank_profile
from .fit import misfit_notes
from .rendezvous import EveryRankError, comm_timeout, group_failure, join_group, master_address

FAULT_ENV = "ROOFLAB_COMM_FAULT"        # tests only: "RANK:die" or "RANK:hang"
STAGE_ENV = "ROOFLAB_COMM_STAGE_DIR"    # where each rank writes its current stage
SOURCE = "rooflab probe --comm (torch.distributed)"


def dist_env() -> dict[str, int]:
    """rank, world, local_rank, local_world from the torchrun/launch environment."""
    try:
        world = int(os.environ["WORLD_SIZE"])
        rank = int(os.environ["RANK"])
        local = int(os.environ.get("LOCAL_RANK", rank))
        local_world = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    except (KeyError, ValueError) as exc:
        raise InputError(f"torch.distributed environment incomplete or invalid ({exc}); run "
                         f"under torchrun or through `rooflab probe --comm --nproc N`") from None
    return {"rank": rank, "world": world, "local_rank": local, "local_world": local_world}


def pick_backend(torch, local_world: int) -> tuple[str, str]:
    """NCCL when every local rank gets its own GPU, else gloo on the CPU; and why."""
    forced = os.environ.get("ROOFLAB_COMM_BACKEND")
    if forced:
        return forced, f"backend forced by ROOFLAB_COMM_BACKEND={forced}"
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if gpus >= local_world and torch.distributed.is_nccl_available():
        return "nccl", f"{gpus} GPU(s) for {local_world} local rank(s)"
    if gpus:
        return "gloo", (f"{gpus} GPU(s) for {local_world} local ranks: NCCL needs one GPU "
                        f"per rank, so gloo on the CPU was used")
    return "gloo", "no GPU visible: gloo on the CPU"


def nvlink_active(device_index: int) -> bool | None:
    """True/False from NVML; None when NVML (pynvml) is not available."""
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)
        for link in range(18):
            try:
                if pynvml.nvmlDeviceGetNvLinkState(handle, link):
                    return True
            except pynvml.NVMLError:
                break
        return False
    except Exception:
        return None


def link_level(backend: str, multi_host: bool, nvlink: bool | None, rocm: bool = False) -> str:
    """The link a measurement ran on: the network across hosts, loopback for gloo, else
    NVLink or PCIe (NVML), or on ROCm (RCCL behind the nccl backend) xGMI or PCIe: `nvlink`
    is then whether amdsmi (or, without it, the catalog entry) has an xGMI link (review
    s28 R4 F7: an MI300X's Infinity Fabric was named PCIe)."""
    if multi_host:
        return "network"
    if backend != "nccl":
        return "loopback"
    if rocm:
        return "xGMI" if nvlink else "PCIe"
    return "NVLink" if nvlink else "PCIe"


def gpu_link_active(torch, device) -> tuple[bool | None, bool]:
    """(whether the GPU has a fast link to another, whether this is ROCm): NVML's NVLink
    state on CUDA; on ROCm amdsmi's xGMI link, else the catalog entry's (amd_smi)."""
    index = device.index or 0
    if not getattr(getattr(torch, "version", None), "hip", None):
        return nvlink_active(index), False
    from ..gpu.amd_smi import xgmi_active, xgmi_by_name

    found = xgmi_active(index)
    if found is None:
        found = xgmi_by_name(torch.cuda.get_device_name(device))
    return found, True


def p2p_pairs(hosts: Sequence[str]) -> list[tuple[tuple[int, int], str]]:
    """Rank 0 with the first rank on its own host, and with the first rank elsewhere."""
    out = []
    same = next((r for r in range(1, len(hosts)) if hosts[r] == hosts[0]), None)
    other = next((r for r in range(1, len(hosts)) if hosts[r] != hosts[0]), None)
    if same is not None:
        out.append(((0, same), "intra-node"))
    if other is not None:
        out.append(((0, other), "inter-node"))
    return out


def _stage_writer(rank: int, seen: list[str] | None = None) -> Callable[[str], None]:
    """Each stage is numbered: when the probe hangs, the ranks with the lowest number are
    the ones the others wait for. `seen` keeps the last one (for this rank's own error)."""
    folder = os.environ.get(STAGE_ENV)
    count = [0]

    def write(stage: str) -> None:
        count[0] += 1
        if seen is not None:
            seen[:] = [stage]
        if folder:
            with open(os.path.join(folder, f"rank{rank}.stage"), "w") as f:
                f.write(f"{count[0]}\t{stage}")
    return write


def _fault(rank: int) -> None:
    spec = os.environ.get(FAULT_ENV, "")
    if spec and spec.split(":")[0] == str(rank):
        if spec.endswith(":die"):
            os._exit(3)
        if spec.endswith(":hang"):
            time.sleep(3600)


def _available_bytes(torch, device) -> float | None:
    if getattr(device, "type", "cpu") == "cuda":
        return float(torch.cuda.mem_get_info(device)[0])
    from ...hardware.host import meminfo

    return meminfo()[1]


def _host_cpus() -> int:
    # The host's CPUs, not this rank's affinity: torchrun --numa-binding may give each
    # rank a few cores of its own, which is no oversubscription.
    return os.cpu_count() or 1


def check_local_ranks(local_world: int, cpus: int) -> None:
    """Under torchrun, the limit `--nproc` has: no more local ranks than the host has
    CPUs. Every rank sees the same counts, so all stop here, before the rendezvous, and
    none waits for a peer that left. (Past it, the ranks take turns on the CPUs and the
    probe would time that, not the link.)"""
    if local_world > cpus:
        fix = (f"use --nproc-per-node {cpus} or fewer, and --nnodes to add hosts" if cpus >= 2
               else "use --nproc-per-node 1 with --nnodes 2 or more")
        raise EveryRankError(
            f"torchrun started {local_world} ranks on this host, which has {cpus} CPU"
            f"{'s' * (cpus != 1)}; each rank needs a CPU of its own (more would measure CPU "
            f"sharing, not the link): {fix}")


def gloo_threads(local_world: int) -> int:
    """Torch threads for each of `local_world` gloo ranks on this host: they share the CPUs,
    so one rank's threads must not oversubscribe the cores another rank is timing on. The
    same CPUs the rank's own CPU probe shares out (device.rank_profile): without
    os.sched_getaffinity (macOS, Windows) this was 1 thread (review s23 r3 F9)."""
    return max(1, usable_cpus() // max(1, local_world))


def run_rank(mode: str, *, record_load: bool = False) -> MachineProfile | None:
    """Run this process's share of the probe; rank 0 returns the cluster profile.

    record_load (under torchrun): rank 0 adds extras.machine_load for its host from every
    rank's CPU time (hostload.py); the launcher (`--nproc`) measures it itself instead."""
    plan = get_plan(mode)
    torch = require("torch", "torch", "the communication probe")
    import torch.distributed as dist

    env = dist_env()
    rank, world = env["rank"], env["world"]
    seen: list[str] = []
    stage = _stage_writer(rank, seen)
    stage("starting")
    started = time.perf_counter()
    # Before the rendezvous: the nearest this rank gets to "before the probe".
    loadavg = loadavg_1m() if record_load and rank == 0 else None
    if world < 2:
        raise EveryRankError("the communication probe needs at least 2 processes (--nproc 2 "
                             "or torchrun --nproc-per-node 2); one rank has no peer to talk "
                             "to")
    check_local_ranks(env["local_world"], _host_cpus())
    backend, why = pick_backend(torch, env["local_world"])
    device = torch.device("cpu")
    if backend == "gloo":
        torch.set_num_threads(gloo_threads(env["local_world"]))
    if backend == "nccl":
        device = torch.device("cuda", env["local_rank"])
        torch.cuda.set_device(device)
    timeout_s = comm_timeout(600.0)
    stage("joining the process group at {}:{}".format(*master_address()))
    join_group(dist, backend, rank, world, timeout_s)
    stage("joined the process group")
    try:
        control = dist.new_group(backend="gloo") if backend == "nccl" else None
        comm = Comm(torch, dist, rank, world, device, control)
        _fault(rank)
        stage("exchanging host names")
        return _probe(comm, plan, env, backend, why, stage, started, record_load, loadavg)
    except RuntimeError as exc:   # a peer gone or hung: one line, not a traceback
        said = group_failure(exc, rank, seen[-1], timeout_s)
        if said is None:
            raise
        raise ProbeError(said) from None
    finally:
        dist.destroy_process_group()


def _probe(comm: Comm, plan, env, backend, why, stage, started, record_load: bool = False,
           loadavg: float | None = None) -> MachineProfile | None:
    # imported here, not at the top: hostload imports launch, which imports this module
    from .hostload import HOST_SOURCES, with_host_load

    torch, dist = comm.torch, comm.dist
    hosts: list[Any] = [None] * comm.world
    dist.all_gather_object(hosts, socket.gethostname(), group=comm.control)
    # The gather above and the barrier below line the ranks' windows up, so every rank's
    # CPU time falls inside rank 0's /proc/stat window (a rank still measuring after it
    # would count as its own work but not as the host's busy time).
    before = snapshot(HOST_SOURCES)
    # Host memory is shared by the local ranks; each GPU rank has its own device memory.
    sharing = 1 if comm.device.type == "cuda" else env["local_world"]
    cap = memory_cap(plan, _available_bytes(torch, comm.device), sharing)
    (neg,) = comm.agree_max([-(cap or float(max(plan.sizes)))])   # the smallest cap wins
    cap = -neg if -neg < max(plan.sizes) else None
    multi = len(set(hosts)) > 1
    nvlink, rocm = gpu_link_active(torch, comm.device) if backend == "nccl" else (None, False)
    world_level = link_level(backend, multi, nvlink, rocm)
    results: list[CollectiveResult] = []
    for name in COLLECTIVES[:-1]:
        results.append(sweep(comm, name, plan, cap, progress=stage))
    for pair, where in p2p_pairs(hosts):
        results.append(sweep(comm, "send_recv", plan, cap, pair=pair, link=where,
                             progress=stage))
    stage("device roof")
    mine = rank_profile(torch, comm.device, plan.name, env["local_world"])
    dist.barrier(group=comm.control)
    after = snapshot(HOST_SOURCES)
    record = {"rank": comm.rank, "hostname": hosts[comm.rank], "local_rank": env["local_rank"],
              "device": str(comm.device), "profile": profile_to_dict(mine),
              "own_cpu_s": after.own_cpu_s - before.own_cpu_s}
    gathered: list[Any] = [None] * comm.world
    dist.all_gather_object(gathered, record, group=comm.control)
    stage("merging")
    if comm.rank != 0:
        return None
    levels = {"world": world_level, "intra-node": link_level(backend, False, nvlink, rocm),
              "inter-node": "network"}
    profile = merge(gathered, results, backend=backend, backend_why=why, mode=plan.name,
                    levels=levels, wall_s=time.perf_counter() - started)
    if not record_load:   # the launcher (--nproc) measures the load itself
        return profile
    own = [(r["hostname"], r["own_cpu_s"]) for r in gathered]
    return with_host_load(profile, before, after, own, hosts[0], loadavg)


# --- rank 0: the cluster profile -------------------------------------------------------
def link_ceilings(results: Sequence[CollectiveResult], levels: Mapping[str, str]
                  ) -> tuple[Ceiling, ...]:
    """Per link level, the highest median bus bandwidth over sizes and collectives, with
    that size's samples. The median, not the best sample: the maximum of ~50 noisy samples
    is biased upward by the selection (review r3 F3; nccl-tests reports a mean per size).
    The best sample stays in the method text as such."""
    top: dict[str, tuple[float, CollectiveResult, Any]] = {}
    best_sample: dict[str, float] = {}
    for res in results:
        level = levels[res.link or "world"]
        for row in res.rows:
            bw = res.busbw(row)
            if level not in top or bw > top[level][0]:
                top[level] = (bw, res, row)
            best_sample[level] = max(best_sample.get(level, 0.0), res.busbw(row, best=True))
    out = []
    for level, (bw, res, row) in top.items():
        samples = tuple(row.nbytes / t * res.factor for t in row.samples)
        method = (f"{res.label} over {res.ranks if not res.pair else 2} ranks, "
                  f"{row.nbytes} B messages, bus bandwidth = algbw x {res.factor:.3g} "
                  f"(nccl-tests convention); value = highest median over sizes and "
                  f"collectives (best single sample {best_sample[level] / 1e9:.3g} GB/s)")
        # the same test as every other measured ceiling, so the table marks it alike
        warn = rates_warning(f"{level} bandwidth", samples)
        out.append(Ceiling(value=bw, level=level, provenance="measured", source=SOURCE,
                           method=method, samples=samples, warnings=(warn,) if warn else ()))
    return tuple(out)


def slowest_roof(roofs: Sequence[Roof], ranks: Sequence[int], name: str,
                 extra_memory: Sequence[Ceiling] = (), notes: Sequence[str] = ()) -> Roof:
    """Per ceiling the slowest rank's (a synchronous step waits for the slowest rank);
    only ceilings every rank measured."""
    def key(c: Ceiling):
        return (c.precision, c.unit, c.level)

    common = set.intersection(*({key(c) for c in r.compute + r.memory} for r in roofs))
    picked: dict[Any, Ceiling] = {}
    for r, rank in zip(roofs, ranks, strict=True):
        for c in r.compute + r.memory:
            k = key(c)
            if k in common and (k not in picked or c.value < picked[k].value):
                picked[k] = replace(c, method=c.method.split(" [slowest of")[0]
                                    + f" [slowest of {len(roofs)} ranks: rank {rank}]")
    compute = tuple(c for c in picked.values() if c.is_compute)
    memory = tuple(c for c in picked.values() if not c.is_compute) + tuple(extra_memory)
    overheads = [r.overhead_s for r in roofs if r.overhead_s is not None]
    return Roof(name=name, kind="measured", compute=compute, memory=memory,
                overhead_s=max(overheads) if len(overheads) == len(roofs) else None,
                overhead_source="slowest rank's overhead floor" if overheads else "",
                source=f"{SOURCE}, {now_iso()}", notes=tuple(notes))


def merge(records: Sequence[Mapping[str, Any]], results: Sequence[CollectiveResult], *,
          backend: str, backend_why: str, mode: str, levels: Mapping[str, str],
          wall_s: float) -> MachineProfile:
    """Rank 0: every rank's roof plus the link ceilings, as one MachineProfile."""
    profiles = [profile_from_dict(r["profile"], f"rank {r['rank']} profile") for r in records]
    if any(p.measured is None for p in profiles):
        raise ProbeError("a rank returned no measured roof; no cluster profile was written")
    hosts: dict[str, list[int]] = {}
    for r in records:
        hosts.setdefault(r["hostname"], []).append(r["rank"])
    world = len(records)
    device = profiles[0].name
    name = f"{world} x {device} ({backend}, {len(hosts)} host{'s' * (len(hosts) > 1)})"
    links = link_ceilings(results, levels)
    notes = [f"compute and memory ceilings: the slowest of {world} ranks per ceiling, "
             f"measured with all local ranks probing at once (as in a data-parallel step)",
             f"backend {backend}: {backend_why}"]
    notes += [f"{r.label}: {r.stopped}" for r in results if r.stopped]
    collectives = [r.to_dict() for r in results]
    notes += misfit_notes(collectives)   # in the file too, not only in the table's notes
    roof = slowest_roof([p.measured for p in profiles], [r["rank"] for r in records], name,
                        links, notes)
    host = {"name": name, "kind": "cluster", "world_size": world, "backend": backend,
            "hosts": hosts, "device": device, "mode": mode}
    comm = {"backend": backend, "backend_why": backend_why, "world_size": world,
            "mode": mode, "levels": dict(levels),
            "convention": "nccl-tests doc/PERFORMANCE.md: algbw = bytes / time; busbw = "
                          "algbw x factor (all-reduce 2(n-1)/n; all-gather, reduce-scatter, "
                          "all-to-all (n-1)/n; broadcast, send/recv 1)",
            "collectives": collectives}
    ranks = [{k: r[k] for k in ("rank", "hostname", "local_rank", "device", "profile")}
             for r in records]
    return MachineProfile(host=host, nominal=profiles[0].nominal, measured=roof,
                          extras={"comm": comm, "ranks": ranks, "wall_s": wall_s},
                          created=now_iso())

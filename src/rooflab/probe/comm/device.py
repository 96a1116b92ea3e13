"""Each rank's own roof, measured while the cluster probe runs.

quick/default/full: the CPU probe (`probe_cpu("quick", threads)`, the CPUs shared out among
the local ranks) or the GPU probe (`probe_gpu("cuda:<local rank>", "quick")`).
tiny (CI): a light roof from two torch measurements taking a fraction of a second: an
fp32 matmul (FLOP/s) and a tensor copy well above the last-level cache (B/s).
"""

from __future__ import annotations

import socket

from ...hardware.profile import MachineProfile, now_iso
from ...model.ceiling import Ceiling, Roof
from ..stats import rates, rates_warning
from ..timer import TimingPlan, bench

LIGHT_PLAN = TimingPlan(warmup_s=0.01, sample_s=0.005, budget_s=0.06, min_samples=3)
LIGHT_MATMUL_N = 256
LIGHT_COPY_BYTES = 64 << 20      # per buffer; 2 buffers, read + write counted


def _ceiling(work: float, timing, method: str, **key) -> Ceiling:
    samples = rates(work, timing.samples)
    # the CPU probe's test (interquartile range, median below the best), not Timing's
    # (max - min) / median (review s20 r2 F4)
    warn = rates_warning(method.split(":")[0], samples)
    return Ceiling(value=max(samples), provenance="measured", method=method,
                   source="rooflab probe --comm (light per-rank roof)", samples=samples,
                   warnings=(warn,) if warn else (), **key)


def light_profile(torch, device, name: str) -> MachineProfile:
    """A small measured roof: fp32 matmul peak and a copy bandwidth (read + write bytes)."""
    on_cuda = getattr(device, "type", "cpu") == "cuda"
    sync = (lambda: torch.cuda.synchronize(device)) if on_cuda else None
    n = LIGHT_MATMUL_N
    a = torch.rand(n, n, dtype=torch.float32, device=device)
    b = torch.rand(n, n, dtype=torch.float32, device=device)
    mm = bench(lambda: torch.matmul(a, b), LIGHT_PLAN, sync=sync)
    elems = LIGHT_COPY_BYTES // 4
    src = torch.ones(elems, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    cp = bench(lambda: dst.copy_(src), LIGHT_PLAN, sync=sync)
    compute = _ceiling(2.0 * n**3, mm, f"fp32 matmul {n}x{n}x{n} (torch), 2 FLOP per "
                       f"multiply-add; value = best sample", precision="fp32", unit="vector")
    memory = _ceiling(2.0 * LIGHT_COPY_BYTES, cp, f"DRAM copy: torch copy_ of "
                      f"{LIGHT_COPY_BYTES >> 20} MiB (read + write counted); value = best "
                      f"sample", level="DRAM")
    roof = Roof(name=f"{name} (light)", kind="measured", compute=(compute,), memory=(memory,),
                source=f"rooflab probe --comm tiny, {now_iso()}",
                notes=("light per-rank roof (tiny mode): one matmul size and one copy; use "
                       "--quick or the default mode for the full CPU/GPU probe",))
    host = {"name": name, "kind": "cuda" if on_cuda else "cpu", "hostname": socket.gethostname()}
    return MachineProfile(host=host, measured=roof, extras={"light": True}, created=now_iso())


def cpu_name() -> str:
    try:
        from ...hardware.host import detect_host

        return detect_host().cpu_model or "CPU"
    except Exception:   # identity is a label here; never fail the probe over it
        return "CPU"


def rank_profile(torch, device, mode: str, local_ranks: int) -> MachineProfile:
    """This rank's own roof (see the module docstring for what each mode measures)."""
    on_cuda = getattr(device, "type", "cpu") == "cuda"
    if mode == "tiny":
        name = torch.cuda.get_device_name(device) if on_cuda else cpu_name()
        return light_profile(torch, device, name)
    device_mode = "default" if mode == "full" else "quick"
    if on_cuda:
        from ..gpu import probe_gpu

        return probe_gpu(f"cuda:{device.index or 0}", device_mode)
    from ..cpu import probe_cpu
    from ..cpus import usable_cpus

    return probe_cpu(device_mode, threads=max(1, usable_cpus() // max(1, local_ranks)))

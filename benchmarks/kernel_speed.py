"""How long it takes to build a `Kernel` and to copy one with `Kernel.with_()`.

    python benchmarks/kernel_speed.py [--n 100000] [--repeat 5]

Kernels are built by the thousand (an LLM batch sweep, every group of an ncu file, every
op of a torch trace), and each one makes its FLOP/bytes names canonical and checks its
numbers. The arguments are realistic: FLOP by precision, bytes by level, seconds, calls,
meta. The reference, timed interleaved in the same run (the host is shared), is a plain
frozen dataclass with the same fields and the same arguments (no checks at all); the
ratio Kernel / reference moves less than a time per call when the machine is busy.
Best of --repeat for each.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class Plain:
    """The reference: Kernel's fields, no canonical names, no checks."""

    name: str
    flop: Mapping[str, float] = field(default_factory=dict)
    bytes: Mapping[str, float] = field(default_factory=dict)
    seconds: float | None = None
    calls: int = 1
    provenance: Mapping[str, str] = field(default_factory=dict)
    unit: str | None = None
    samples: tuple[float, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)


def arguments(i: int) -> dict[str, Any]:
    """What an ncu group or an LLM op hands Kernel: canonical names, floats, an int."""
    return dict(name=f"kernel_{i % 20}", flop={"fp16": 1.37e11, "fp32": 2.1e9},
                bytes={"DRAM": 1.0e8, "L2": 3.0e8, "L1": 6.2e8}, seconds=1.5e-4,
                calls=12, meta={"op": "matmul", "shape": "4096x4096"})


def per_call(fn, n: int) -> float:
    """Seconds per call of fn(i), i in range(n)."""
    t0 = time.perf_counter()
    for i in range(n):
        fn(i)
    return (time.perf_counter() - t0) / n


def main(argv: list[str] | None = None) -> int:
    from rooflab.model.kernel import Kernel

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args(argv)
    args = [arguments(i) for i in range(64)]
    k0, p0 = Kernel(**args[0]), Plain(**args[0])
    cases = {
        "Kernel(...)": (lambda i: Kernel(**args[i & 63]), lambda i: Plain(**args[i & 63])),
        # a new time (model/retime.py); a new name or meta (every LLM op, compare, the
        # profiled tables, torch traces)
        "k.with_(seconds=...)": (lambda i: k0.with_(seconds=2e-4),
                                 lambda i: replace(p0, seconds=2e-4)),
        "k.with_(name=..., meta=...)": (lambda i: k0.with_(name="x", meta={"step": i}),
                                        lambda i: replace(p0, name="x", meta={"step": i})),
    }
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node()}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}; best of {a.repeat} x {a.n:,} calls")
    for label, (ours, ref) in cases.items():
        t_us, t_ref = [], []
        for _ in range(a.repeat):   # interleaved: both see the same load
            t_ref.append(per_call(ref, a.n))
            t_us.append(per_call(ours, a.n))
        us, rf = min(t_us), min(t_ref)
        print(f"{label:28s} {us * 1e6:6.2f} us; plain frozen dataclass (same run) "
              f"{rf * 1e6:5.2f} us; ratio {us / rf:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

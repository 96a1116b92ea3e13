"""What `@rooflab.measure` costs a decorated function, and how fast `.kernel` reads.

    python benchmarks/decorated_speed.py [--calls 20000] [--ref /tmp/ref/src]

A serving loop calls a decorated handler thousands of times and reads `.kernel` often
(review s25 r2 F9: the read was O(n^2 log n), 122 s at 20k calls). Two figures, each against
a reference in the same run (the host is shared; the ratio is what to compare):
  call     per-call time of a decorated trivial function (flop=/bytes= given, so no
           counting) against the same function undecorated: the decorator's overhead
  kernel   the first `.kernel` read after N calls against sorting N floats (the
           O(n log n) floor of a median), and the cached second read
With --ref (another source tree, e.g. `git archive <rev> src | tar -x -C /tmp/ref`), the
same figures of that tree run in a child process, for a before/after.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
import warnings
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def figures(calls: int) -> dict[str, float]:
    import rooflab

    warnings.simplefilter("ignore")

    def plain(i):
        return i + 1

    handler = rooflab.measure(name="handle", flop=1e3, bytes=1e3)(plain)
    t0 = time.perf_counter()
    for i in range(calls):
        plain(i)
    t_plain = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(calls):
        handler(i)
    t_deco = time.perf_counter() - t0
    t0 = time.perf_counter()
    k = handler.kernel
    t_first = time.perf_counter() - t0
    t0 = time.perf_counter()
    again = handler.kernel
    t_again = time.perf_counter() - t0
    xs = [random.random() for _ in range(calls)]
    t0 = time.perf_counter()
    sorted(xs)
    t_sort = time.perf_counter() - t0
    assert again.calls == k.calls and k.calls + k.meta.get("first_calls_left_out", 0) == calls
    return {"call_plain_s": t_plain / calls, "call_decorated_s": t_deco / calls,
            "kernel_first_s": t_first, "kernel_cached_s": t_again, "sort_s": t_sort}


def _child(src: Path, calls: int) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(src))
    out = subprocess.run([sys.executable, __file__, "--calls", str(calls), "--json"],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _line(label: str, f: dict[str, float]) -> str:
    return (f"{label:5} call {f['call_decorated_s'] * 1e6:7.1f} us vs plain "
            f"{f['call_plain_s'] * 1e6:5.2f} us ({f['call_decorated_s'] / f['call_plain_s']:5.0f}x)"
            f" | .kernel {f['kernel_first_s']:8.3f} s (sort {f['sort_s'] * 1e3:6.2f} ms, "
            f"{f['kernel_first_s'] / f['sort_s']:7.0f}x), "
            f"cached {f['kernel_cached_s'] * 1e6:6.1f} us")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", default="1000,4000,20000")
    ap.add_argument("--ref", type=Path, help="another source tree to time beside this one")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.json:
        print(json.dumps(figures(int(a.calls))))
        return 0
    for n in (int(c) for c in a.calls.split(",")):
        print(f"{n} calls")
        print(_line("this", _child(SRC, n)))
        if a.ref is not None:
            print(_line("ref", _child(a.ref, n)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What numpy's import costs the everyday verbs (session 36, helper E).

model/roofline.py imported numpy at module level for attainable()'s array path, so every
verb that places a point (llm, train, report, whatif, ai, ...) paid for it on each call;
it now imports numpy inside that path, and none of these commands reaches it. Each command
runs in a fresh interpreter, interleaved with its reference: the same command with
`import numpy` first (what every call paid before). CPU seconds (user + sys) of the child,
median of --reps: the ratio is the figure to compare (the host is shared).

Bytecode is cached under a temporary PYTHONPYCACHEPREFIX (an installed rooflab has its
.pyc files; PYTHONDONTWRITEBYTECODE=1 would time the compiler too).

    python benchmarks/numpy_startup.py [--reps 7]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile

COMMANDS = (("llm", "llama-2-7b", "--on", "H100"),
            ("llm", "llama-2-7b", "--on", "H100", "--json"),
            ("train", "llama-2-7b", "--on", "H100", "--batch", "4", "--seq", "4096"),
            ("ai", "matmul", "4096", "4096", "4096"),
            ("specs", "show", "H100"))


def cpu_seconds(args: tuple[str, ...], first: str, env: dict) -> float:
    """user + sys CPU seconds of `rooflab ARGS` in a child that runs `first` before."""
    code = (f"{first}import runpy, sys; sys.argv = ['rooflab', *{list(args)!r}]; "
            f"runpy.run_module('rooflab', run_name='__main__', alter_sys=True)")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"rooflab {' '.join(args)} exited {done.returncode}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as pyc:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(COLUMNS="100", PYTHONPYCACHEPREFIX=pyc)
        print(f"# {platform.node()} {platform.machine()}, Python {sys.version.split()[0]}, "
              f"CPU ms, median of {a.reps}")
        print(f"{'command':48} {'now':>6} {'+numpy':>7} {'ratio':>6}")
        for args in COMMANDS:
            for first in ("", "import numpy; "):   # warm the bytecode cache
                cpu_seconds(args, first, env)
            now, ref = [], []
            for _ in range(a.reps):                # interleaved: both see the same load
                now.append(cpu_seconds(args, "", env))
                ref.append(cpu_seconds(args, "import numpy; ", env))
            n, r = statistics.median(now), statistics.median(ref)
            print(f"{' '.join(args):48} {n * 1e3:6.0f} {r * 1e3:7.0f} {n / r:6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

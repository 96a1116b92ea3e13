"""How long `rooflab --help`, a verb's --help and a usage error take to start.

A shell user pays this on every call, so it is measured as CPU time (user + sys of the
child: wall time on a shared machine moves with the neighbours' load). Each command is run
interleaved with a bare `python -c pass` (the interpreter's own start, a floor rooflab
cannot go below) and, with --ref, with the same command on another source tree (e.g. an
older commit's `git archive <rev> src | tar -x -C /tmp/ref`): the ratio to the reference
in the same minutes is the figure that moves least with load.

    python benchmarks/cli_startup.py [--reps 7] [--ref /tmp/ref/src]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

COMMANDS = (("--help",), ("--version",), ("llm", "--help"), ("bench", "--help"),
            ("report", "--nope"))
SRC = Path(__file__).resolve().parents[1] / "src"


def cpu_seconds(argv: list[str], src: Path | None) -> float:
    """user + sys CPU seconds of one child process running argv."""
    env = dict(os.environ, COLUMNS="100")
    if src is not None:
        env["PYTHONPATH"] = str(src)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def rooflab(args: tuple[str, ...]) -> list[str]:
    return [sys.executable, "-m", "rooflab", *args]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--ref", type=Path, help="another source tree's src/ to compare with")
    a = ap.parse_args()
    floor = [cpu_seconds([sys.executable, "-c", "pass"], None) for _ in range(a.reps)]
    print(f"python -c pass: {statistics.median(floor) * 1e3:.0f} ms CPU (median of {a.reps})")
    head = f"{'command':24} {'this tree':>10}" + (f" {'ref':>8} {'ratio':>6}" if a.ref else "")
    print(head + "   (CPU ms, medians)")
    for args in COMMANDS:
        mine, ref = [], []
        for _ in range(a.reps):     # interleaved: both see the same load
            mine.append(cpu_seconds(rooflab(args), SRC))
            if a.ref:
                ref.append(cpu_seconds(rooflab(args), a.ref))
        line = f"{' '.join(args):24} {statistics.median(mine) * 1e3:10.0f}"
        if a.ref:
            r = statistics.median(ref)
            line += f" {r * 1e3:8.0f} {statistics.median(mine) / r:6.2f}"
        print(line)


if __name__ == "__main__":
    main()

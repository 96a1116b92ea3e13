"""Benchmark: `rooflab whatif` on kernel CSVs of 10,000 and 100,000 rows: wall, CPU, peak RSS.

    python benchmarks/whatif_speed.py [--sizes 10000,100000] [--json] [--output]
                                      [--against OLD]

Writes kernel CSVs (name,flop,bytes,seconds,precision; benchmarks/chart_speed.py's seeded
recipe: 1-105 % of an H100's roof) to a temporary folder and runs
`rooflab whatif k.csv --on A100 --precision fp16` (with --json: its JSON document instead
of the terminal report; with --output: `-o w.json`, the document in a file) in a child
process each, printing the wall and CPU seconds and the child's peak RSS (wait4).
--against OLD (a checkout of an older commit, e.g. `git worktree add /tmp/old HEAD~1`, or a
copy of its src/) runs OLD/src and this tree's src back to back on the same files and says
whether stdout, stderr, the exit code (and the -o file) are the same. One run each: the
host is shared, so read the RSS (steady) before the seconds.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(src: str, csv: str, json_out: bool, tmp: str, output: bool = False
        ) -> tuple[float, float, float, bytes, bytes, int]:
    """(wall s, CPU s, peak RSS MB, stdout (then the -o file's bytes), stderr, exit code)
    of one child, its own rusage from wait4 (as torch_trace_speed.py's child)."""
    doc = os.path.join(tmp, "w.json")
    argv = [sys.executable, "-m", "rooflab", "whatif", csv, "--on", "A100",
            "--precision", "fp16", *(["--json"] if json_out else []),
            *(["-o", doc] if output else [])]
    env = {**os.environ, "PYTHONPATH": src}
    out_path, err_path = os.path.join(tmp, "out"), os.path.join(tmp, "err")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    stdout = Path(out_path).read_bytes()
    if output and os.path.exists(doc):
        stdout += Path(doc).read_bytes()
        os.unlink(doc)
    return (wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
            stdout, Path(err_path).read_bytes(), code)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000", help="kernels per CSV, comma-separated")
    ap.add_argument("--json", action="store_true", help="time --json, not the terminal report")
    ap.add_argument("--output", action="store_true", help="add -o w.json (the document in a file)")
    ap.add_argument("--against", metavar="OLD", help="an older checkout (or its src/) to compare")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from chart_speed import kernel_csv  # a sibling script: the same seeded CSVs

    new_src = str(HERE.parent / "src")
    old_src = None
    if a.against:
        old = Path(a.against)
        old_src = str(old / "src" if (old / "src").is_dir() else old)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs; "
          f"whatif --on A100 --precision fp16{' --json' if a.json else ''}"
          f"{' -o w.json' if a.output else ''}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in a.sizes.split(",")):
            csv = os.path.join(tmp, f"k_{n}.csv")
            kernel_csv(csv, n)
            runs = [("old", old_src)] if old_src else []
            got = {}
            for name, src in [*runs, ("new", new_src)]:
                got[name] = run(src, csv, a.json, tmp, a.output)
                wall, cpu, rss, _, _, code = got[name]
                print(f"{n:>7,} kernels {name}: wall {wall:6.1f} s  CPU {cpu:6.1f} s  "
                      f"peak RSS {rss:6.0f} MB  exit {code}")
            if old_src:
                same = got["old"][3:] == got["new"][3:]
                print(f"{n:>7,} kernels: stdout, stderr{', the -o file' if a.output else ''}"
                      f" and exit code "
                      f"{'the same' if same else 'DIFFER'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

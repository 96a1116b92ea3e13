"""`rooflab plot` and `rooflab report -o x.html` at 20 000 kernels, this tree against the
committed one in the same run (session 37, helper C).

Kernels as scale_speed.py makes them (seeded, spread over the NVIDIA T4 roof, one time
each: an application's ncu export). Each call is a fresh process (a user's call: its own
heap, so the collector's passes are what a user's are), CPU seconds of the verb itself
(`time.process_time` around cli.main: the host is shared; interpreter start-up not
counted; bytecode cached, the first call of each tree compiling it: best of --repeat
>= 2), the two trees interleaved so both see the same load. The
reference is the committed tree (`git archive HEAD src`, or --old DIR: a tree holding
src/rooflab), run the same way; the ratio is what to compare. The outputs are checked
to be the same bytes (the PNG; the page with its file name swapped): a speed-up that
changes the chart is a bug.

    python benchmarks/chart_20k_speed.py [--kernels 20000] [--repeat 3]
        [--verbs plot,html] [--old DIR] [--on T4] [--mixed]

--mixed (session 38): each kernel's FLOP are fp16 with a ninth as many again in fp32, one
mix for all (a profiler's export of one mixed-precision GEMM launched 20 000 times): every
kernel is held to one weighted ceiling, which the chart draws once for them all.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

# the verb's CPU seconds in a child, printed last (stderr and stdout swallowed)
CHILD = """\
import contextlib, io, sys, time
from rooflab.cli.main import main
t0 = time.process_time()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    rc = main(sys.argv[1:])
took = time.process_time() - t0
assert rc == 0, rc
print(took)
"""


def verb_args(verb: str, path: str, out: str, on: str) -> list[str]:
    """The command line of one case: plot writes a PNG, html the report's page."""
    if verb == "plot":
        return ["plot", path, "--on", on, "-o", out]
    return ["report", path, "--on", on, "-o", out]


def call(src: str, args: list[str], cache: str) -> float:
    """CPU seconds of `rooflab ARGS` run from the tree `src` in a fresh process, bytecode
    cached under `cache` as an installed rooflab has its .pyc (a shell with
    PYTHONDONTWRITEBYTECODE=1 recompiles ~120 modules a call, ~0.1 s)."""
    env = {**os.environ, "PYTHONPATH": src, "MPLBACKEND": "Agg", "PYTHONPYCACHEPREFIX": cache}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True,
                          text=True, env=env, check=True)
    return float(done.stdout.split()[-1])


def old_tree(tmp: str) -> str:
    """The committed src/ unpacked under tmp (git archive HEAD src)."""
    root = os.path.dirname(HERE)
    archive = subprocess.run(["git", "-C", root, "archive", "HEAD", "src"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
    return os.path.join(tmp, "src")


def same_output(verb: str, new: str, old: str) -> bool:
    """The two outputs the same bytes (a page names its own file: swapped first)."""
    with open(new, "rb") as f, open(old, "rb") as g:
        a, b = f.read(), g.read()
    if verb == "html":
        a = a.replace(os.path.basename(new).encode(), os.path.basename(old).encode())
    return a == b


def case(verb: str, n: int, path: str, tmp: str, old_src: str, repeat: int, on: str) -> None:
    ext = "png" if verb == "plot" else "html"
    new_out, old_out = os.path.join(tmp, f"new.{ext}"), os.path.join(tmp, f"old.{ext}")
    now, old = [], []
    cache = os.path.join(tmp, "pycache")
    for _ in range(repeat):   # interleaved: both see the same load
        now.append(call(SRC, verb_args(verb, path, new_out, on), cache))
        old.append(call(old_src, verb_args(verb, path, old_out, on), cache))
    same = same_output(verb, new_out, old_out)
    label = "plot -o x.png" if verb == "plot" else "report -o x.html"
    print(f"{label:>17} {n:>7} {min(now):7.2f} {min(old):7.2f} {min(now) / min(old):6.2f}"
          f"  {'same bytes' if same else 'OUTPUT DIFFERS'}", flush=True)


def _mixed_file(tmp: str, n: int, roof) -> str:
    """scale_speed's n kernels, each with its fp32 FLOP as fp16 and a ninth more as fp32
    (the same share in each, so one weighted ceiling holds them all)."""
    import json
    from dataclasses import replace

    from scale_speed import spread_kernels

    from rooflab.model.schema import kernel_to_dict

    kernels = [replace(k, flop={"fp16": k.flop["fp32"], "fp32": k.flop["fp32"] / 9})
               for k in spread_kernels(n, roof)]
    path = os.path.join(tmp, f"mixed{n}.json")
    with open(path, "w") as f:
        json.dump({"schema_version": 1, "kernels": [kernel_to_dict(k) for k in kernels]}, f)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", default="20000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--verbs", default="plot,html")
    ap.add_argument("--old", default=None, help="a tree holding src/rooflab (default: "
                                                 "git archive HEAD src)")
    ap.add_argument("--on", default="T4")
    ap.add_argument("--mixed", action="store_true",
                    help="fp16 + a ninth as much fp32 in every kernel (one weighted ceiling)")
    a = ap.parse_args(argv)
    sys.path[:0] = [SRC, HERE]
    from scale_speed import _kernel_file

    from rooflab.hardware.catalog import lookup_roof

    roof = lookup_roof(a.on)
    print(f"# {platform.node()} {platform.machine()}, Python {sys.version.split()[0]}, "
          f"CPU s of the verb, best of {a.repeat}, fresh processes, {a.on}")
    print(f"{'command':>17} {'kernels':>7} {'now':>7} {'old':>7} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        old_src = os.path.join(a.old, "src") if a.old else old_tree(tmp)
        for n in (int(x) for x in a.kernels.split(",") if x):
            path = _mixed_file(tmp, n, roof) if a.mixed else _kernel_file(tmp, n, roof)
            for verb in (v for v in a.verbs.split(",") if v):
                case(verb, n, path, tmp, old_src, a.repeat, a.on)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

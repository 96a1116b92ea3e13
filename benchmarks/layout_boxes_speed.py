"""The label layout's box matrices (report/boxes.py: overlap_matrix, hits_matrix,
sums_in_order) on the calls one `rooflab plot` of 20 000 kernels makes, this tree's against
another tree's boxes.py (session 38, helper E).

The calls are recorded from the plot (their arrays copied), then replayed on both modules,
best of --repeat, CPU seconds; every result is checked to be the same (value, dtype and
shape): a faster matrix that moves a label is a bug.

    python benchmarks/layout_boxes_speed.py --old DIR [--kernels 20000] [--repeat 5]
        (DIR: a tree holding src/rooflab, e.g. `git archive HEAD src | tar -x -C DIR`)
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
NAMES = ("overlap_matrix", "hits_matrix", "sums_in_order")


def recorded(n: int) -> list[tuple[str, list]]:
    """The boxes calls of `rooflab plot` on n scale_speed kernels on T4, arguments copied."""
    import matplotlib

    matplotlib.use("Agg")
    from scale_speed import _kernel_file

    import rooflab.report.boxes as boxes
    from rooflab.cli.main import main
    from rooflab.hardware.catalog import lookup_roof

    calls: list[tuple[str, list]] = []
    for name in NAMES:
        def spy(*args, _f=getattr(boxes, name), _name=name):
            calls.append((_name, [a.copy() if hasattr(a, "copy") else a for a in args]))
            return _f(*args)
        setattr(boxes, name, spy)   # before the layout modules import them by name
    with tempfile.TemporaryDirectory() as tmp:
        path = _kernel_file(tmp, n, lookup_roof("T4"))
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            assert main(["plot", path, "--on", "T4", "-o", os.path.join(tmp, "x.png")]) == 0
    return calls


def module(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def same(a, b) -> bool:
    import numpy as np

    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    return a == b and [type(x) for x in a] == [type(x) for x in b]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="a tree holding src/rooflab")
    ap.add_argument("--kernels", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args(argv)
    sys.path[:0] = [SRC, HERE]
    calls = recorded(a.kernels)
    new = module(os.path.join(SRC, "rooflab", "report", "boxes.py"), "boxes_new")
    old = module(os.path.join(a.old, "src", "rooflab", "report", "boxes.py"), "boxes_old")
    print(f"{'function':>15} {'calls':>6} {'now':>7} {'old':>7} {'ratio':>6}  (CPU s, best of "
          f"{a.repeat})")
    for name in NAMES:
        args = [c for n, c in calls if n == name]
        ok = all(same(getattr(new, name)(*c), getattr(old, name)(*c)) for c in args)
        best = {}
        for _ in range(a.repeat):   # interleaved: both see the same load
            for label, mod in (("now", new), ("old", old)):
                f, t0 = getattr(mod, name), time.process_time()
                for c in args:
                    f(*c)
                best[label] = min(best.get(label, float("inf")), time.process_time() - t0)
        print(f"{name:>15} {len(args):>6} {best['now']:7.3f} {best['old']:7.3f} "
              f"{best['now'] / best['old']:6.2f}  {'same results' if ok else 'RESULTS DIFFER'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How long rooflab's --json writer (json_stream.iter_json) takes on real documents, and
whether writing it faster pays (session 35, helper K).

Python 3.11's json.dumps(indent=2) runs json's pure-Python encoder (its C encoder writes no
indentation). A test-suite profile (cProfile) put 4.9 of 36 s of the s30-34 CLI tests in it;
cProfile times that encoder ~4.7x slow (a call per value), so this measures without it.
Documents: what `rooflab llm llama-2-7b --on H100 --json`, `rooflab train llama-2-7b --on
MI250X --batch 1 --seq 4096 --json` and `rooflab llm llama-3-70b --on H200 --batch
1,8,64,512 --json` write (captured in-process). Each is encoded --n times, interleaved,
best of --repeat, CPU seconds (the host is shared):
  writer     iter_json, what the CLI runs
  C floor    json.dumps without indent (json's C encoder, not the same text): the most any
             rewrite that keeps the C encoder could reach
  profiled   iter_json under cProfile (what the suite profile saw)
  cli        one warm in-process `rooflab -q <command>` call, the encoding included
and prints writer / C floor (how much faster the C encoder alone is), profiled / writer,
and the writer's share of the CLI call.

    python benchmarks/json_speed.py [--n 20] [--repeat 5]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import platform
import sys
import time

DOCS = {
    "llm 7b H100": ["llm", "llama-2-7b", "--on", "H100", "--json"],
    "train 7b MI250X": ["train", "llama-2-7b", "--on", "MI250X", "--batch", "1", "--seq",
                        "4096", "--json"],
    "llm 70b H200 x4": ["llm", "llama-3-70b", "--on", "H200", "--batch", "1,8,64,512",
                        "--json"],
}


def documents() -> dict:
    """Each DOCS command's document, as the CLI hands it to the writer."""
    import rooflab.files as files
    from rooflab.cli.main import main

    got, write = [], files.iter_json
    files.iter_json = lambda obj: (got.append(obj), write(obj))[1]
    try:
        out = {}
        for name, argv in DOCS.items():
            with contextlib.redirect_stdout(io.StringIO()):
                assert main(["-q", *argv]) == 0, argv
            out[name] = got.pop()
        return out
    finally:
        files.iter_json = write


def timed(encode, doc, n: int) -> float:
    t = time.process_time()   # CPU time: the host is shared (one thread, no I/O)
    for _ in range(n):
        for _piece in encode(doc):
            pass
    return time.process_time() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20, help="encodings per timing")
    ap.add_argument("--repeat", type=int, default=5, help="timings, best kept")
    args = ap.parse_args(argv)
    import cProfile

    from rooflab.cli.main import main as cli
    from rooflab.json_stream import iter_json, json_default
    from rooflab.units import fmt_pct

    def floor(doc):
        yield json.dumps(doc, allow_nan=False, default=json_default)

    def profiled(doc):
        prof = cProfile.Profile()
        prof.enable()
        try:
            yield from iter_json(doc)
        finally:
            prof.disable()

    print(f"# {platform.node()} {platform.processor() or platform.machine()}, "
          f"Python {sys.version.split()[0]}, n={args.n}, best of {args.repeat}, ms per document")
    print(f"{'document':16} {'chars':>7} {'writer':>7} {'floor':>6} {'prof':>6}"
          f" {'cli':>6} {'w/floor':>8} {'prof/w':>7} {'of cli':>7}")
    for name, doc in documents().items():
        runs = {"writer": [], "floor": [], "prof": [], "cli": []}
        for _ in range(args.repeat):
            runs["writer"].append(timed(iter_json, doc, args.n))
            runs["floor"].append(timed(floor, doc, args.n))
            runs["prof"].append(timed(profiled, doc, args.n))
            with contextlib.redirect_stdout(io.StringIO()):
                t = time.process_time()
                cli(["-q", *DOCS[name]])
                runs["cli"].append((time.process_time() - t) * args.n)
        ms = {k: 1e3 * min(v) / args.n for k, v in runs.items()}
        text = "".join(iter_json(doc))
        print(f"{name:16} {len(text):7d} {ms['writer']:7.2f} "
              f"{ms['floor']:6.2f} {ms['prof']:6.2f} {ms['cli']:6.2f} "
              f"{ms['writer'] / ms['floor']:7.1f}x {ms['prof'] / ms['writer']:6.1f}x "
              f"{fmt_pct(100 * ms['writer'] / ms['cli']):>7}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: `rooflab torch` on a torch.profiler trace of a requested size, against json.load.

    python benchmarks/torch_trace_speed.py [--mb 100] [--repeat 2] [--keep DIR]

Records a real trace on the spot (torch.profiler, CPU, record_shapes=True: three training
steps of a 2-layer transformer encoder, as review r5 did), then writes a trace of about
--mb MB in a temporary folder by repeating its events with fresh External ids, Ev Idx and
timestamps (each repeat a later stretch of the same run: the op shapes, so the groups, stay
the recording's). Then times, in child processes interleaved in the same run (FACTS.md:
compare within one run), best of --repeat:
  reference  python -c 'json.load(open(FILE))'          (parsing alone)
  rooflab    python -m rooflab torch FILE --json         (parse, FLOP/bytes, groups, JSON out)
and prints wall and CPU seconds, peak RSS (each child's own, from wait4) and the ratios.
Both include the interpreter's start-up; rooflab's also its imports (~1 s).
Review r5 at 100 MB (2 shared cores): json.load 6.3 s / 637 MB, rooflab 12.8 s / 769 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def record(path: Path, steps: int = 3) -> None:
    """A real CPU trace: a small transformer's training steps (AdamW, cross-entropy)."""
    import torch
    from torch import nn
    from torch.profiler import ProfilerActivity, profile

    torch.manual_seed(0)
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    vocab, dim, layers, seq, batch = 1000, 128, 2, 64, 8

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, dim)
            layer = nn.TransformerEncoderLayer(dim, 4, 4 * dim, batch_first=True, dropout=0.0)
            self.enc = nn.TransformerEncoder(layer, layers)
            self.head = nn.Linear(dim, vocab)

        def forward(self, x):
            return self.head(self.enc(self.emb(x)))

    model = Model()
    opt = torch.optim.AdamW(model.parameters(), 1e-3)
    x = torch.randint(0, vocab, (batch, seq))
    y = torch.randint(0, vocab, (batch, seq))
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(steps):
            loss = nn.functional.cross_entropy(model(x).view(-1, vocab), y.view(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
    prof.export_chrome_trace(str(path))


def scale(src: Path, out: Path, mb: float) -> tuple[int, int]:
    """The recording's events repeated to about `mb` MB, each repeat with fresh ids and a
    later time; (repeats, events) written."""
    data = json.loads(src.read_text())
    events = data["traceEvents"]
    meta = [e for e in events if e.get("ph") == "M"]
    body = [e for e in events if e.get("ph") != "M"]
    timed = [e for e in body if "ts" in e]
    span = (max(float(e["ts"]) + float(e.get("dur", 0)) for e in timed)
            - min(float(e["ts"]) for e in timed) + 10.0)

    def top(key: str) -> int:
        return max((int((e.get("args") or {}).get(key) or 0) for e in body), default=0) + 1

    ext, ev_idx, corr = top("External id"), top("Ev Idx"), top("correlation")
    flow = max((e["id"] for e in body if isinstance(e.get("id"), int)), default=0) + 1
    repeats = max(1, round(mb * 1e6 / len(json.dumps(body))))
    head = {k: v for k, v in data.items() if k != "traceEvents"}
    written = len(meta)
    with out.open("w") as fh:
        fh.write("{\n" + "".join(f"  {json.dumps(k)}: {json.dumps(v)},\n"
                                 for k, v in head.items()) + '  "traceEvents": [\n')
        fh.write(",\n".join(json.dumps(e) for e in meta))
        for r in range(repeats):
            for e in body:
                e2 = dict(e)
                if "ts" in e2:
                    e2["ts"] = float(e["ts"]) + r * span
                args = e.get("args")
                if args:
                    args = dict(args)
                    for key, step in (("External id", ext), ("Ev Idx", ev_idx),
                                      ("correlation", corr)):
                        if isinstance(args.get(key), int):
                            args[key] += r * step
                    e2["args"] = args
                if isinstance(e.get("id"), int):
                    e2["id"] = e["id"] + r * flow
                fh.write((",\n" if written else "") + json.dumps(e2))
                written += 1
        fh.write("\n]}\n")
    return repeats, written


def child(argv: list[str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB) of one child process (its own rusage, from wait4)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"error: {' '.join(argv)} exited {proc.returncode}: {err[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=100.0, help="trace size to write (MB)")
    ap.add_argument("--repeat", type=int, default=2, help="best of N (interleaved)")
    ap.add_argument("--keep", metavar="DIR", help="write the traces here, not to a temp dir")
    ap.add_argument("--prepare", nargs=3, help=argparse.SUPPRESS)   # the child's job
    a = ap.parse_args(argv)
    if a.prepare:
        src, big, mb = a.prepare
        record(Path(src))
        print(*scale(Path(src), Path(big), float(mb)))
        return 0
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node()}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(a.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        src, big = folder / "recorded.json", folder / f"trace_{a.mb:g}mb.json"
        # in a child: Linux carries a process's peak RSS over fork and exec, so a parent
        # that imported torch would lend its size to every child measured below
        made = subprocess.run([sys.executable, __file__, "--prepare", str(src), str(big),
                               str(a.mb)], check=True, capture_output=True, text=True)
        repeats, events = map(int, made.stdout.split()[-2:])
        size = big.stat().st_size / 1e6
        print(f"trace: {size:.0f} MB, {events:,} events ({repeats} x a "
              f"{src.stat().st_size / 1e6:.1f} MB recording of 3 training steps)")
        ref = [sys.executable, "-c", "import json,sys; json.load(open(sys.argv[1]))", str(big)]
        ours = [sys.executable, "-m", "rooflab", "torch", str(big), "--json"]
        best = {"json.load": (float("inf"),) * 3, "rooflab torch --json": (float("inf"),) * 3}
        for _ in range(a.repeat):
            for name, cmd in (("json.load", ref), ("rooflab torch --json", ours)):
                got = child(cmd)
                best[name] = tuple(min(x, y) for x, y in zip(best[name], got, strict=True))
        for name, (wall, cpu, rss) in best.items():
            print(f"{name:22s} wall {wall:6.2f} s  CPU {cpu:6.2f} s  peak RSS {rss:6.0f} MB "
                  f"({rss / size:.1f}x the file)")
        (w0, c0, r0), (w1, c1, r1) = best.values()
        print(f"ratio rooflab / json.load: wall {w1 / w0:.2f}x, CPU {c1 / c0:.2f}x, "
              f"peak RSS {r1 / r0:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

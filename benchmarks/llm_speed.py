"""How long a full `rooflab llm` analysis of a 70B model with a 12-point batch sweep takes.

Target (issue 7): <= 200 ms. The machine is shared, so a fixed pure-Python reference
workload is timed interleaved with the analysis in the same run and the ratio is reported
too (a ratio moves less than a wall time when the host is busy).

    python benchmarks/llm_speed.py [--reps 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)


def full_analysis(cfg, roof):
    """What `rooflab llm llama-3-70b --on H200 --batch <12> --json` computes."""
    from rooflab.workloads.llm.analysis import Request, analyze_llm
    from rooflab.workloads.llm.result_json import result_to_dict
    from rooflab.workloads.llm.settings import Settings

    r = analyze_llm(cfg, roof, Settings(), Request(batches=BATCHES, prompt=1024, context=2048),
                    device_bytes=141e9)
    return result_to_dict(r)


def reference() -> int:
    """A fixed amount of pure-Python work (~ a few ms)."""
    return sum(i * i % 7 for i in range(200_000))


def timed(fn, *args) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    from rooflab.hardware.resolve import load_roof
    from rooflab.workloads.llm.config import load_config

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--model", default="llama-3-70b")
    args = ap.parse_args(argv)
    cfg = load_config(args.model)
    roof = load_roof("H200")
    full_analysis(cfg, roof)            # warm imports and caches
    work, ref = [], []
    for _ in range(args.reps):
        work.append(timed(full_analysis, cfg, roof))
        ref.append(timed(reference))
    med, best = statistics.median(work), min(work)
    print(f"{args.model}, 12-point batch sweep + decode + prefill + JSON on {roof.name}")
    print(f"  analysis: median {med * 1e3:.1f} ms, best {best * 1e3:.1f} ms, "
          f"max {max(work) * 1e3:.1f} ms over {args.reps} runs (target <= 200 ms)")
    print(f"  reference (pure Python, same run): median {statistics.median(ref) * 1e3:.1f} ms; "
          f"analysis / reference = {med / statistics.median(ref):.2f}")
    print("  PASS" if med <= 0.2 else "  FAIL: over 200 ms")
    return 0 if med <= 0.2 else 1


if __name__ == "__main__":
    sys.exit(main())

"""Entry point of one spawned rank: `python -m rooflab.probe.comm.worker --mode M --out F`.

launch.py starts one per rank with the torch.distributed environment set (RANK,
WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT, ...). Rank 0 writes the cluster profile to
F (atomically); a failing rank prints its error to stderr and exits non-zero.
"""

from __future__ import annotations

import argparse
import sys
import traceback


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rooflab.probe.comm.worker")
    parser.add_argument("--mode", default="quick")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    try:
        from ...files import write_json
        from ...hardware.profile import profile_to_dict
        from .cluster import run_rank

        profile = run_rank(args.mode)
        if profile is not None:
            write_json(args.out, profile_to_dict(profile))
        return 0
    except Exception as exc:    # the launcher reports it, naming this rank
        traceback.print_exc(file=sys.stderr)
        print(f"rank error: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())

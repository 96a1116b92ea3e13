"""`rooflab choose`'s legend says how it breaks ties in plain words (s37 A, a first user's
walk): it read 'the rank, equal times by the work floor (the time were the launches gone:
CUDA graphs)', which does not parse."""

from __future__ import annotations

import json

from cli_inproc import run_cli


def test_legend_says_ties_are_broken_by_the_work_floor(tmp_path):
    """One memory-bound kernel, 1 GB at the DRAM roof: T4 1e9 / 320e9 = 3.125 ms (printed
    3.12 ms), A100 80GB 1e9 / 2.039e12 = 490 us; the legend under the ranking names the
    tie-break."""
    doc = {"kernels": [{"name": "stream", "flop": {"fp16": 1e9}, "bytes": {"DRAM": 1e9}}]}
    path = tmp_path / "k.json"
    path.write_text(json.dumps(doc))
    r = run_cli("choose", str(path), "--among", "T4,A100 80GB SXM")
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert ("the rank, ties broken by the work floor (the time if the launches were gone: "
            "CUDA graphs)") in text
    assert "were the launches gone" not in text
    assert "490 us" in text and "3.12 ms" in text

"""Seed 004's two-roof T4 profile and point files, written for a test (the three seed
review test files shared copies of these; review rounds 18a/19a and their leftovers)."""
from __future__ import annotations

import json


def t4_profile(tmp_path, fp16_measured: float = 50e12, dram_measured: float = 270e9) -> str:
    """Seed 004's Colab T4: nominal 65 TFLOP/s fp16 tensor and 320 GB/s, measured as given
    (the seed's 50 TFLOP/s and 270 GB/s by default), 5 us launches; returns the path."""
    doc = {"schema_version": 1, "host": {"name": "seed 004's Colab T4"}}
    for kind, (p, b) in (("nominal", (65e12, 320e9)),
                         ("measured", (fp16_measured, dram_measured))):
        doc[kind] = {"name": "T4", "kind": kind, "overhead_s": 5e-6,
                     "compute": [{"precision": "fp16", "unit": "tensor", "flop_per_s": p,
                                  "kind": kind}],
                     "memory": [{"level": "DRAM", "bytes_per_s": b, "kind": kind}]}
    path = tmp_path / "t4p.json"
    path.write_text(json.dumps(doc))
    return str(path)


def points_file(tmp_path, kernels, name: str = "pts.json") -> str:
    """A kernel file of these kernel dicts; returns its path."""
    path = tmp_path / name
    path.write_text(json.dumps({"schema_version": 1, "kernels": kernels}))
    return str(path)

"""Profile files written by hand for tests that need one without running a probe."""

from __future__ import annotations

import json


def cpu_profile(path) -> str:
    """A CPU probe's profile, cut down, written to `path`: host kind "cpu" (what `rooflab
    probe` writes), host RAM 25.3 GB, measured DRAM 11.8 GB/s and fp64 71.3 GFLOP/s (the
    s33 review's 2-vCPU Xeon figures)."""
    doc = {"schema_version": 2,
           "host": {"kind": "cpu", "cpu_model": "Intel(R) Xeon(R) Processor",
                    "memory_bytes": 25.3e9, "cores": 2, "threads_used": 2},
           "measured": {"name": "Xeon measured (2 threads)", "kind": "measured",
                        "compute": [{"precision": "fp64", "unit": "vector",
                                     "flop_per_s": 71.3e9}],
                        "memory": [{"level": "DRAM", "bytes_per_s": 11.8e9}]}}
    path.write_text(json.dumps(doc))
    return str(path)

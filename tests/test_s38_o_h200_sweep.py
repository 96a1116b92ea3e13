"""The first H200 run (session 38, benchmarks/RESULTS.md): its L2 sweep and its flush.

The default probe's read sweep (ld.global.cg, medians in TB/s) over working sets of 2 to 424
MiB read 11.95 and 10.71 at 2 and 2.5 MiB, then 8-9.4 from 3.9 to 57 MiB (one 13.4 and one
11.0 among them), 6.7 at 71 MiB and 4.5 from 89 MiB on. The 60 MiB L2's plateau is the body,
3.9-57 MiB at ~9 TB/s: the old rule (keep the fastest of two plateaus in one level) kept the
2-point 2-2.5 MiB run at 11.3 TB/s and gpu_check's L2 check failed (ends at 2.5 MiB < 0.4 x
60 MiB).
"""

from __future__ import annotations

import pytest

from rooflab.probe.gpu.sweep import find_plateaus, label_plateaus

MIB = 2**20
# (MiB, TB/s) as measured on the H200 (profile.json extras.gpu.sweep.main, medians)
H200 = [(2.0, 11.95), (2.5, 10.71), (3.125, 13.39), (3.906, 9.71), (4.883, 9.26),
        (6.104, 11.04), (7.629, 9.03), (9.537, 8.83), (11.92, 8.97), (14.90, 8.88),
        (18.62, 9.03), (23.28, 8.85), (29.10, 8.82), (36.38, 8.43), (45.48, 9.38),
        (56.84, 8.14), (71.05, 6.72), (88.82, 4.97), (111.0, 4.63), (138.8, 4.54),
        (173.5, 4.52), (216.8, 4.51), (271.1, 4.52), (338.8, 4.51), (423.5, 4.52)]


def test_the_h200_l2_plateau_is_the_body_of_the_cache():
    """Runs: 2-2.5 MiB (11.33), 3.9-4.9 (9.49) merged with 7.6-57 (within 12 %), DRAM from
    88.8 MiB. Both cache runs fall in the 60 MiB L2; the widest (57/3.9 = 14.6x against
    2.5/2 = 1.25x) is kept: 13 points, median 8.97 TB/s, 1.98x the DRAM's 4.52."""
    pts = [(m * MIB, t * 1e12) for m, t in H200]
    found = label_plateaus(find_plateaus(pts), {"L2": 60 * MIB})
    l2, dram = found["L2"], found["DRAM"]
    assert (l2.first_bytes / MIB, l2.last_bytes / MIB) == pytest.approx((3.906, 56.84))
    assert l2.points == 13
    assert l2.bytes_per_s == pytest.approx(8.97e12)
    assert dram.first_bytes / MIB == pytest.approx(88.82)
    assert dram.bytes_per_s == pytest.approx(4.52e12)
    assert l2.last_bytes >= 0.4 * 60 * MIB and l2.bytes_per_s >= 1.8 * dram.bytes_per_s


def test_a_short_slow_run_below_the_body_is_still_dropped():
    """Too little parallelism at the smallest sets (the case the old 'fastest' rule was
    for): 5, 5.2 TB/s at 1-1.5 MiB, then 9 TB/s from 2 to 40 MiB: the body is kept."""
    pts = [(1.0, 5.0), (1.5, 5.2), (2.0, 9.0), (4.0, 9.1), (8.0, 8.9), (16.0, 9.0),
           (40.0, 8.8), (120.0, 4.5), (240.0, 4.5)]
    found = label_plateaus(find_plateaus([(m * MIB, t * 1e12) for m, t in pts]),
                           {"L2": 60 * MIB})
    assert found["L2"].first_bytes == 2 * MIB and found["L2"].bytes_per_s == pytest.approx(9e12)


def test_the_flush_reads_its_buffer_and_writes_nothing():
    """A written flush leaves dirty lines whose write-back lands in the next timed call; the
    flush reads a zeroed buffer of max(n, 8 MiB): its sum is 0 and the buffer unchanged."""
    torch = pytest.importorskip("torch")
    from rooflab.probe.gpu.timing import MIN_FLUSH_BYTES, torch_flush

    flush = torch_flush(torch, torch.device("cpu"), 0)
    buf = flush.__self__
    assert buf.numel() * 4 == MIN_FLUSH_BYTES
    before = buf.data_ptr()
    assert int(flush()) == 0
    assert buf.data_ptr() == before and int(buf.abs().max()) == 0
    assert flush.__name__ == "sum"


# The H200's profile.json (run 2): its keys, as recorded on the device.
H200_HOST = {"backend", "board_model", "caches", "catalog", "catalog_match", "catalog_note",
             "clocks_after", "clocks_before", "compute_capability", "cuda", "device",
             "integrated", "l1_bytes", "l2_bytes", "l2_catalog_note", "memory_bytes",
             "mig_profile", "multiprocessors", "name", "platform", "python", "tf32_env",
             "threads", "torch", "triton", "unified_memory"}
H200_GPU = {"context_lost", "errors", "measurements", "mode", "nominal_checks", "overheads",
            "skipped", "sweep", "timer", "wall_s", "warnings"}
H200_MEMORY = {"best", "bytes_per_s", "iqr_rel", "kind", "level", "median", "method",
               "samples", "source", "spread"}
H200_RAW = {"best_s", "bytes_per_s_best", "clocks", "inner", "kind", "median_s", "seconds",
            "spread", "work_per_call", "work_unit"}


def test_the_cpu_device_profile_has_the_h200_profiles_structure():
    """Issue 4's acceptance, against a real CUDA profile: the probe on PyTorch's CPU device
    writes the keys the H200's did (host, extras.gpu, a memory ceiling, a raw copy)."""
    torch = pytest.importorskip("torch")
    from rooflab.hardware.profile import profile_to_dict
    from rooflab.probe.gpu import probe_gpu

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        doc = profile_to_dict(probe_gpu("cpu", "quick"))
    finally:
        torch.set_num_threads(threads)
    assert set(doc["host"]) == H200_HOST
    assert set(doc["extras"]["gpu"]) == H200_GPU
    dram = next(c for c in doc["measured"]["memory"] if c["level"] == "DRAM")
    assert H200_MEMORY <= set(dram) <= H200_MEMORY | {"warnings"}
    assert set(doc["extras"]["gpu"]["measurements"]["copy_torch"]) == H200_RAW

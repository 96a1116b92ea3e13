"""The GPU working-set sweep's split of work (review 14a #1): every program of the read
sweep does the same number of block reads at every size the H200 run makes, so a point
measures the cache level and not the split of work; the L1 sweep keeps each program on its
own blocks. Pure Python: the grid plan and the kernel's split, checked without a GPU (the
kernel's own split is checked against sweep_reads under TRITON_INTERPRET=1 by
check_kernels, tests/test_probe_gpu.py)."""

from __future__ import annotations

import pytest

from rooflab.probe.gpu.context import CUDA_SIZES
from rooflab.probe.gpu.memory import (
    PROGRAMS_PER_SM,
    SWEEP_BLOCK,
    l1_sweep_sizes,
    program_shares,
    sweep_grid,
    sweep_reads,
)
from rooflab.probe.gpu.sweep import sweep_sizes

MiB = 1 << 20
H200_SMS = 132
H200_L1 = 132 * (256 << 10)          # identity.L1_PER_SM[(9, 0)] x SMs


def _imbalance(grid) -> float:
    shares = program_shares(grid)
    return max(shares) / (sum(shares) / len(shares))


@pytest.mark.parametrize("l2_mib", [50, 60])   # the catalog's and the device's L2
@pytest.mark.parametrize("mode", ["quick", "default", "full"])
def test_every_l2_sweep_point_splits_its_work_evenly(mode, l2_mib):
    s = CUDA_SIZES[mode]
    sizes = sweep_sizes(s.sweep_lo, s.sweep_hi_l2 * l2_mib * MiB, s.sweep_step,
                        align=SWEEP_BLOCK * 4)      # as cache_sweep makes them on CUDA
    for size in sizes:
        g = sweep_grid(size, H200_SMS, s.sweep_call_bytes)
        # The whole grid at every size: no partial-occupancy points below 8.25 MiB.
        assert g.programs == H200_SMS * PROGRAMS_PER_SM == 1056
        assert g.working_set_bytes == size            # sweep sizes are whole 8 KiB blocks
        assert _imbalance(g) <= 1.05, (mode, size / MiB, program_shares(g)[:3])
        assert sum(program_shares(g)) == g.reps * g.nblocks


def test_the_old_nested_split_was_the_sawtooth_the_review_measured():
    # The nested loops gave each program ceil or floor(nblocks / programs) blocks per rep:
    # at the quick sweep's 10.24 MiB point (1311 blocks, 1056 programs) the slowest did 2
    # where the mean is 1.24 (review 14a: efficiency 0.62). The flat split: within 1 read.
    q = CUDA_SIZES["quick"]
    size = sweep_sizes(q.sweep_lo, 300 * MiB, q.sweep_step, align=SWEEP_BLOCK * 4)[2]
    g = sweep_grid(size, H200_SMS, q.sweep_call_bytes)
    assert g.nblocks == 1311 and g.reps == 50          # 10.24 MiB / 8 KiB; 512 MiB / set
    old_eff = (g.nblocks / g.programs) / -(-g.nblocks // g.programs)
    assert old_eff == pytest.approx(0.621, abs=1e-3)
    shares = program_shares(g)
    assert max(shares) - min(shares) == 1
    assert _imbalance(g) == pytest.approx(63 / (1311 * 50 / 1056))   # 1.015


def test_sweep_reads_is_the_flat_split():
    # 3 blocks, 8 programs, 5 reps: 15 reads, programs 0-6 take 2, program 7 one.
    reads = [sweep_reads(p, 3, 5, 8) for p in range(8)]
    assert reads[0] == [0, 2] and reads[1] == [1, 0] and reads[7] == [1]
    assert sorted(b for r in reads for b in r) == [0] * 5 + [1] * 5 + [2] * 5
    g = sweep_grid(3 * 8192, 1, 5 * 3 * 8192)
    assert (g.nblocks, g.programs, g.reps) == (3, 8, 5)
    assert program_shares(g) == [len(r) for r in reads]


@pytest.mark.parametrize("mode", ["default", "full"])   # quick runs no L1 sweep
def test_l1_sweep_points_are_balanced_and_each_program_keeps_its_blocks(mode):
    s = CUDA_SIZES[mode]
    sizes = l1_sweep_sizes(H200_L1 / 16, H200_L1 * 2, 1.5, H200_SMS)
    assert sizes[0] == pytest.approx(2.0625 * MiB) and sizes[-1] <= 2 * H200_L1
    assert len(sizes) >= 7
    for size in sizes:
        g = sweep_grid(size, H200_SMS, s.sweep_call_bytes, l1=True)
        assert g.working_set_bytes == size
        assert g.nblocks % g.programs == 0
        assert _imbalance(g) == 1.0
        # Program 5 reads the same nblocks / programs blocks in every rep.
        reads = sweep_reads(5, g.nblocks, min(g.reps, 3), g.programs)
        per_rep = g.nblocks // g.programs
        assert len(set(reads)) == per_rep
        assert reads[:per_rep] * min(g.reps, 3) == reads

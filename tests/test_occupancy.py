"""`rooflab ai occupancy` (model/occupancy.py): CUDA's occupancy calculator, checked by hand
and against the theoretical occupancy Nsight Compute recorded on a CC 8.9 GPU."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_inproc import run_cli

from rooflab.errors import InputError
from rooflab.hardware.smem import sm_limits
from rooflab.model.occupancy import occupancy

FIX = Path("/work/shared/fixtures/ncu/nersc-gpp")
KIB = 1024


def _cli(*args: str) -> subprocess.CompletedProcess:
    return run_cli("ai", "occupancy", *args)


def test_hand_cases():
    a100, ada, t4 = sm_limits("8.0"), sm_limits("8.9"), sm_limits("7.5")
    # A100, 256 threads, 64 regs: 64 x 32 = 2048 regs per warp; 16384 per sub-partition / 2048
    # = 8 warps x 4 = 32 warps / 8 per block = 4 blocks = 32 of 64 warps = 50 %
    o = occupancy(256, 64, 0, a100)
    assert (o.limit_warps, o.limit_registers, o.limit_blocks) == (8, 4, 32)
    assert (o.active_blocks, o.active_warps, o.occupancy, o.binding) == \
        (4, 32, 0.5, ("registers",))
    # + 48 KiB smem: (49152 + 1024 reserved) = 50176 B; 167936 // 50176 = 3 blocks = 37.5 %
    o = occupancy(256, 64, 48 * KIB, a100)
    assert (o.smem_allocated_per_block, o.limit_shared_memory, o.active_blocks) == \
        (50176, 3, 3)
    assert o.occupancy == 24 / 64 and o.binding == ("shared_memory",)
    # A100, 32 regs, 128 threads: warps 64 // 4 = 16; regs 1024/warp -> 16 x 4 = 64 warps
    # / 4 = 16; blocks 32 -> 16 blocks = 64 warps = 100 %, warps and registers tie
    o = occupancy(128, 32, 0, a100)
    assert o.active_blocks == 16 and o.occupancy == 1.0
    assert o.binding == ("warps", "registers")
    # 32-thread blocks on CC 8.9: 48 warps would take 48 blocks, the cap is 24 -> 50 %
    o = occupancy(32, 16, 0, ada)
    assert (o.limit_warps, o.active_blocks, o.occupancy, o.binding) == \
        (48, 24, 0.5, ("blocks",))
    # T4 (7.5): 32 warps per SM; 1024 threads = 32 warps -> 1 block = 100 %; no reserved
    # smem on 7.x, 256-B unit: 1000 B -> 1024 B
    o = occupancy(1024, 32, 1000, t4)
    assert (o.active_blocks, o.occupancy, o.smem_allocated_per_block) == (1, 1.0, 1024)
    # rounding: 33 regs x 32 = 1056 -> 1280 per warp; 16384 // 1280 = 12 x 4 = 48 / 8 = 6
    assert occupancy(256, 33, 0, a100).limit_registers == 6


def test_impossible_launches_are_refused():
    a100 = sm_limits("8.0")
    for args in ((2048, 32, 0), (256, 300, 0), (1024, 255, 0), (128, 32, 200 * KIB)):
        with pytest.raises(InputError):
            occupancy(*args, a100)


def test_carveout_too_small_is_raised_to_the_next_config():
    # 40 KiB + 1 KiB needs 41 KiB: a 32 KiB carveout becomes 64 KiB, one block (CC 8.9)
    o = occupancy(128, 32, 40 * KIB, sm_limits("8.9"), carveout=32 * KIB)
    assert o.smem_config_bytes == 64 * KIB and o.limit_shared_memory == 1
    assert "64K" in o.carveout_note


def _ncu_launches(path: Path):
    ncu_report = pytest.importorskip("ncu_report")
    ctx = ncu_report.load_report(str(path))
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            act = rng.action_by_idx(a)
            yield {n: act.metric_by_name(n).value() for n in act.metric_names()
                   if n.startswith(("launch__", "device__attribute_", "sm__maximum_warps"))}


@pytest.mark.parametrize("name", ["output5.ncu-rep", "output1.ncu-rep"])
def test_matches_nsight_compute(name):
    """Every launch: ncu's four block limits and sm__maximum_warps_per_active_cycle_pct."""
    launches = list(_ncu_launches(FIX / name))
    assert len(launches) >= 2
    for m in launches:
        cc = f"{m['device__attribute_compute_capability_major']}." \
             f"{m['device__attribute_compute_capability_minor']}"
        lim = sm_limits(cc)
        # the table's row is the device's own attributes
        assert (lim.max_warps, lim.max_blocks, lim.regs_per_sm, lim.smem.per_sm_bytes,
                lim.smem.per_block_bytes, lim.smem.reserved_per_block_bytes) == (
            m["device__attribute_max_warps_per_multiprocessor"],
            m["device__attribute_max_blocks_per_multiprocessor"],
            m["device__attribute_max_registers_per_multiprocessor"],
            m["device__attribute_max_shared_memory_per_multiprocessor"],
            m["device__attribute_max_shared_memory_per_block_optin"],
            m["device__attribute_reserved_shared_memory_per_block"])
        smem = int(m["launch__shared_mem_per_block_static"]
                   + m["launch__shared_mem_per_block_dynamic"])
        o = occupancy(int(m["launch__block_size"]), int(m["launch__registers_per_thread"]),
                      smem, lim, carveout=int(m["launch__shared_mem_config_size"]))
        assert o.smem_allocated_per_block == m["launch__shared_mem_per_block"]
        assert (o.limit_warps, o.limit_registers, o.limit_shared_memory, o.limit_blocks) == (
            m["launch__occupancy_limit_warps"], m["launch__occupancy_limit_registers"],
            m["launch__occupancy_limit_shared_mem"], m["launch__occupancy_limit_blocks"])
        assert 100 * o.occupancy == pytest.approx(m["sm__maximum_warps_per_active_cycle_pct"])


def test_cli_text_json_and_errors():
    r = _cli("--block", "256", "--regs", "64", "--on", "a100-80gb-sxm")
    assert r.returncode == 0, r.stderr
    assert "4 blocks = 32 of 64 warps: theoretical occupancy 50.0 %" in r.stdout
    r = _cli("--block", "128", "--regs", "86", "--smem", "4K", "--cc", "8.9", "--carveout",
             "64K", "--json")
    d = json.loads(r.stdout)
    assert d["block_limits"] == {"warps": 12, "registers": 5, "shared_memory": 12,
                                 "blocks": 24}
    assert d["active_warps_per_sm"] == 20 and d["binding"] == ["registers"]
    assert d["theoretical_occupancy"] == pytest.approx(20 / 48)
    assert d["smem_per_block_allocated_bytes"] == 5120
    for bad in (["--block", "2000", "--regs", "32", "--cc", "8.0"],
                ["--block", "256", "--regs", "32", "--cc", "eight"],
                ["--block", "256", "--regs", "32", "--cc", "7.2"],
                ["--block", "256", "--regs", "32", "--smem", "4MB", "--cc", "8.0"],
                ["--block", "256", "--regs", "32"]):
        r = _cli(*bad)
        assert r.returncode == 2 and "Traceback" not in r.stderr, (bad, r.stderr)

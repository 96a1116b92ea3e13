"""`rooflab ai occupancy` (session 16 review G1): the carveout rounded up as the driver and
cuda_occupancy.h round it, a percent carveout, what admits one more block (the levers), and
text that fits the compute capability. Every number by hand below."""

from __future__ import annotations

import json
import subprocess

from cli_inproc import run_cli

from rooflab.hardware.smem import sm_limits
from rooflab.model.occupancy import levers, occupancy

KIB = 1024


def _occ(*args: str) -> subprocess.CompletedProcess:
    return run_cli("ai", "occupancy", *args)


def test_carveout_is_rounded_up_to_a_size_the_sm_supports():
    # A100 (8.0) sizes 0/8/16/32/64/100/132/164K: a 50K preference is a 64K configuration
    # (cudaOccAlignUpShmemSizeVoltaPlus); 10K + 1K reserved = 11264 B -> 65536 // 11264 = 5
    # blocks (50K would give 4)
    o = occupancy(128, 32, 10 * KIB, sm_limits("8.0"), carveout=50 * KIB)
    assert (o.smem_config_bytes, o.limit_shared_memory) == (64 * KIB, 5)
    assert "64K" in o.carveout_note
    # Turing (7.5) is 32K or 64K: 16K is 32K; 1 KiB blocks (no reserve on 7.x) -> 32
    o = occupancy(128, 32, 1 * KIB, sm_limits("7.5"), carveout=16 * KIB)
    assert (o.smem_config_bytes, o.limit_shared_memory) == (32 * KIB, 32)
    # a legal size is kept without a note
    o = occupancy(128, 32, 10 * KIB, sm_limits("9.0"), carveout=100 * KIB)
    assert (o.smem_config_bytes, o.limit_shared_memory, o.carveout_note) == \
        (100 * KIB, 9, None)


def test_percent_carveout_cli():
    # H100: 25 % of 228K = 58368 B (57K) -> rounded up to 64K: 5 blocks of 11264 B = 31.25 %
    r = _occ("--block", "128", "--regs", "32", "--smem", "10K", "--cc", "9.0",
             "--carveout", "25%", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert (d["smem_config_bytes"], d["block_limits"]["shared_memory"]) == (65536, 5)
    assert d["theoretical_occupancy"] == 20 / 64
    for bad in ("120%", "x%", "300K"):
        r = _occ("--block", "128", "--regs", "32", "--cc", "9.0", "--carveout", bad)
        assert r.returncode == 2 and "--carveout" in r.stderr and "Traceback" not in r.stderr


def test_levers_invert_each_binding_limit():
    a100 = sm_limits("8.0")
    # 128 threads x 64 regs: 8 blocks by registers; 9 blocks = 36 warps = 9 per sub-
    # partition -> 16384 // 9 = 1820 -> 1792 per warp = 56 regs (57 x 32 = 1824 -> 2048)
    o = occupancy(128, 64, 0, a100)
    (lv,) = levers(o, a100)
    assert "9 blocks need <= 56 registers" in lv and "__launch_bounds__(128, 9)" in lv
    assert occupancy(128, 56, 0, a100).active_blocks == 9
    assert occupancy(128, 57, 0, a100).active_blocks == 8
    # 256 threads, 48K: 3 blocks of 50176 B; 4 need 167936 // 4 = 41984 - 1024 = 40960 B
    o = occupancy(256, 64, 48 * KIB, a100)
    assert "4 blocks need <= 40960 B" in levers(o, a100)[0]
    assert occupancy(256, 32, 40960, a100).limit_shared_memory == 4
    assert occupancy(256, 32, 40961, a100).limit_shared_memory == 3
    # RTX 4090 (8.9) 256 x 40 regs, 20K: 4 blocks by shared memory; 5 need 102400 // 5 =
    # 20480 - 1024 = 19456 B
    ada = sm_limits("8.9")
    assert "5 blocks need <= 19456 B" in levers(occupancy(256, 40, 20 * KIB, ada), ada)[0]
    # 640 threads = 20 warps: 3 blocks = 60 of 64 warps; 32-thread blocks would need 64 > 32
    # blocks, so the sizes that fill 64 warps are 64..1024 threads
    (lv,) = levers(occupancy(640, 32, 0, a100), a100)
    assert "leave 4 of 64 warp slots idle" in lv and "64, 128, 256, 512, 1024" in lv
    # 32-thread blocks on 8.9: the 24-block cap binds; 2-warp blocks fill 48 warps
    (lv,) = levers(occupancy(32, 16, 0, ada), ada)
    assert "at most 24 blocks: blocks of 64 or more threads" in lv
    assert levers(occupancy(128, 32, 0, a100), a100) == ()         # 100 %


def test_text_fits_the_capability():
    r = _occ("--block", "1024", "--regs", "64", "--cc", "9.0")
    assert "resident: 1 block = 32 of 64 warps" in r.stdout, r.stdout
    assert "lever: 2 blocks need <= 32 registers per thread" in r.stdout
    r = _occ("--block", "64", "--regs", "32", "--cc", "7.5", "--smem", "1000")
    assert "reserved 1 KiB" not in r.stdout and "no reserved bytes on 7.x" in r.stdout
    r = _occ("--help")
    assert "latency" in r.stdout and "提高占用率" in r.stdout

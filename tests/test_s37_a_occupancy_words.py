"""`rooflab ai occupancy --on MI300X`'s VGPR row shows its numbers (s37 A, a first user's
walk): it read '512 // that waves per SIMD x 4 / 4', which a reader could not redo."""

from __future__ import annotations

from cli_inproc import run_cli


def _vgpr_row(regs: str, block: str = "256") -> str:
    r = run_cli("ai", "occupancy", "--block", block, "--regs", regs, "--on", "MI300X")
    assert r.returncode == 0, r.stderr
    (row,) = [x for x in r.stdout.splitlines() if x.strip().startswith("VGPRs ")]
    return " ".join(row.split())


def test_vgpr_row_has_the_division():
    """128 VGPRs: 512 // 128 = 4 waves a SIMD, x 4 SIMDs = 16 waves, / 4 waves a workgroup
    (256 / 64) = 4 workgroups."""
    assert _vgpr_row("128") == ("VGPRs 4 128 VGPRs per wave (granule 8): 512 // 128 = 4 waves "
                                "per SIMD x 4 SIMDs / 4 <- binds")


def test_vgpr_row_says_the_cap_of_8():
    """32 VGPRs: 512 // 32 = 16, but a SIMD holds at most 8 waves: 8 x 4 / 4 = 8 workgroups;
    90 VGPRs round up to 96: 512 // 96 = 5, 5 x 4 / 4 = 5."""
    assert "512 // 32 = 16, at most 8 waves per SIMD x 4 SIMDs / 4" in _vgpr_row("32")
    assert _vgpr_row("90").startswith("VGPRs 5 96 VGPRs per wave (granule 8): 512 // 96 = 5 "
                                      "waves per SIMD x 4 SIMDs / 4")


def test_one_wave_is_singular():
    """512 VGPRs, a 64-item workgroup: 512 // 512 = 1 wave a SIMD x 4 SIMDs / 1 = 4."""
    assert "512 // 512 = 1 wave per SIMD x 4 SIMDs / 1" in _vgpr_row("512", "64")

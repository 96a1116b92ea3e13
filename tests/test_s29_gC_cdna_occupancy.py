"""Session 29 gC: wave64 occupancy for AMD CDNA GPUs (review s28 R4 F10), the catalog's
word on fp16/bf16 vector work (F16) and `llm --tp`'s network wording (F15).

Every expected number is worked by hand from HIP's calculator
(hipOccupancyMaxActiveBlocksPerMultiprocessor): a CU holds 4 SIMDs x 8 waves = 32; a SIMD
lane holds 512 VGPRs, a wave's count rounded up to 8; 800 SGPRs per SIMD, rounded to 16;
LDS 64 KiB per CU on gfx90a/gfx942, 160 KiB on gfx950."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.hardware.cdna_limits import CU_BY_GFX, GFX_BY_DEVICE, cu_limits
from rooflab.model.occupancy_cdna import cu_levers, cu_occupancy

KIB = 1024


def _json(capsys, args: list[str]) -> dict:
    assert main(["ai", "occupancy", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_mi300x_48k_lds_holds_one_workgroup(capsys):
    # the review's launch: 65536 // 49152 = 1 workgroup of 4 waves = 4 / 32 = 12.5 %;
    # waves allow 32 // 4 = 8, VGPRs 512 // 64 = 8 per SIMD x 4 // 4 = 8
    d = _json(capsys, ["--block", "256", "--regs", "64", "--smem", "48K", "--on", "MI300X"])
    assert d["gfx_target"] == "gfx942" and d["wave_size"] == 64
    assert d["block_limits"] == {"waves": 8, "vgprs": 8, "sgprs": None, "lds": 1}
    assert d["active_waves_per_cu"] == 4 and d["max_waves_per_cu"] == 32
    assert d["theoretical_occupancy"] == pytest.approx(0.125)
    assert d["binding"] == ["lds"]
    # 2 workgroups need 65536 // 2 = 32768 B each
    assert any("<= 32768 B of LDS" in v for v in d["levers"])


def test_vgprs_bind_and_the_lever_inverts_them():
    lim = cu_limits("gfx942")
    o = cu_occupancy(256, 128, 0, lim)
    # 512 // 128 = 4 waves per SIMD x 4 SIMDs = 16 waves // 4 = 4 workgroups = 50 %
    assert (o.active_blocks, o.occupancy, o.binding) == (4, 0.5, ("vgprs",))
    # 5 workgroups = 20 waves = 5 per SIMD: 512 // 5 = 102 -> 96 (granule 8)
    (lever,) = cu_levers(o, lim)
    assert "<= 96 VGPRs" in lever and "amdgpu_waves_per_eu(5)" in lever
    # 96 really admits 5: 512 // 96 = 5 per SIMD x 4 = 20 // 4 = 5
    assert cu_occupancy(256, 96, 0, lim).active_blocks == 5
    # a count off the granule rounds up: 97 VGPRs allocate 104, 512 // 104 = 4
    assert cu_occupancy(256, 97, 0, lim).vgprs_allocated == 104
    assert cu_occupancy(256, 97, 0, lim).active_blocks == 4


def test_sgprs_bind_past_96_on_mi250x(capsys):
    # 102 SGPRs round to 112: 800 // 112 = 7 waves per SIMD = 28 of 32 = 87.5 %
    d = _json(capsys, ["--block", "64", "--regs", "32", "--sgprs", "102", "--on", "mi250x"])
    assert d["gfx_target"] == "gfx90a" and d["block_limits"]["sgprs"] == 28
    assert d["theoretical_occupancy"] == pytest.approx(0.875) and d["binding"] == ["sgprs"]
    # 96 is a whole granule: 800 // 96 = 8, no limit below the 8 wave slots
    assert cu_occupancy(64, 32, 0, cu_limits("gfx90a"), sgprs=96).occupancy == 1.0


def test_cdna4_has_160k_of_lds(capsys):
    # 163840 // 81920 = 2 workgroups on an MI355X; the same block cannot start on gfx942
    d = _json(capsys, ["--block", "256", "--regs", "32", "--smem", "80K", "--on", "mi355x"])
    assert d["gfx_target"] == "gfx950" and d["block_limits"]["lds"] == 2
    assert main(["ai", "occupancy", "--block", "256", "--regs", "32", "--smem", "80K",
                 "--cc", "gfx942"]) == 2
    assert "0..64K bytes of LDS" in capsys.readouterr().err


def test_a_launch_the_cu_cannot_hold_is_refused(capsys):
    # 1024 work-items = 16 waves need 4 per SIMD; 256 VGPRs leave 512 // 256 = 2
    assert main(["ai", "occupancy", "--block", "1024", "--regs", "256", "--on", "mi300x"]) == 2
    err = capsys.readouterr().err
    assert "the launch fails" in err and "Traceback" not in err
    with pytest.raises(InputError, match="1..1024 work-items"):
        cu_occupancy(1025, 32, 0, cu_limits("gfx942"))
    with pytest.raises(InputError, match="0..512 VGPRs"):
        cu_occupancy(64, 513, 0, cu_limits("gfx942"))


def test_rocm_torchs_9_4_points_at_gfx942_not_at_hopper(capsys):
    assert main(["ai", "occupancy", "--block", "256", "--regs", "64", "--cc", "9.4"]) == 2
    err = capsys.readouterr().err
    assert "gfx942" in err and "not a CUDA compute capability" in err
    assert "nearest" not in err            # the old answer invited --cc 9.0 (Hopper)
    out = _json(capsys, ["--block", "256", "--regs", "64", "--cc", "gfx942:sramecc+:xnack-"])
    assert out["gfx_target"] == "gfx942" and out["theoretical_occupancy"] == 1.0


def test_a_rocm_profile_gives_its_gcn_arch(capsys, tmp_path):
    from rooflab.hardware.catalog import lookup_roof
    from rooflab.hardware.profile import MachineProfile, save_profile

    path = tmp_path / "mi300x.json"
    save_profile(path, MachineProfile(host={"name": "AMD Instinct MI300X", "backend": "rocm",
                                            "multiprocessors": 304, "gcn_arch": "gfx942"},
                                      nominal=lookup_roof("mi300x")))
    d = _json(capsys, ["--block", "512", "--regs", "128", "--on", str(path)])
    # 512 // 128 = 4 per SIMD x 4 = 16 waves // 8 = 2 workgroups = 50 %
    assert d["gfx_target"] == "gfx942" and d["active_blocks_per_cu"] == 2


def test_nvidia_options_are_refused_on_amd_and_back(capsys):
    assert main(["ai", "occupancy", "--block", "256", "--regs", "64", "--on", "mi300x",
                 "--carveout", "64K"]) == 2
    assert "no carveout" in capsys.readouterr().err
    assert main(["ai", "occupancy", "--block", "256", "--regs", "64", "--on", "a100",
                 "--sgprs", "40"]) == 2
    assert "NVIDIA GPUs have none" in capsys.readouterr().err
    # the NVIDIA path is unchanged: A100, 256 threads, 64 registers = 4 blocks = 50 %
    assert main(["ai", "occupancy", "--block", "256", "--regs", "64", "--on", "a100"]) == 0
    assert "theoretical occupancy 50.0 %" in capsys.readouterr().out


def test_every_amd_gpu_in_the_catalog_has_a_tabled_target():
    from rooflab.hardware.catalog import all_devices

    amd = [d.name for d in all_devices() if d.vendor == "AMD" and d.kind == "gpu"]
    assert amd and sorted(amd) == sorted(GFX_BY_DEVICE)
    assert set(GFX_BY_DEVICE.values()) <= set(CU_BY_GFX)
    # 4 SIMDs x 512 VGPRs x 64 lanes x 4 B = the ROCm table's 512 KiB VGPR file per CU
    lim = CU_BY_GFX["gfx942"]
    assert lim.simds * lim.vgprs_per_simd * lim.wave_size * 4 == 512 * KIB


def test_the_text_answer_speaks_of_waves_and_lds(capsys):
    assert main(["ai", "occupancy", "--block", "256", "--regs", "64", "--smem", "48K",
                 "--on", "MI300X"]) == 0
    out = capsys.readouterr().out
    assert "theoretical occupancy 12.5 % (bound by LDS)" in out
    assert "warp" not in out and " SM" not in out


def test_amd_catalog_says_why_fp16_vector_work_takes_fp32(capsys):
    from rooflab.hardware.catalog import all_devices

    for dev in all_devices():
        if dev.vendor == "AMD" and dev.kind == "gpu":
            assert any("no fp16 or bf16 vector ceiling, on purpose" in n for n in dev.notes), \
                dev.name


def test_llm_tp_help_names_the_network_for_every_vendor(capsys):
    assert main(["llm", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    out = out.replace("│ ", "").replace(" │", "")
    assert "cross InfiniBand" not in out and "400Gb/s InfiniBand past 8 GPUs" not in out
    assert "AMD and Gaudi too" in " ".join(out.split())

"""Review s28 R4 (an AMD Instinct user): the xGMI mesh (F1), MI250X dies (F2, F4), the
driver's memory (F5) and 2:4 sparsity where no sparse rate exists (F6). Every expected number
is worked out by hand in the comments, from the catalog's figures and their sources."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.hardware.catalog import lookup, parse_catalog_text
from rooflab.model.comm_link import device_ring_link, group_links, xgmi_ring_link


def _run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


# --- F1: the MI300X full mesh ----------------------------------------------------------------
# one x16 link at 32 Gb/s per lane = 128 GB/s both directions, 64 per direction; a ring over k
# GPUs of the 8-GPU mesh uses k-1 links per GPU (ROCm/rccl README, PR 1270)
@pytest.mark.parametrize("gpus, gbps", [(2, 64), (3, 128), (4, 192), (8, 448)])
def test_a_mesh_ring_gets_the_links_its_group_has(gpus, gbps):
    for name in ("MI300X", "MI325X"):
        link = device_ring_link(lookup(name), gpus)
        assert link.level == "xGMI"
        assert link.bus_bytes_per_s == pytest.approx(gbps * 1e9)
        assert "full mesh" in link.source and f"{gpus - 1} x 64" in link.source


def test_nvswitch_gpus_keep_one_figure_for_every_group():
    # H100 SXM: NVLink 900 GB/s both directions through NVSwitch, every pair 450 per direction
    for n in (2, 4, 8):
        assert device_ring_link(lookup("H100"), n).bus_bytes_per_s == pytest.approx(450e9)
    assert xgmi_ring_link(lookup("H100"), 2) is None and group_links(lookup("H100")) == {}


def test_an_mi210_ring_past_its_4_gpu_hive_runs_on_pcie():
    # 3 links of 100 GB/s in a 4-GPU hive: 2 GPUs 50, 4 GPUs 150 per direction; 8 GPUs are two
    # hives joined over PCIe Gen4 x16: 16 x 16 GT/s x 128/130 / 8 = 31.5 GB/s
    dev = lookup("MI210")
    assert device_ring_link(dev, 2).bus_bytes_per_s == pytest.approx(50e9)
    assert device_ring_link(dev, 4).bus_bytes_per_s == pytest.approx(150e9)
    eight = device_ring_link(dev, 8)
    assert eight.level == "PCIe"
    assert eight.bus_bytes_per_s == pytest.approx(16 * 16e9 * 128 / 130 / 8)


def test_llm_tp2_on_mi300x_pays_the_one_link():
    # Llama-3-70B, batch 16, prompt 512: 160 all-reduces of 16 x 8192 x 2 B = 262,144 B per
    # decode step; ring of 2: 2(n-1)/n = 1 x the bytes. Decode: 160 x 262144 / 64e9 = 655 us;
    # prefill: 160 x 262144 x 512 / 64e9 = 335.5 ms (on 448 GB/s it was 47.9 ms)
    code, out, err = _run("-q", "llm", "llama-3-70b", "--on", "MI300X", "--tp", "2",
                          "--batch", "16", "--json")
    assert code == 0, err
    par = json.loads(out)["llm"]["parallel"]
    assert par["link_bytes_per_s"] == pytest.approx(64e9)
    assert par["comm_s"] == pytest.approx(160 * 262144 / 64e9)
    assert par["prefill_comm_s"] == pytest.approx(160 * 262144 * 512 / 64e9)


def test_llm_tp8_on_mi300x_uses_all_seven_links():
    code, out, err = _run("-q", "llm", "llama-3-70b", "--on", "MI300X", "--tp", "8",
                          "--batch", "16", "--json")
    assert code == 0, err
    assert json.loads(out)["llm"]["parallel"]["link_bytes_per_s"] == pytest.approx(448e9)


def test_scale_rows_on_mi300x_take_their_groups_link():
    # h 4096, 32 blocks: 12 h^2 x 32 = 6.44e9 parameters, bf16 gradients 12.885 GB.
    # 2 GPUs on 64 GB/s: 2(1)/2 x 12.885e9 / 64e9 = 201.3 ms (no overlap); 4 GPUs on 192:
    # 1.5 x 12.885e9 / 192e9 = 100.7 ms; 8 GPUs on 448: 1.75 x 12.885e9 / 448e9 = 50.3 ms
    code, out, err = _run("-q", "scale", "--on", "MI300X", "--hidden", "4096", "--blocks",
                          "32", "--tokens", "4096", "--no-overlap", "--json")
    assert code == 0, err
    doc = json.loads(out)
    grads = 12 * 4096**2 * 32 * 2
    rows = {p["gpus"]: p for p in doc["points"]}
    for n, bw in ((2, 64e9), (4, 192e9), (8, 448e9)):
        assert rows[n]["link_bytes_per_s"] == pytest.approx(bw)
        assert rows[n]["comm_s"] == pytest.approx(2 * (n - 1) / n * grads / bw)
    # the link binds at 2 GPUs: 201 ms of link against 121 ms of compute
    assert doc["comm_binds_at"] == 2
    assert doc["links"]["pair"]["bus_bytes_per_s"] == pytest.approx(64e9)


def test_scale_text_says_the_pair_is_one_mesh_link_not_a_bridge():
    code, out, _ = _run("scale", "--on", "MI300X", "--hidden", "4096", "--blocks", "32",
                        "--tokens", "4096")
    text = " ".join(out.split())
    assert code == 0 and "2 devices: xGMI 64 GB/s" in text
    assert "a bridge joins 2 cards" not in text


def test_a_pipeline_stage_send_on_a_mesh_takes_one_link():
    # a stage sends to one GPU: over the one link joining the two (64 GB/s), not 8 GPUs' 448
    code, out, err = _run("-q", "llm", "llama-3-8b", "--on", "MI300X", "--tp", "4", "--pp",
                          "2", "--batch", "8", "--json")
    assert code == 0, err
    doc = json.loads(out)["llm"]
    text = json.dumps(doc)
    assert "1 x 64 = 64 GB/s" in text


def test_catalog_links_are_checked_on_load():
    base = ('[[device]]\nname = "X"\nvendor = "AMD"\nkind = "gpu"\nsource = "https://x"\n'
            'memory_gb = 1\nmemory_gbps = 1\ninterconnect = "Infinity Fabric"\n'
            'interconnect_gbps = 1\n[device.tflops]\nfp32_vector = 1\n[device.links]\n')
    with pytest.raises(ParseError, match="unknown key 'meshes'"):
        parse_catalog_text(base + "link_gbps = 128\nmeshes = 7\n", "x.toml")
    with pytest.raises(ParseError, match="needs link_gbps"):
        parse_catalog_text(base + "mesh = 7\n", "x.toml")
    with pytest.raises(ParseError, match="mesh must be a positive number"):
        parse_catalog_text(base + "link_gbps = 128\nmesh = 0\n", "x.toml")


# --- F4: MI250X die links --------------------------------------------------------------------
def test_mi250x_dies_of_one_package_get_four_links_others_one():
    # ROCm "MI250 microarchitecture": 50 GB/s per direction per x16 link; OLCF Frontier: 4
    # links between the 2 GCDs of one MI250X (200 GB/s), 1-2 between GCDs of different ones
    dev = lookup("MI250X")
    assert device_ring_link(dev, 2, dies=True).bus_bytes_per_s == pytest.approx(200e9)
    assert device_ring_link(dev, 8, dies=True).bus_bytes_per_s == pytest.approx(50e9)
    # --tp 2 on the package (llm): 4 dies of 2 packages, slowest hop one link
    assert device_ring_link(dev, 2).bus_bytes_per_s == pytest.approx(50e9)


def test_choose_ranks_the_mi250x_die_on_its_own_link(tmp_path):
    # the one-die row of `choose` over a --tp 8 decode document: 8 dies, one link, 50 GB/s
    code, out, err = _run("-q", "llm", "llama-3-70b", "--on", "MI300X", "--tp", "8", "--batch",
                          "16", "--phase", "decode", "--json")
    assert code == 0, err
    doc = tmp_path / "l70.json"
    doc.write_text(out)
    code, out, err = _run("choose", str(doc), "--among", "MI300X,MI250X")
    text = " ".join(out.split())
    assert code == 0, err
    # the row says what its --tp counts (session 32: dies here, packages in llm)
    assert ("AMD Instinct MI250X (--tp 8 counts dies here, 4 packages; `rooflab llm --on "
            "\"AMD Instinct MI250X\" --tp 4` counts packages: the same 8 dies): + ") in text
    assert " on 50 GB/s" in text
    assert "on 448 GB/s" in text and "on 400 GB/s" not in text


# --- F2: a profiler recording on an MI250X is one die ------------------------------------------
def test_rocprof_on_mi250x_judges_one_die(tmp_path):
    # rocprof v1 triad on one GCD: 3 GiB (2^25 x 64 B read + 2^24 x 64 B written) in 2.478 ms
    # = 1.30 TB/s: 79 % of one GCD's 3276.8 / 2 = 1638.4 GB/s, not 40 % of the package's
    f = tmp_path / "results.csv"
    f.write_text("Index,KernelName,gpu-id,grd,wgr,BeginNs,EndNs,SQ_INSTS_VALU_FMA_F32,"
                 "TCC_EA_RDREQ_sum,TCC_EA_RDREQ_32B_sum,TCC_EA_WRREQ_sum,TCC_EA_WRREQ_64B_sum\n"
                 "0,triad_kernel,0,268435456,256,1000000000000000,1000000002478000,4194304,"
                 "33554432,0,16777216,16777216\n")
    code, out, err = _run("-q", "rocprof", str(f), "--on", "mi250x", "--json")
    assert code == 0, err
    doc = json.loads(out)
    dram = next(c for c in doc["roof"]["memory"] if c["level"] == "DRAM")
    assert dram["bytes_per_s"] == pytest.approx(1638.4e9)
    row = doc["analysis"][0]
    bw = 3 * 2**30 / 2.478e-3
    assert row["achieved_bytes_per_s"] == pytest.approx(bw)
    assert row["percent_of_roof"] == pytest.approx(100 * bw / 1638.4e9, rel=1e-3)   # 79.3
    assert "one die's roof" in doc["roof_source"]


def test_rocprof_on_mi300x_keeps_the_whole_roof(tmp_path):
    f = tmp_path / "results.csv"
    f.write_text("Index,KernelName,gpu-id,grd,wgr,BeginNs,EndNs,SQ_INSTS_VALU_FMA_F32,"
                 "TCC_EA0_RDREQ_sum,TCC_EA0_RDREQ_32B_sum,TCC_EA0_WRREQ_sum,"
                 "TCC_EA0_WRREQ_64B_sum\n0,k,0,1024,256,1000,2001000,16,1000000,0,1,1\n")
    code, out, err = _run("-q", "rocprof", str(f), "--on", "mi300x", "--json")
    assert code == 0, err
    doc = json.loads(out)
    dram = next(c for c in doc["roof"]["memory"] if c["level"] == "DRAM")
    assert dram["bytes_per_s"] == pytest.approx(5.3e12) and "one die" not in doc["roof_source"]


# --- F5: the driver's memory on an MI300X --------------------------------------------------------
def test_mi300x_usable_memory_is_the_drivers():
    # 196,592 MiB (torch total_memory, ROCm/ROCm#4203) = 206,141,652,992 B (rocm-smi)
    assert lookup("MI300X").usable_memory_bytes == 206_141_652_992


def test_gpu_mem_util_on_mi300x_is_of_the_drivers_total():
    # 0.9 x 206.14 GB = 185.5 GB, said as rocm-smi's, not nvidia-smi's
    code, out, err = _run("llm", "llama-3-70b", "--on", "MI300X", "--batch", "64",
                          "--gpu-mem-util", "0.9", "--phase", "decode")
    text = " ".join(out.split())
    assert code == 0, err
    assert "0.9 x rocm-smi's 206 GB" in text and "nvidia-smi" not in text
    code, out, err = _run("-q", "llm", "llama-3-70b", "--on", "MI300X", "--batch", "64",
                          "--gpu-mem-util", "0.9", "--phase", "decode", "--json")
    fp = json.loads(out)["llm"]["footprint"]
    assert fp["device_bytes"] == pytest.approx(0.9 * 206_141_652_992)


# --- F6: 2:4 sparsity only where a sparse rate exists ---------------------------------------------
def _analysis(tmp_path, on: str) -> str:
    # a bf16 GEMM (2^31 MFMA MOPs x 512 = 1.1e12 FLOP in 1.5 ms) and an fp64 DGEMM
    # (2^28 x 512 = 1.37e11 FLOP in 1 ms), both Tensile kernels with weights
    f = tmp_path / "pmc_perf.csv"
    f.write_text(
        "Dispatch_ID,Kernel_Name,GPU_ID,Start_Timestamp,End_Timestamp,"
        "SQ_INSTS_VALU_MFMA_MOPS_BF16,SQ_INSTS_VALU_MFMA_MOPS_F64,TCC_EA0_RDREQ_sum,"
        "TCC_EA0_RDREQ_32B_sum,TCC_BUBBLE_sum,TCC_EA0_WRREQ_sum,TCC_EA0_WRREQ_64B_sum\n"
        "0,Cijk_Alik_Bljk_BBS_BH_MT256x256x64_MI16x16x16,2,0,1500000,2147483648,0,2097152,0,"
        "2097152,2097152,2097152\n"
        "1,Cijk_Alik_Bljk_DB_MT128x128x16_MI16x16x4,2,2000000,3000000,0,268435456,600000,0,"
        "600000,262144,262144\n")
    out = tmp_path / f"an_{on}.json"
    code, _, err = _run("-q", "rocprof", str(f), "--on", on, "-o", str(out))
    assert code == 0, err
    return str(out)


def _speedups(path: str, *extra: str) -> dict[str, float]:
    code, out, err = _run("-q", "whatif", path, "--sparsity", "2:4", *extra, "--json")
    assert code == 0, err
    doc = json.loads(out)
    return {m["kernel"]: m["speedup"] for m in doc["moves"]}


def test_sparsity_skips_no_fp64_math_on_mi300x(tmp_path):
    got = _speedups(_analysis(tmp_path, "mi300x"), "--on", "mi300x")
    gemm = next(v for k, v in got.items() if "BBS" in k)
    dgemm = next(v for k, v in got.items() if "_DB_" in k)
    # bf16: MI300X has a 2614.9 sparse bf16 rate: compute-bound math halves, 2.00x
    assert gemm == pytest.approx(2.0, rel=1e-3)
    # fp64 MFMA: no sparse path, compute-bound: FLOP stay, 1.00x (it was 2.00x)
    assert dgemm == pytest.approx(1.0, rel=1e-3)


def test_sparsity_on_mi250x_halves_no_math(tmp_path):
    # CDNA2 has no structured sparsity: the catalog gives the MI250X no sparse rate
    got = _speedups(_analysis(tmp_path, "mi250x"))
    assert all(v == pytest.approx(1.0, rel=1e-3) for v in got.values())
    code, out, _ = _run("whatif", _analysis(tmp_path, "mi250x"), "--sparsity", "2:4")
    text = " ".join(out.split())
    assert "no sparse rate on AMD Instinct MI250X" in text


def test_train_dp2_on_mi300x_rings_over_one_link():
    # train --dp takes scale's links (cli/scale_link_choice.choose_links): 2 GPUs of the
    # mesh share one link, 64 GB/s per direction (it was the 7-link 448)
    code, out, err = _run("train", "llama-3-8b", "--on", "MI300X", "--batch", "1", "--seq",
                          "4096", "--dp", "2")
    text = " ".join(out.split())
    assert code == 0, err
    assert "link: xGMI 64 GB/s bus bandwidth" in text

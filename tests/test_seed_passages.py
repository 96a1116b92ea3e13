"""Audit 4, the seeds' author: things the seeds do or say that rooflab did not reproduce.

Each test names the seed passage it follows. Hand calculations are in the comments.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup_roof
from rooflab.hardware.profile import MachineProfile, profile_to_dict
from rooflab.ingest.kernelfile import load_kernels
from rooflab.ingest.ncu_files import load_ncu
from rooflab.model import Ceiling, Roof, analyze
from rooflab.workloads.llm.config import load_config
from rooflab.workloads.llm.kernels import decode_step
from rooflab.workloads.llm.settings import Settings

# --- seed 000 §4.1: the exact ncu command (FADD, FMUL, FFMA, DRAM read/write; no time) ---

HEAD = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
        '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
        '"Metric Value"')
INST = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"


def _rows(i, name, metrics):
    return [f'"{i}","1","app","host","{name}","1","7","(256, 1, 1)","(64, 64, 1)","0","8.0",'
            f'"Command line profiler metrics","{m}","{u}","{v}"' for m, u, v in metrics]


def _seed000_ncu_csv(tmp_path):
    # What `ncu --metrics <seed 000's five metrics> ./your_program` prints: a 1024³ fp32 GEMM
    # (1024³ FFMA, 3 x 1024² x 4 B of DRAM traffic) and a copy of 1e8 floats.
    gemm = [("dram__bytes_read.sum", "Mbyte", "8.388608"),
            ("dram__bytes_write.sum", "Mbyte", "4.194304"),
            (INST.format("fadd"), "inst", "0"), (INST.format("fmul"), "inst", "0"),
            (INST.format("ffma"), "inst", "1,073,741,824")]
    copy = [("dram__bytes_read.sum", "byte", "400000000"),
            ("dram__bytes_write.sum", "byte", "400000000"),
            (INST.format("fadd"), "inst", "0"), (INST.format("fmul"), "inst", "0"),
            (INST.format("ffma"), "inst", "0")]
    path = tmp_path / "seed000.csv"
    path.write_text("\n".join([HEAD, *_rows(0, "sgemm(float*, float*, float*)", gemm),
                               *_rows(1, "copyKernel(float*, const float*, unsigned long)",
                                      copy)]) + "\n")
    return str(path)


def test_seed000_ncu_metrics_without_time_give_ai_points(tmp_path):
    # Old: ParseError "no usable kernel launch ... no time" — the seed's own command failed.
    imp = load_ncu([_seed000_ncu_csv(tmp_path)])
    k = {k.name: k for k in imp.kernels}
    gemm = k["sgemm"]
    # FLOP = FADD + FMUL + 2 x FFMA = 2 x 1024³; bytes = read + write = 12.58 MB
    assert gemm.total_flop == 2 * 1024**3
    assert gemm.bytes["DRAM"] == pytest.approx(3 * 1024**2 * 4)
    assert gemm.seconds is None and gemm.calls == 1 and "seconds" not in gemm.provenance
    assert k["copyKernel"].bytes["DRAM"] == 8e8 and k["copyKernel"].seconds is None
    assert any("gpu__time_duration.sum" in n for n in imp.notes)
    (p,) = [p for p in analyze(lookup_roof("A100"), [gemm]).points]
    assert p.ai == pytest.approx(170.67, rel=1e-4)       # 2·1024³ / 12.58e6
    assert p.bound == "compute"                           # fp32 ridge 19.5e12 / 2.039e12 = 9.6


def test_seed000_ncu_metrics_without_time_cli(tmp_path, capsys):
    assert main(["ncu", _seed000_ncu_csv(tmp_path), "--on", "A100"]) == 0
    out = capsys.readouterr().out
    assert "sgemm" in out and "171" in out
    assert "untimed" in out and "gpu__time_duration.sum" in out


# --- seed 000 §4.2: its kernel table as a CSV, with the achieved GFLOPS column ---

def test_seed000_table_csv_with_gflops_column(tmp_path):
    # Old: the gflops column went silently to meta and every kernel came out untimed.
    path = tmp_path / "seed000.csv"
    path.write_text("name,flop,bytes,ai,gflops\n"
                    "elementwise_add,2.1e6,8.4e6,0.25,120\nconv2d_3x3,1.8e9,2.4e8,7.5,850\n"
                    "gemm_1024,2.1e9,1.2e7,175,4200\nsoftmax,5.6e6,1.1e7,0.51,95\n")
    kernels = load_kernels(str(path))
    add = kernels[0]
    assert add.seconds == pytest.approx(2.1e6 / 120e9)   # 17.5 µs
    assert add.provenance["seconds"] == "derived"
    roof = Roof("seed 000 GPU", "measured", compute=(Ceiling(280e12, precision="fp32"),),
                memory=(Ceiling(1800e9, level="DRAM"),))
    pts = {p.kernel: p for p in analyze(roof, kernels).points}
    assert pts["elementwise_add"].achieved_flop_per_s == pytest.approx(120e9)
    # 120 GFLOP/s against 0.25 x 1800 GB/s = 450 GFLOP/s: 26.7 %
    assert pts["elementwise_add"].percent_of_roof == pytest.approx(26.67, abs=0.01)
    assert pts["gemm_1024"].achieved_flop_per_s == pytest.approx(4.2e12)


def test_gflops_and_seconds_together_is_an_error(tmp_path, capsys):
    path = tmp_path / "both.csv"
    path.write_text("name,flop,bytes,seconds,gflops\na,1e9,1e9,0.01,100\n")
    assert main(["report", str(path), "--on", "T4"]) == 2
    assert "both.csv:2: give 'seconds' or 'gflops', not both" in capsys.readouterr().err


# --- seed 004: the ridge band, where nominal and measured roofs disagree ---

T4_NOMINAL = Roof("T4", "nominal",
                  compute=(Ceiling(65e12, precision="fp16", unit="tensor"),),
                  memory=(Ceiling(320e9, level="DRAM"),))
T4_MEASURED = Roof("T4", "measured",
                   compute=(Ceiling(50e12, precision="fp16", unit="tensor",
                                    provenance="measured"),),
                   memory=(Ceiling(270e9, level="DRAM", provenance="measured"),))


def _t4_files(tmp_path):
    prof = tmp_path / "t4.json"
    prof.write_text(json.dumps(profile_to_dict(
        MachineProfile(host={"name": "T4"}, nominal=T4_NOMINAL, measured=T4_MEASURED))))
    n = 4096
    kernels = tmp_path / "k.json"
    kernels.write_text(json.dumps({"kernels": [
        {"name": "decode b=1", "flop": {"fp16": 2.2e9}, "bytes": {"DRAM": 2.2e9},
         "seconds": 0.015},
        {"name": "matmul 4096", "flop": {"fp16": 2 * n**3}, "bytes": {"DRAM": 6 * n**2},
         "seconds": 2 * n**3 / 50e12},
        # AI 190: right of the measured ridge 50e12/270e9 = 185.2, left of 65e12/320e9 = 203.1
        {"name": "near ridge", "flop": {"fp16": 190e6}, "bytes": {"DRAM": 1e6},
         "seconds": 190e6 / 40e12}]}))
    return str(kernels), str(prof)


def test_ridge_band_is_flagged(tmp_path, capsys):
    # Seed 004: "AI 在 170 到 210 之间的东西,标称线说 memory-bound,实测线可能说 compute-bound".
    # Old: the report said nothing; the record table showed 60.8 TFLOP/s nominal silently.
    kernels, prof = _t4_files(tmp_path)
    assert main(["report", kernels, "--on", prof, "--json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["read_with_care"]
    band = [w for w in warnings if "between the ridges" in w]
    assert len(band) == 1
    assert band[0].startswith("near ridge: AI 190")
    assert "185 on this one, 203 nominal" in band[0]
    assert "compute-side, the nominal one memory-side" in band[0]
    assert main(["report", kernels, "--on", prof]) == 0
    assert "near ridge: AI 190 lies between the ridges" in capsys.readouterr().out
    md = tmp_path / "r.md"
    assert main(["report", kernels, "--on", prof, "-o", str(md)]) == 0
    assert "**Read with care**: near ridge: AI 190" in md.read_text()


def test_no_ridge_band_on_one_roof(tmp_path, capsys):
    # On the catalog T4 alone there is one ridge: nothing to disagree about.
    kernels, _ = _t4_files(tmp_path)
    assert main(["report", kernels, "--on", "T4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert not any("between the ridges" in w for w in out.get("read_with_care", []))


# --- seed 000 §3.3: a precision change moves the bottleneck; the what-if says so ---

def test_whatif_shows_a_bound_that_flips(tmp_path, capsys, monkeypatch):
    # fp32 AI 20 on an A100: ridge 19.5e12 / 2.039e12 = 9.6 -> compute-bound. In fp16 the
    # bytes halve (AI 40) against the tensor ridge 312e12 / 2.039e12 = 153 -> memory-bound.
    # Time: work 200 - 5 = 195 µs at 102.6/195 = 52.6 % efficiency; after, 5e7 B / 2.039e12
    # = 24.5 µs / 0.526 + 5 µs launch = 51.6 µs.
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [
        {"name": "conv", "flop": {"fp32": 2e9}, "bytes": {"DRAM": 1e8}, "seconds": 2e-4,
         "meta": {"op": "conv2d"}}]}))
    monkeypatch.setenv("COLUMNS", "120")       # one table line per kernel
    assert main(["whatif", str(path), "--on", "A100", "--precision", "fp16"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "20 -> 40" in out and "51.6 us" in out
    assert "memory (was compute)" in out      # old: only "memory"


# --- seed 004: the measured TPOT's gap, split into launches and the rest ---

def test_tpot_gap_split_into_launches_and_rest(capsys):
    # Seed 004: 15 ms - 6.9 ms floor = 8 ms; launches (5-10 µs each) explain part of it.
    # rooflab: floor 2.07 GB / 320 GB/s = 6.51 ms, gap 8.49 ms; 311 launches x 5-10 µs =
    # 1.56-3.11 ms (18-37 %); the rest 5.38-6.93 ms.
    args = ["llm", "tinyllama-1.1b", "--on", "T4", "--context", "500", "--phase", "decode",
            "--tpot-ms", "15"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert ("gap above the floor 8.49 ms: 311 launches explain 1.56 ms-3.11 ms of it "
            "(18-37 %") in out
    assert "the rest, 5.38 ms-6.93 ms" in out
    assert main([*args, "--json"]) == 0
    m = json.loads(capsys.readouterr().out)["llm"]["measured"]
    assert m["gap_s"] == pytest.approx(8.49e-3, abs=0.01e-3)
    assert m["gap_launch_s"] == pytest.approx([311 * 5e-6, 311 * 10e-6])


# --- seed 004: numbers of the TinyLlama table not asserted elsewhere ---

def test_seed004_byte_floor_column_at_270():
    # Seed 004's "字节 ÷ 270 GB/s" column: q_proj 31 µs, k/v 3.9, gate/up/down 85,
    # attention 1.9, RMSNorm 0.04, SiLU x up 0.13, lm_head 485 µs.
    st = decode_step(load_config("tinyllama-1.1b"), Settings(), 1, 500)
    per_call = {o.op.name: o.op.bytes / 270e9 * 1e6 for o in st.ops}
    seed = {"q_proj": 31, "k_proj": 3.9, "v_proj": 3.9, "gate_proj": 85, "up_proj": 85,
            "down_proj": 85, "attention": 1.9, "norm": 0.04, "act_mul": 0.13, "lm_head": 485}
    for name, us in seed.items():
        # the seed rounds to two figures (RMSNorm 12.3 KB / 270 GB/s = 0.046 µs, "0.04")
        assert per_call[name] == pytest.approx(us, rel=0.12, abs=0.01), name


def test_seed004_weights_per_layer():
    # Seed 004: "gate、up、down 三个 FFN 矩阵加起来 69 MB,占一层 101 MB 权重的三分之二".
    # 69 MB holds (3 x 2048 x 5632 x 2 B = 69.2 MB). The seed's 101 MB is 2.2 GB / 22, which
    # spreads the embedding and lm_head (2 x 131 MB) over the layers; one layer's own weights
    # are 88.1 MB, so the FFN is 79 % of a layer, not two thirds.
    st = decode_step(load_config("tinyllama-1.1b"), Settings(), 1, 500)
    w = {o.op.name: o.op.bytes_split.get("weights", 0.0) for o in st.ops}
    ffn = w["gate_proj"] + w["up_proj"] + w["down_proj"]
    layer = sum(v for k, v in w.items() if k not in ("embedding", "final_norm", "lm_head"))
    assert ffn == 3 * 2048 * 5632 * 2 == pytest.approx(69.2e6, rel=1e-3)
    assert layer == pytest.approx(88.1e6, rel=1e-3)
    assert ffn / layer == pytest.approx(0.785, abs=0.002)


def test_t4_fp32_ridge_is_seed000s_20_to_30():
    # Seed 000 §3.3: "FP32 ... 拐点 ... 可能只有 20 到 30"; seed 004: T4 fp32 8.1 TFLOP/s,
    # "屋顶的高度差 8 倍,ridge 差 8 倍": 8.1e12 / 320e9 = 25.3 vs 203 fp16 tensor.
    t4 = lookup_roof("T4")
    fp32 = t4.find_compute("fp32")
    fp16, _ = t4.compute_for("fp16", "tensor")
    dram = t4.find_memory("DRAM").value
    assert fp32.value == 8.1e12 and dram == 320e9
    assert fp32.value / dram == pytest.approx(25.3, abs=0.05)
    assert fp16.value / fp32.value == pytest.approx(8.0, abs=0.05)


def test_whatif_fusion_is_one_row(tmp_path, capsys, monkeypatch):
    # Seed 000 §5.3: ReLU, add and multiply as three kernels each read and write memory;
    # fused, the data moves once: bytes / 3, 3x. Each pass: 1e8 fp16 elements, 4e8 B in
    # 250 µs. Old: three rows "250 us -> 250 us 1.00x" and a total of 3.00x under them.
    monkeypatch.setenv("COLUMNS", "120")
    path = tmp_path / "ew.json"
    path.write_text(json.dumps({"kernels": [
        {"name": n, "flop": {"fp16": 1e8}, "bytes": {"DRAM": 4e8}, "seconds": 250e-6,
         "meta": {"op": "elementwise"}} for n in ("relu", "add", "mul")]}))
    assert main(["whatif", str(path), "--on", "A100", "--fuse", "relu,add,mul"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "(fused)" in line)
    assert "relu+add+mul (fused)" in row and "0.25 -> 0.75" in row
    assert "750 us" in row and "250 us" in row and "3.00x" in row
    assert "1.00x" not in out
    assert "total: 750 us -> 250 us (3.00x)" in out


def test_tpot_faster_than_the_floor_is_called_out(capsys):
    # 5 ms on a T4 is below the 6.51 ms floor (130 % of the roof): impossible on a right
    # roof with right counts. Old: printed "130 % of the roof, 0.77x the floor" and nothing.
    # 5 / 6.51 = 0.768, in fmt_factor's three figures
    args = ["llm", "tinyllama-1.1b", "--on", "T4", "--context", "500", "--phase", "decode"]
    assert main([*args, "--tpot-ms", "5"]) == 0
    out = capsys.readouterr().out
    assert "130 % of the roof, 0.77x the floor" in out
    assert "faster than the floor by 1.51 ms" in out and "roof is too low" in out
    # 7 ms: 0.49 ms above the floor, less than 311 launches take: they overlap the work.
    assert main([*args, "--tpot-ms", "7"]) == 0
    out = capsys.readouterr().out
    assert "gap above the floor 488 us, less than the 311 launches take" in out


def test_many_ridge_band_kernels_are_one_line(tmp_path, capsys):
    _, prof = _t4_files(tmp_path)
    path = tmp_path / "band.json"
    path.write_text(json.dumps({"kernels": [
        {"name": f"k{ai}", "flop": {"fp16": ai * 1e6}, "bytes": {"DRAM": 1e6},
         "seconds": ai * 1e6 / 30e12} for ai in (186, 190, 195, 200, 250)]}))
    assert main(["report", str(path), "--on", prof, "--json"]) == 0
    (line,) = [w for w in json.loads(capsys.readouterr().out)["read_with_care"]
               if "ridge" in w]
    assert line.startswith("4 kernels lie between the measured and the nominal ridge")
    assert "k200 (AI 200: compute here, memory nominal)" in line and "k250" not in line

"""Leftovers of the day's reviews: whatif reads a GEMM's kind off its name for 2:4 sparsity
and the tensor move; whatif --only takes kernel names with commas; the slope words offer no
quantization to int4 weights; a kernel CSV's 0 s is refused; the active-params convention."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rooflab
from rooflab.cli.main import main
from rooflab.cli.whatif import _names
from rooflab.errors import InputError, ParseError
from rooflab.ingest.kernelfile import load_kernels
from rooflab.model import whatif as w
from rooflab.model.diagnose import diagnose
from rooflab.model.whatif_weights import sparsify

DOCS = Path(__file__).resolve().parents[1] / "docs"

# A batch-1 fp16 GEMM of a 4096 x 4096 weight, known only by its cuBLAS name (no meta op):
# 2 x 4096 x 4096 FLOP, the weights' 2 x 4096 x 4096 bytes.
GEMM_NAME = "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_nn"
N = 4096 * 4096


def _slope(roof, kernel):
    (d,) = diagnose(rooflab.analyze(roof, [kernel]))
    (slope,) = [x for x in d.distances if x.name == "along slope"]
    return slope


# 1. sparsify and the tensor move read the kind as weight_share does (meta op, else the name)

def test_sparsity_prunes_a_gemm_known_only_by_its_name():
    a100 = rooflab.load_roof("A100")
    k = rooflab.Kernel(GEMM_NAME, flop={"fp16": 2 * N}, bytes={"DRAM": 2 * N}, seconds=50e-6)
    (old, new), = sparsify(a100, [k]).moves
    # fp16: 2 kept values of 2 B + 4 bits of positions per 4 weights = 4.5 / 8 = 9/16
    assert new.bytes["DRAM"] == pytest.approx(2 * N * 9 / 16)          # 18,874,368 B
    # on A100's fp16 tensor ceiling the zero half is skipped: executed FLOP halve
    assert new.flop["fp16"] == pytest.approx(N)                          # 16,777,216
    assert new.meta["sparsity"] == "2:4"
    # an elementwise kernel of no op, by its name, is still left alone
    add = rooflab.Kernel("vectorized_elementwise_kernel<4, CUDAFunctor_add<c10::Half>>",
                         flop={"fp16": 1e6}, bytes={"DRAM": 6e6}, seconds=10e-6)
    (_, same), = sparsify(a100, [add]).moves
    assert same.bytes == add.bytes and "sparsity" not in same.meta


def test_precision_change_moves_a_name_only_gemm_to_tensor_units():
    a100 = rooflab.load_roof("A100")
    k = rooflab.Kernel("volta_sgemm_128x64_nn", flop={"fp32": 2e9}, bytes={"DRAM": 1e8},
                       seconds=1e-3, unit="vector")
    (_, new), = w.change_precision(a100, [k], "fp16").moves
    assert new.unit == "tensor"                     # fp16 tensor 312 T, not vector 78 T
    assert new.bytes["DRAM"] == pytest.approx(5e7)  # 4 -> 2 bytes per element


# 2. whatif --only: kernel names with commas, the option repeated, a,b kept

MV = "aten::mv [1024x4096, 4096]"


def _mv_file(tmp_path) -> str:
    kernels = [{"name": MV, "flop": {"fp32": 2 * 1024 * 4096},
                "bytes": {"DRAM": 4 * (1024 * 4096 + 4096 + 1024)}, "seconds": 2e-5,
                "meta": {"op": "gemv"}},
               {"name": "relu", "flop": {"fp32": 1e6}, "bytes": {"DRAM": 8e6},
                "seconds": 1e-5, "meta": {"op": "relu"}},
               {"name": "add", "flop": {"fp32": 1e6}, "bytes": {"DRAM": 1.2e7},
                "seconds": 1e-5, "meta": {"op": "add"}}]
    path = tmp_path / "mv.json"
    path.write_text(json.dumps({"schema_version": 1, "kernels": kernels}))
    return str(path)


def _moved(capsys, path, *only) -> list[str]:
    args = ["whatif", path, "--on", "A100", "--bytes-scale", "0.5", "--json"]
    for o in only:
        args += ["--only", o]
    assert main(args) == 0
    return [m["kernel"] for m in json.loads(capsys.readouterr().out)["moves"]]


def test_only_takes_a_torch_name_with_a_comma_whole(tmp_path, capsys):
    path = _mv_file(tmp_path)
    assert _moved(capsys, path, MV) == [MV]
    # repeated, and a comma list whose first name holds a comma itself
    assert _moved(capsys, path, MV, "add") == [MV, "add"]
    assert _moved(capsys, path, f"{MV},relu") == [MV, "relu"]
    assert _moved(capsys, path, "relu,add") == ["relu", "add"]       # a,b as before
    assert _moved(capsys, path, "relu", "add") == ["relu", "add"]
    assert len(_moved(capsys, path)) == 3                            # no --only: all


def test_only_names_split_by_the_kernels_names():
    ks = [rooflab.Kernel(n, flop={"fp32": 1.0}, bytes={"DRAM": 1.0}) for n in (MV, "relu")]
    assert _names([MV], ks) == [MV]
    assert _names(f"relu, {MV}", ks) == ["relu", MV]
    assert _names(None, ks) is None and _names([], ks) is None
    # an unknown name stays split on commas, for the 'no kernel named' error to list it
    assert _names("aten::mv [1024x4096", ks) == ["aten::mv [1024x4096"]
    with pytest.raises(InputError, match="comma-separated kernel names"):
        _names([" , "], ks)


def test_only_with_half_a_name_is_a_clear_error(tmp_path, capsys):
    code = main(["whatif", _mv_file(tmp_path), "--on", "A100", "--bytes-scale", "0.5",
                 "--only", "aten::mv [1024x4096"])
    err = capsys.readouterr().err
    assert code == 2
    assert "no kernel named 'aten::mv [1024x4096'" in err and MV in err
    assert "Traceback" not in err


# 3. the slope offers no quantization to weights that are int4 already

def _decode(name="decode b=1", **meta):
    # T4 (65 TFLOP/s fp16 tensor, 320 GB/s): AI 1 is 203x left of the ridge
    return rooflab.Kernel(name, flop={"fp16": 2.2e9}, bytes={"DRAM": 2.2e9}, seconds=0.015,
                          meta={"op": "decode", **meta})


def test_int4_weights_are_offered_no_quantization_along_the_slope():
    t4 = rooflab.load_roof("T4")
    words = _slope(t4, _decode(weight_dtype="int4")).words
    assert "fewer bytes per weight (quantization)" not in words
    assert "Only batching (more requests per weight read) climbs the slope" in words
    assert "quantization is no lever left: weight dtype int4 (meta)" in words
    assert "tiling and fusion cannot" in words
    # the advice's own reading: a W4A16 GEMM's name says 4-bit weights
    named = _slope(t4, _decode("marlin_w4a16_gemm_decode")).words
    assert "fewer bytes per weight (quantization)" not in named
    assert "4-bit weights (the name 'marlin_w4a16_gemm_decode'" in named
    # fp16 weights still get it
    assert "fewer bytes per weight (quantization)" in _slope(t4, _decode()).words


def test_int4_prefill_gemm_keeps_tiling_but_not_weight_quantization():
    t4 = rooflab.load_roof("T4")
    # 2e9 FLOP on 1e8 B (AI 20, ridge 203): a GEMM that reuses its data
    g = rooflab.Kernel("gemm", flop={"fp16": 2e9}, bytes={"DRAM": 1e8}, seconds=1e-3,
                       meta={"op": "matmul", "weight_dtype": "int4"})
    words = _slope(t4, g).words
    assert "Batching, data reuse (tiling), fusion and fewer bytes per activation climb" in words
    assert "(quantization)" not in words


# 4. a kernel CSV's 0 s is refused as gflops 0 is

def test_zero_seconds_in_a_kernel_csv_is_refused_with_its_line(tmp_path):
    path = tmp_path / "k.csv"
    path.write_text("name,flop,bytes,seconds\na,1e9,1e8,0.001\nb,1e9,1e8,0\n")
    with pytest.raises(ParseError) as info:
        load_kernels(str(path))
    assert info.value.line == 3
    assert "field 'seconds' must be > 0; got 0 (leave the cell empty for an untimed " \
           "kernel)" in str(info.value)
    # an empty cell is still an untimed kernel
    path.write_text("name,flop,bytes,seconds\na,1e9,1e8,0.001\nb,1e9,1e8,\n")
    assert [k.seconds for k in load_kernels(str(path))] == [0.001, None]


def test_zero_seconds_cli_error(tmp_path, capsys):
    path = tmp_path / "k.csv"
    path.write_text("name,flop,bytes,seconds\na,1e9,1e8,0\n")
    assert main(["report", str(path), "--on", "A100"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:2: field 'seconds' must be > 0" in err and "Traceback" not in err


# 5. specs show / compare take a profile file: its judging roof, named by the file

T4P = str(Path(__file__).resolve().parents[1] / "examples" / "seeds" / "t4p.json")


def test_specs_compare_puts_a_profile_beside_its_datasheet(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    assert main(["specs", "compare", "T4", T4P]) == 0
    out = capsys.readouterr().out
    assert f"{T4P} (measured)" in out
    # T4's datasheet: 65 TFLOP/s fp16 tensor over 320 GB/s, ridge 203; the profile's
    # measured roof: 50 TFLOP/s over 270 GB/s, ridge 185
    row = next(line for line in out.splitlines() if "fp16 tensor" in line)
    assert "65 TFLOP/s (ridge 203)" in row and "50 TFLOP/s (ridge 185)" in row
    dram = next(line for line in out.splitlines() if "DRAM" in line and "GB/s" in line)
    assert "320 GB/s" in dram and "270 GB/s" in dram
    assert main(["specs", "compare", f"t4,{T4P}", "--json"]) == 0
    devices = json.loads(capsys.readouterr().out)["devices"]
    assert devices[1]["file"] == T4P and devices[1]["roof"]["kind"] == "measured"
    assert devices[1]["roof"]["compute"][0]["flop_per_s"] == 50e12
    assert devices[0]["name"] == "NVIDIA T4"


def test_specs_show_takes_a_profile_as_compare_does(capsys):
    assert main(["specs", "show", T4P, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["file"] == T4P and doc["roof"]["memory"][0]["bytes_per_s"] == 270e9
    assert main(["specs", "show", T4P]) == 0
    out = capsys.readouterr().out
    assert "T4 (measured)" in out and "185" in out        # 50e12 / 270e9 = 185.2 FLOP/B


def test_specs_file_errors_stay_one_line(tmp_path, capsys):
    for argv in (["specs", "show", str(tmp_path / "none.json")],
                 ["specs", "compare", "t4", str(tmp_path / "none.json")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "none.json: file not found" in err and "Traceback" not in err


# 6. "active params" counts the embedding table: DeepSeek-V2-Lite 2.66 G, card 2.4 B

def test_active_params_convention_is_the_documented_one():
    from rooflab.workloads.llm.config import load_config
    from rooflab.workloads.llm.params import count_params

    p = count_params(load_config("deepseek-v2-lite"))
    # vocab 102,400 x hidden 2,048 = 209,715,200 per table (embedding, untied lm_head)
    assert p.embedding == 102_400 * 2048 == p.lm_head
    assert p.active == 2_661_150_208                                  # "2.66 G"
    assert (p.active - p.embedding) / 1e9 == pytest.approx(2.45, abs=0.005)
    text = (DOCS / "llm.md").read_text()
    assert ("with the whole embedding table (and lm_head) counted, so DeepSeek-V2-Lite counts "
            "2.66 G\nwhere its card says 2.4 B (2.45 G without its 0.21 G embedding table), of "
            "which a decode\nstep reads 2.45 G" in text)

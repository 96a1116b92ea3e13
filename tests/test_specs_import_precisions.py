"""`rooflab specs import` types every precision a datasheet quotes, with its unit, and writes
seed 004's two-roof profile in one command (review 18a F3: only --fp64/--fp32 and one roof)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.hardware.import_roofs import typed_ceiling
from rooflab.hardware.profile import load_profile

SEEDS = Path(__file__).resolve().parents[1] / "examples" / "seeds"


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, " ".join(out.split()), " ".join(err.split())


def test_seed000_roof_typed_as_fp16_tensor(tmp_path, capsys):
    # seed 000 §3.3: peak_flops = 280000 GFLOPS (FP16 Tensor Core), 1.8 TB/s measured
    out = tmp_path / "s0.json"
    code, _, said = run(capsys, "specs", "import", "--dram", "1.8TB/s", "--fp16",
                        "280TFLOP/s@tensor", "--measured", "-o", out)
    assert code == 0 and "fp16 tensor 280 TFLOP/s" in said   # the wrote line: stderr
    roof = json.loads(out.read_text())
    (c,) = roof["compute"]
    assert (c["precision"], c["unit"], c["flop_per_s"]) == ("fp16", "tensor", 280e12)
    assert roof["kind"] == "measured"
    # the ridge the seed prints "≈ 155": 280e12 / 1.8e12 = 155.6
    code, said, _ = run(capsys, "ai", "matmul", "1024", "1024", "1024", "--dtype", "fp16",
                        "--on", out)
    assert code == 0 and "ridge 156" in said


@pytest.mark.parametrize("flag,text,want", [
    # A100 datasheet figures (seed 000 §3.2): int8 624 TOPS, tf32 156, bf16 312
    ("--int8", "624TOP/s@tensor", ("int8", "tensor", 624e12)),
    ("--int8", "624TOPS@tensor", ("int8", "tensor", 624e12)),
    ("--tf32", "156TFLOP/s", ("tf32", "tensor", 156e12)),       # only tensor cores do tf32
    ("--fp8", "1979TFLOP/s", ("fp8", "tensor", 1979e12)),
    ("--bf16", "312TFLOP/s@tensor", ("bf16", "tensor", 312e12)),
    ("--fp16", "78TFLOP/s", ("fp16", "vector", 78e12)),         # CUDA cores / SIMD default
    ("--fp32", "19.5TFLOP/s@vector", ("fp32", "vector", 19.5e12)),
])
def test_each_precision_and_its_default_unit(flag, text, want):
    c = typed_ceiling(flag, text, measured=False)
    assert (c.precision, c.unit, c.value) == want
    assert c.provenance == "nominal"


def test_one_precision_in_both_units(tmp_path, capsys):
    # T4: fp16 tensor 65, fp16 vector 16.2 TFLOP/s
    out = tmp_path / "t4.json"
    code, _, _ = run(capsys, "specs", "import", "--dram", "320GB/s", "--fp16", "65TFLOP/s@tensor",
                     "--fp16", "16.2TFLOP/s", "-o", out)
    assert code == 0
    got = {(c["precision"], c["unit"]): c["flop_per_s"]
           for c in json.loads(out.read_text())["compute"]}
    assert got == {("fp16", "tensor"): 65e12, ("fp16", "vector"): 16.2e12}


@pytest.mark.parametrize("args,said", [
    (["--fp16", "280TFLOP/s@matrix"], "the unit after '@' is scalar (one lane), vector"),
    (["--dram", "270GB/s@tensor"], "a bandwidth takes no '@unit'"),
    (["--fp16", "1TFLOP/s", "--fp16", "2TFLOP/s"], "fp16 vector given twice"),
    (["--int8", "130GB/s"], "must be a compute rate"),
])
def test_mistakes_are_refused_with_the_fix(capsys, args, said):
    code, _, err = run(capsys, "specs", "import", "--dram", "1TB/s", *args)
    assert code != 0 and said in err and "Traceback" not in err


def test_from_catalog_writes_seed004s_two_roof_profile(tmp_path, capsys):
    # seed 004: nominal T4 65 TFLOP/s / 320 GB/s, measured 50 / 270 ("改几个数重跑")
    out = tmp_path / "t4p.json"
    code, _, said = run(capsys, "specs", "import", "--from", "T4", "--dram", "270GB/s",
                        "--fp16", "50TFLOP/s@tensor", "-o", out)
    assert code == 0 and "beside the NVIDIA T4 datasheet (nominal)" in said   # stderr
    p = load_profile(out)
    assert p.nominal.find_compute("fp16", "tensor").value == 65e12
    assert p.nominal.find_memory("DRAM").value == 320e9
    assert p.measured.find_compute("fp16", "tensor").value == 50e12
    assert p.measured.find_compute("fp16", "tensor").provenance == "measured"
    assert p.measured.find_memory("DRAM").value == 270e9
    assert p.measured.overhead_s == p.nominal.overhead_s == 5e-6
    # the record table the hand-written t4p.json gives: 270/320 = 84 %, 50/65 = 77 %,
    # ridges 50e12/270e9 = 185.2 vs 65e12/320e9 = 203.1 (91 %); 2.2e9 / 15 ms = 147 G = 54 %
    md = tmp_path / "r.md"
    code, _, _ = run(capsys, "report", SEEDS / "pts.json", "--on", out, "-o", md)
    assert code == 0
    text = md.read_text()
    for row in ("| DRAM bandwidth | 320 GB/s | 270 GB/s | 84 % |",
                "| fp16 tensor peak | 65 TFLOP/s | 50 TFLOP/s | 77 % |",
                "| decode b=1: FLOP/s | 320 GFLOP/s | 147 GFLOP/s | 54 % of the measured roof |"):
        assert row in text, row
    assert "| 203 | 185 | 91 % |" in text


def test_from_needs_the_measured_numbers(tmp_path, capsys):
    code, _, err = run(capsys, "specs", "import", "--from", "T4", "-o", tmp_path / "x.json")
    assert code != 0 and "--from T4 --dram 270GB/s --fp16 50TFLOP/s@tensor" in err


def test_from_takes_a_catalog_device_not_a_file(tmp_path, capsys):
    code, _, err = run(capsys, "specs", "import", "--from", SEEDS / "t4p.json", "--dram",
                       "270GB/s", "--fp16", "50TFLOP/s@tensor", "-o", tmp_path / "x.json")
    assert code != 0 and "--from takes a catalog device" in err

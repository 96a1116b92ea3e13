"""fp4 in the roof importers (session 26: fp4 became a precision of its own, units.PRECISIONS,
with fp4_tensor ceilings in the catalog): `specs import --fp4` (tensor by default, as
--fp8) and rocprof-compute's MFMAF4Flops column, which was left out as "no such
precision". Kept with the other importers' s26 tests."""

from __future__ import annotations

import pytest

from rooflab.cli.main import main
from rooflab.hardware.import_roofs import parse_flop_rate, typed_ceiling
from rooflab.hardware.resolve import load_roofs
from rooflab.hardware.rocprof_roofline import load_roofline_csv


def run(*args) -> int:
    return main([str(a) for a in args])


def test_specs_import_fp4_is_tensor_by_default(tmp_path, capsys):
    out = tmp_path / "b200.json"
    # B200's datasheet figures as the catalog has them: fp4 9 PFLOP/s dense, fp8 4.5,
    # HBM 7.7 TB/s; a PFLOP/s rate is read (parse_size has no P prefix)
    assert run("specs", "import", "--dram", "7.7TB/s", "--fp8", "4.5PFLOP/s", "--fp4",
               "9PFLOP/s", "-o", out) == 0
    roof = load_roofs(str(out))[0]
    fp4 = roof.find_compute("fp4", "tensor")
    assert fp4.value == pytest.approx(9e15) and fp4.provenance == "nominal"
    assert roof.find_compute("fp8", "tensor").value == pytest.approx(4.5e15)
    # ridge by hand: 9e15 / 7.7e12 = 1168.8 FLOP/byte
    assert fp4.value / roof.find_memory("DRAM").value == pytest.approx(1168.8, rel=1e-4)
    assert "fp4 tensor 9 PFLOP/s" in capsys.readouterr().err
    # '@vector' as for every precision
    assert typed_ceiling("--fp4", "1.5PFLOP/s@vector", False).unit == "vector"
    assert parse_flop_rate("9 PFLOP/s", "--fp4") == pytest.approx(9e15)


# rocprof-compute's real MI355X --roof-only row (quoted in rocprofiler-compute's tests, as
# tests/test_s20_f7_roof_imports.py has it): MFMAF4Flops 9769632 GFLOP/s
MI355X = (
    "device,HBMBw,HBMBwLow,hbmBwHigh,MALLBw,L2Bw,L1Bw,LDSBw,FP8Flops,FP16Flops,BF16Flops,"
    "FP32Flops,FP64Flops,I8Ops,MFMAF4Flops,MFMAF6Flops,MFMAF8Flops,MFMAF16Flops,"
    "MFMABF16Flops,MFMAF32Flops,MFMAF64Flops,MFMAI8Ops\n"
    "0,6237.3418,6233.0127,6241.6709,8496.8027,34513.656,38008.023,54161.102,81253.758,"
    "38558.672,5764.7715,150419.81,76324.766,81175.656,9769632,8810305,2456336.2,1229004.5,"
    "616227.75,154634.66,77521.898,1228687.2\n")


def test_rocprof_mfma_f4_column_is_the_fp4_tensor_ceiling(tmp_path):
    path = tmp_path / "roofline.csv"
    path.write_text(MI355X)
    roof = load_roofline_csv(str(path))
    fp4 = roof.find_compute("fp4", "tensor")
    assert fp4.value == pytest.approx(9769632e9)           # GFLOP/s -> FLOP/s
    assert "column MFMAF4Flops" in fp4.method and fp4.provenance == "measured"
    # 9769632 / 2456336.2 = 3.98x the fp8 matrix rate the same run measured
    assert fp4.value / roof.find_compute("fp8", "tensor").value == pytest.approx(3.977, 1e-3)
    (left,) = [n for n in roof.notes if n.startswith("left out")]
    assert "MFMAF4Flops" not in left and "MFMAF6Flops" in left   # fp6: still no precision

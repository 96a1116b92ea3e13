"""Session 26 fD: an fp4 tensor ceiling for the Blackwell parts.

Hand numbers: NVIDIA's HGX B200 table (FP4 Tensor Core 18 PFLOPS with sparsity, 9 dense),
the GB200 NVL72 per-GPU table (20 / 10), the RTX 5090's "3352 AI TOPS" (fp4 with sparsity;
1676 dense = 4 x its 419 TFLOP/s fp8 with fp32 accumulate, CUTLASS's SM120 table). The
B200's fp4 rate is twice its fp8 4.5 PFLOP/s (CUTLASS's SM100 table: kind::mxf4nvf4 at 4x
Hopper fp8, kind::f8f6f4 at 2x). matmul 8192^3: 2 x 8192^3 = 1.0995e12 FLOP over
3 x 8192^2 x 0.5 B = 100,663,296 B (fp4 in and out), AI 10923; on a B200 its floor is
1.0995e12 / 9e15 = 122.2 us, on an H100 SXM (no fp4 math) 1.0995e12 / 1.979e15 = 555.6 us.
"""

from __future__ import annotations

import json
import warnings

import pytest
from cli_inproc import json_of

from rooflab.cli.main import main
from rooflab.errors import InputWarning
from rooflab.hardware.catalog import all_devices, lookup, lookup_roof
from rooflab.ingest.kernelfile import load_kernels
from rooflab.model.analysis import analyze
from rooflab.units import PRECISIONS, canonical_dtype, flop_precision, fmt_rate, is_float

MM8K = 2 * 8192**3
FP4_8K_BYTES = 3 * 8192**2 * 0.5

# name: (dense, sparse) fp4 tensor in FLOP/s, and the fp8 dense rate it is a multiple of
BLACKWELL = {"B200": (9e15, 18e15, 4.5e15, 2),
             "GB200": (10e15, 20e15, 5e15, 2),
             "RTX 5090": (1676e12, 3352e12, 419e12, 4)}


def _run(capsys, argv):
    code = main(argv)
    cap = capsys.readouterr()
    return code, cap.out, cap.err




# --- the precision ---------------------------------------------------------------------

def test_fp4_is_a_float_precision_of_its_own():
    assert "fp4" in PRECISIONS and is_float("fp4")
    assert flop_precision("fp4") == "fp4"            # was fp8: fp4 math counted as fp8
    assert canonical_dtype("e2m1") == canonical_dtype("FP4") == "fp4"
    assert fmt_rate(9e15, "fp4") == "9 PFLOP/s"      # FLOP/s, not integer OP/s


# --- the catalog -----------------------------------------------------------------------

@pytest.mark.parametrize("name", BLACKWELL)
def test_blackwell_fp4_ceilings_dense_and_sparse(name):
    dense, sparse, fp8, ratio = BLACKWELL[name]
    d = lookup(name)
    c = d.roof.find_compute("fp4", "tensor")
    assert c is not None and c.value == pytest.approx(dense)
    assert c.provenance == "nominal" and c.source.startswith("https://")
    assert d.sparse["fp4"] == pytest.approx(sparse) == 2 * c.value
    assert c.value == pytest.approx(ratio * d.roof.find_compute("fp8", "tensor").value)
    assert c.value == pytest.approx(ratio * fp8)
    notes = " ".join(d.notes)
    # each says where the figure comes from and which fp4 it is
    assert "fp4 tensor" in notes and "NVFP4" in notes and "MXFP4" in notes
    assert "https://github.com/NVIDIA/cutlass/blob/main/media/docs/cpp/" \
           "blackwell_functionality.md" in notes
    assert "fp8 rate only" in notes              # the f8f6f4 path does not reach it


def test_every_blackwell_part_has_fp4_and_no_older_one_has():
    for d in all_devices():
        cc = d.compute_capability
        has = d.roof.find_compute("fp4") is not None
        if cc is not None and float(cc) >= 10:
            assert has, d.name
        elif "CDNA4 (gfx950)" in " ".join(d.notes):    # AMD MI350X/MI355X: MXFP4 matrix cores
            assert has, d.name
        else:
            assert not has and "fp4" not in d.sparse, d.name


def test_specs_show_b200_lists_fp4(capsys):
    code, out, _ = _run(capsys, ["specs", "show", "B200"])
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("│ fp4 tensor"))
    assert "9 PFLOP/s" in row and "1169" in row        # 9e15 / 7.7e12 = 1168.8
    assert "18 PFLOP/s fp4 tensor" in out              # the sparse figure, apart
    d = json_of(capsys, ["specs", "show", "B200", "--json"])
    assert "fp4" in json.dumps(d)


# --- the verbs -------------------------------------------------------------------------

def test_ai_matmul_fp4_on_b200_is_held_to_fp4(capsys):
    d = json_of(capsys, ["ai", "matmul", "8192", "8192", "8192", "--dtype", "fp4", "--on",
                       "B200", "--json"])
    assert (d["dtype"], d["precision"], d["unit"]) == ("fp4", "fp4", "tensor")
    assert d["flop"] == MM8K and d["bytes"] == pytest.approx(FP4_8K_BYTES)
    assert d["ai"] == pytest.approx(MM8K / FP4_8K_BYTES)           # 10923
    assert d["compute_ceiling"] == "fp4 tensor"
    assert d["ridge"] == pytest.approx(9e15 / 7.7e12)              # 1169
    assert d["time_floor_s"] == pytest.approx(MM8K / 9e15)         # 122.2 us
    assert not any("no fp4 ceiling" in n for n in d["notes"])
    assert any("block scales not counted" in n and "NVFP4" in n for n in d["notes"])
    code, out, _ = _run(capsys, ["ai", "matmul", "8192", "8192", "8192", "--dtype", "fp4",
                                 "--on", "B200"])
    assert "(matmul, fp4, tensor)" in out and "binding ceiling: fp4 tensor" in out
    assert "122 us" in out


def test_ai_matmul_fp4_without_fp4_math_falls_back_to_fp8(capsys):
    d = json_of(capsys, ["ai", "matmul", "8192", "8192", "8192", "--dtype", "fp4", "--on",
                       "H100 SXM", "--json"])
    assert d["precision"] == "fp4" and d["compute_ceiling"] == "fp8 tensor"
    assert d["time_floor_s"] == pytest.approx(MM8K / 1979e12)      # 555.6 us
    assert any("has no fp4 ceiling; using fp8 tensor" in n for n in d["notes"])


@pytest.fixture
def kernels_csv(tmp_path):
    # two GEMMs of 8192^3: an NVFP4 one in 200 us and an fp8 one in 300 us
    path = tmp_path / "k.csv"
    path.write_text("name,flop,bytes,seconds,precision,unit\n"
                    f"gemm_nvfp4,{MM8K},{FP4_8K_BYTES:.0f},2.0e-4,fp4,tensor\n"
                    f"gemm_fp8,{MM8K},{2 * FP4_8K_BYTES:.0f},3.0e-4,fp8,tensor\n")
    return str(path)


def test_a_kernel_file_row_of_fp4_is_judged_against_the_fp4_ceiling(kernels_csv):
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputWarning)     # fp4 is a precision rooflab knows
        k4, k8 = load_kernels(kernels_csv)
    assert k4.precision == "fp4" and k4.flop == {"fp4": MM8K}
    a = analyze(lookup_roof("B200"), [k4, k8])
    p4, p8 = a.points
    assert (p4.compute_ceiling, p4.ceiling_precision, p4.fallback) == ("fp4 tensor", "fp4",
                                                                       False)
    assert p4.attainable_flop_per_s == 9e15 and p4.binding == "fp4 tensor"
    assert p4.percent_of_roof == pytest.approx(100 * (MM8K / 2e-4) / 9e15)   # 61.1 %
    assert p8.compute_ceiling == "fp8 tensor" and p8.attainable_flop_per_s == 4.5e15
    assert not [n for n in a.notes if "no fp4 ceiling" in n]
    (h4, _) = analyze(lookup_roof("H100 SXM"), [k4, k8]).points
    assert (h4.compute_ceiling, h4.fallback) == ("fp8 tensor", True)   # Hopper: fp8 stands in


def test_report_advises_fp4_for_an_fp8_gemm_only_where_fp4_math_exists(kernels_csv, capsys):
    code, out, _ = _run(capsys, ["report", kernels_csv, "--on", "B200"])
    assert code == 0 and "use fp4 instead of fp8" in out
    code, out, _ = _run(capsys, ["report", kernels_csv, "--on", "H100 SXM"])
    assert code == 0 and "use fp4 instead" not in out


def test_whatif_precision_fp4_on_b200(kernels_csv, capsys):
    d = json_of(capsys, ["whatif", kernels_csv, "--on", "B200", "--precision", "fp4", "--json"])
    nv, f8 = d["moves"]
    # the fp4 GEMM stays at 1.0995e12 / 9e15 = 122.2 us (it was held to fp8: 244.3 us)
    assert nv["before_work_floor_s"] == pytest.approx(MM8K / 9e15)
    assert nv["after_work_floor_s"] == pytest.approx(MM8K / 9e15)
    # the fp8 GEMM at fp4: 244.3 us (4.5 PFLOP/s) -> 122.2 us (9 PFLOP/s, half the bytes)
    assert f8["before_work_floor_s"] == pytest.approx(MM8K / 4.5e15)
    assert f8["after_work_floor_s"] == pytest.approx(MM8K / 9e15)
    assert d["total_after_floor_s"] == pytest.approx(2 * MM8K / 9e15)    # 244.3 us

"""Second fresh-user audit: profiler kernels counted from vector instructions are held to
the vector ceiling, not to the (twice as fast) fp64 tensor/matrix one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"

# One fp64 VALU kernel: 1000 ADD + 10000 FMA instructions over 64 lanes, 1 ms,
# 100000 64-B reads and 50000 64-B writes.
ROC = """\
Index,KernelName,gpu-id,queue-id,BeginNs,EndNs,SQ_INSTS_VALU_ADD_F64,SQ_INSTS_VALU_MUL_F64,\
SQ_INSTS_VALU_FMA_F64,SQ_INSTS_VALU_TRANS_F64,TCC_EA_RDREQ_sum,TCC_EA_RDREQ_32B_sum,\
TCC_EA_WRREQ_sum,TCC_EA_WRREQ_64B_sum
0,daxpy_kernel,2,0,1000000,2000000,1000,0,10000,0,100000,0,50000,50000
"""


def test_rocprof_valu_fp64_on_mi300x_vector_peak(tmp_path, capsys):
    f = tmp_path / "results.csv"
    f.write_text(ROC)
    assert main(["rocprof", str(f), "--on", "mi300x", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (k,) = data["kernels"]
    assert k["unit"] == "vector"
    assert k["flop"] == {"fp64": 64 * (1000 + 2 * 10000)}           # 1,344,000
    assert k["bytes"] == {"DRAM": 64 * 100000 + 64 * 50000}           # 9,600,000
    (a,) = data["analysis"]
    # MI300X: fp64 vector 81.7 TFLOP/s (matrix 163.4), HBM 5.3 TB/s -> ridge 15.415
    assert a["unit"] == "vector" and a["peak_flop_per_s"] == pytest.approx(81.7e12)
    assert a["ridge"] == pytest.approx(81.7e12 / 5.3e12)
    # AI 0.14 -> attainable 0.14 x 5.3e12 = 742 GFLOP/s; achieved 1.344e6 / 1e-3 s
    assert a["percent_of_roof"] == pytest.approx(100 * 1.344e9 / 742e9)


def test_ncu_dfma_kernel_on_h100_vector_peak(capsys):
    csv = FIXTURES / "ncu" / "nersc-gpp" / "output1.csv"
    if not csv.exists():
        pytest.skip(f"fixture {csv} absent (CI lays ../shared beside the clone)")
    assert main(["ncu", str(csv), "--on", "H100 SXM", "--json"]) == 0
    a = json.loads(capsys.readouterr().out)["analysis"][0]
    # H100 SXM fp64: 34 TFLOP/s vector, 67 tensor; DRAM 3.35 TB/s -> ridge 10.15
    assert a["unit"] == "vector" and a["peak_flop_per_s"] == pytest.approx(34e12)
    assert a["ridge"] == pytest.approx(34e12 / 3.35e12)

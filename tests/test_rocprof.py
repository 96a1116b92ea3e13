"""rooflab rocprof on synthetic counter CSVs using the FACTS.md counter names and formulas."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.ingest.rocprof import load_rocprof

WIDE = """\
Index,KernelName,gpu-id,queue-id,BeginNs,EndNs,SQ_INSTS_VALU_ADD_F32,SQ_INSTS_VALU_MUL_F32,\
SQ_INSTS_VALU_FMA_F32,SQ_INSTS_VALU_TRANS_F32,SQ_INSTS_VALU_MFMA_MOPS_F16,\
TCP_TOTAL_CACHE_ACCESSES_sum,TCC_EA_RDREQ_sum,TCC_EA_RDREQ_32B_sum,TCC_EA_WRREQ_sum,\
TCC_EA_WRREQ_64B_sum,TCC_REQ_sum
0,"void triad<float>(float*, float const*, float const*, float) [clone .kd]",2,0,1000,11000,\
0,0,16384,0,0,49152,32768,0,16384,16384,40000
1,Cijk_Alik_Bljk_HHS_BH_MT128x128,2,0,20000,120000,0,0,0,0,2000000,100000,50000,10000,8000,\
8000,300000
2,"void triad<float>(float*, float const*, float const*, float) [clone .kd]",2,0,130000,140000,\
0,0,16384,0,0,49152,32768,0,16384,16384,40000
3,broken,2,0,150000,150000,0,0,1,0,0,1,1,0,1,1,1
4,cut,2,0
"""

LONG = """\
Correlation_Id,Dispatch_Id,Agent_Id,Kernel_Name,Counter_Name,Counter_Value,Start_Timestamp,\
End_Timestamp
1,1,2,scale_f64,SQ_INSTS_VALU_MUL_F64,1000,0,2000
1,1,2,scale_f64,SQ_INSTS_VALU_ADD_F64,10,0,2000
1,1,2,scale_f64,TCC_EA0_RDREQ,500,0,2000
1,1,2,scale_f64,TCC_EA0_WRREQ,500,0,2000
"""


def test_wide_csv_by_hand(tmp_path):
    p = tmp_path / "results.csv"
    p.write_text(WIDE)
    imp = load_rocprof(str(p))
    ks = {k.name: k for k in imp.kernels}
    triad = ks["triad<…>"]
    assert triad.calls == 2 and triad.seconds == pytest.approx(2 * 10_000e-9)
    assert triad.flop == {"fp32": 2 * 64 * 2 * 16384}                 # 64 lanes x 2 x FMA
    assert triad.bytes["DRAM"] == 2 * (64 * 32768 + 64 * 16384)       # 64-B reads and writes
    assert triad.bytes["L1"] == 2 * 64 * 49152 and triad.bytes["L2"] == 2 * 128 * 40000
    gemm = ks["Cijk_Alik_Bljk_HHS_BH_MT128x128"]
    assert gemm.flop == {"fp16": 512 * 2_000_000} and gemm.unit == "tensor"
    assert gemm.bytes["DRAM"] == 32 * 10000 + 64 * 40000 + 64 * 8000
    reasons = "\n".join(str(s) for s in imp.skips)
    assert f"{p}:5: launch 3 of 'broken' skipped: zero time" in reasons
    assert f"{p}:6: row has 4 of 17 columns" in reasons


def test_long_csv_and_cli_json(tmp_path, capsys):
    p = tmp_path / "counter_collection.csv"
    p.write_text(LONG)
    assert main(["rocprof", str(p), "--on", "mi300x", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (k,) = data["kernels"]
    assert k["flop"] == {"fp64": 64 * 1010} and k["bytes"] == {"DRAM": 64 * 500 + 32 * 500}
    assert k["seconds"] == pytest.approx(2e-6)
    assert data["analysis"][0]["ai"] == pytest.approx(64 * 1010 / 48000)
    assert "MI300X" in data["roof_source"]


def test_nothing_usable(tmp_path, capsys):
    p = tmp_path / "x.csv"
    p.write_text("KernelName,BeginNs,EndNs\nk,0,10\n")
    with pytest.raises(ParseError, match="no byte counters"):
        load_rocprof(str(p))
    q = tmp_path / "y.csv"
    q.write_text("hello\n")
    assert main(["rocprof", str(q)]) == 2
    assert "no rocprof header" in capsys.readouterr().err

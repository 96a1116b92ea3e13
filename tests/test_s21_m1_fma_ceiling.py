"""Review s21 r3 F9: the no-FMA ceiling of an instruction mix. GPP (output.csv, CC 8.9):
dadd 122,305,685,313 + dmul 371,957,323,851 + dfma 734,774,600,586 = 1,229,037,609,750
fp64 instructions, FMA share 0.5978; FLOP = 122.3 G + 372.0 G + 2 x 734.8 G = 1963.81 G =
(1 + s) / 2 x 2 x instructions, so at most 79.9 % of the fp64 peak.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from rooflab.ingest.ncu_flop import fma_instructions
from rooflab.model import Kernel, analyze
from rooflab.model.diagnose import diagnose
from rooflab.model.fma_ceiling import mix_ceiling, mix_words
from rooflab.probe.gpu.catalog_match import catalog_roof

CSV = Path("/work/shared/fixtures/ncu/nersc-gpp/output.csv")
INST = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"
DADD, DMUL, DFMA = 122_305_685_313.0, 371_957_323_851.0, 734_774_600_586.0
SHARE = DFMA / (DADD + DMUL + DFMA)


def test_counts_and_the_mix_ceiling_by_hand():
    m = {INST.format("dadd"): DADD, INST.format("dmul"): DMUL, INST.format("dfma"): DFMA,
         # an smsp__ count stands in for a nan sm__ one, as flop_counts does
         INST.format("fadd"): float("nan"),
         "smsp__" + INST.format("fadd")[4:]: 10.0}
    got = fma_instructions(m)
    assert got["fp64"] == (DADD + DMUL, DFMA)
    assert got["fp32"] == (10.0, 0.0)
    assert "fp16" not in got
    assert SHARE == pytest.approx(0.59784, abs=1e-5)
    # (1 + s) / 2 is FLOP / (2 x instructions): 1963.81 G / 2458.08 G
    assert mix_ceiling(SHARE) == pytest.approx((DADD + DMUL + 2 * DFMA)
                                               / (2 * (DADD + DMUL + DFMA)))
    assert mix_ceiling(SHARE) == pytest.approx(0.79892, abs=1e-5)


@pytest.mark.skipif(not CSV.exists(), reason="GPP recording absent")
def test_gpp_recording_share():
    with CSV.open(newline="") as f:
        m = {r["Metric Name"]: float(r["Metric Value"].replace(",", ""))
             for r in csv.DictReader(f) if "_pred_on" in r["Metric Name"]}
    non, fma = fma_instructions(m)["fp64"]
    assert fma / (non + fma) == pytest.approx(SHARE)


def test_the_compute_cure_names_the_no_fma_ceiling():
    # GPP on an L4 (fp64 473 GFLOP/s): 1963.8 G fp64 + 49.1 G fp32 in 22.77 s, compute side
    k = Kernel("gpp", {"fp64": 1963.8e9, "fp32": 49.1e9}, {"DRAM": 132e9}, seconds=22.77,
               meta={"fma_share": {"fp64": SHARE}})
    roof, _ = catalog_roof("L4")
    (d,) = diagnose(analyze(roof, [k]))
    words = d.distances[0].words
    assert ("FMA share 60 % of fp64 add/mul/fma instructions: this mix tops out at "
            "(1 + 0.60) / 2 = 80 % of the peak (the no-FMA ceiling") in words
    # none for an all-FMA mix, a tensor-core kernel or a share that is no fraction
    assert mix_words({"fma_share": {"fp64": 0.95}}, "fp64", "vector") == ""
    assert mix_words({"fma_share": {"fp16": 0.1}}, "fp16", "tensor") == ""
    assert mix_words({"fma_share": {"fp64": 1.5}}, "fp64", None) == ""

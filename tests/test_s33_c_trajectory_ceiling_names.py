"""s33 C: a trajectory chart named one step's ceilings as the whole trajectory's.

`rooflab plot output.csv output?.csv --on output5.ncu-rep --trajectory --level DRAM -o
steps.png` (NERSC GPP) renames each step's top kernel to one shared name, "sigma_gpp_gpu
(steps)", so the chart joins them. Its legend then said "sigma_gpp_gpu (steps) no-FMA ceiling
114 GFLOP/s (FMA share 46 %)" and "sigma_gpp_gpu (steps) mixed roof 159.3 GFLOP/s": the first
is output1's alone (the longest step: dfma / (dadd + dmul + dfma) = 0.46; (1 + 0.46) / 2 x
155.5 GFLOP/s = 114), the second output.csv's alone (its fp32 FFMA part; no other step has
fp32), while the steps' FMA shares run 0.46-0.60 (output.csv 0.598, output5 0.508, by hand
from the files' sm__sass_thread_inst_executed_op_d{add,mul,fma} counts). Each now names its step.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main


def test_trajectory_ceilings_name_their_step(gpp, tmp_path, capsys):
    pytest.importorskip("ncu_report")
    files = [str(gpp / f"output{i}.csv") for i in ("", 1, 2, 3, 4, 5, 6, 7)]
    assert main(["plot", *files, "--on", str(gpp / "output5.ncu-rep"), "--trajectory",
                 "--level", "DRAM", "-o", str(tmp_path / "steps.png"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    labels = [ln["label"] for ln in doc["drawn"]["lines"]]
    nofma = [s for s in labels if "no-FMA ceiling" in s]
    mixed = [s for s in labels if "mixed roof" in s]
    assert nofma == ["sigma_gpp_gpu (steps) [output1] no-FMA ceiling 114 GFLOP/s "
                     "(FMA share 46 %)"]
    assert mixed == ["sigma_gpp_gpu (steps) [output] mixed roof 159.3 GFLOP/s "
                     "(weighted by FLOP share)"]


def test_a_kernel_named_with_its_step_is_not_named_twice():
    from rooflab.model.kernel import Kernel
    from rooflab.report.chart_parts import kernel_who

    k = Kernel(name="sigma_gpp_gpu_34 [output1]", flop={"fp64": 1.0}, bytes={"DRAM": 1.0},
               seconds=1.0, meta={"step": "output1", "step_index": 1})
    assert kernel_who(k) == "sigma_gpp_gpu_34 [output1]"
    assert kernel_who(k.with_(name="top (steps)")) == "top (steps) [output1]"
    assert kernel_who(k.with_(meta={})) == "sigma_gpp_gpu_34 [output1]"

"""Review s18 r5 F9: a default chart title named the machine only ("Roofline: NVIDIA
GeForce RTX 4060 Laptop GPU (profiler peaks, derived)"): two charts of two runs on one GPU
read the same. Kernels read from one file (Nsight Compute, rocprof, counters: meta "file")
now name it, and the kernel when there is one."""

from __future__ import annotations

import pytest

from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.report.chart import roofline_data

GPP = Roof("NVIDIA GeForce RTX 4060 Laptop GPU (profiler peaks)", "derived",
           compute=(Ceiling(156e9, precision="fp64", provenance="derived"),),
           memory=(Ceiling(256e9, level="DRAM", provenance="derived"),))
MACHINE = "NVIDIA GeForce RTX 4060 Laptop GPU (profiler peaks, derived)"


def _k(name, path):
    return Kernel(name, {"fp64": 85.2e9}, {"DRAM": 85.2e9 / 5.03}, seconds=1.0,
                  meta={"source": "ncu", "file": path, "line": 9})


def test_one_ncu_kernel_is_named_with_its_file():
    d = roofline_data([GPP], [_k("sigma_gpp_gpu_34", "/x/nersc-gpp/output1.csv")])
    assert d.title == f"Roofline: sigma_gpp_gpu_34 (output1.csv) on {MACHINE}"


def test_kernels_of_one_file_name_the_file_and_of_several_files_the_machine_only():
    one = roofline_data([GPP], [_k("a", "/r/run7.csv"), _k("b", "/r/run7.csv")])
    assert one.title == f"Roofline: run7.csv on {MACHINE}"
    two = roofline_data([GPP], [_k("a", "/r/run7.csv"), _k("a", "/r/run8.csv")])
    assert two.title == f"Roofline: {MACHINE}"


def test_the_html_chart_title_names_the_file_too():
    pytest.importorskip("plotly")
    from rooflab.report.html import figure

    fig = figure(analyze(GPP, [_k("sigma_gpp_gpu_34", "/x/output1.csv")]))
    assert fig.layout.title.text == (f"Roofline: sigma_gpp_gpu_34 (output1.csv) on "
                                     f"{GPP.name}")

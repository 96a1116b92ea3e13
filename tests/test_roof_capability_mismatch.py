"""A kernel file from one GPU judged on another's roof: every verb says so, where it is read.

`rooflab ncu out.csv --on h200` warned on its roof line that the GPP steps ran on a compute
capability 8.9 GPU; `rooflab plot` said nothing, and `rooflab report` said it only in a
note after all the advice (which then called the kernel far below the H200's roof).
"""

from __future__ import annotations

from rooflab.cli.main import main

WARNING = "the kernels were profiled on a compute capability 8.9 GPU, but NVIDIA H200 SXM is 9.0"


def test_plot_warns_for_a_roof_of_another_capability(output4, tmp_path, capsys):
    png = tmp_path / "h.png"
    assert main(["plot", output4, "--on", "h200", "--on", "L4", "-o", str(png)]) == 0
    err = capsys.readouterr().err
    assert f"warning: {WARNING}" in err
    assert "L4" not in err.split(WARNING)[0]      # L4 is 8.9: no warning for it
    assert err.count("compute capability") == 1 and png.stat().st_size > 0


def test_report_says_it_on_the_roof_line_before_the_advice(output4, capsys):
    assert main(["report", output4, "--on", "h200"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    roof_line = out.index("roof: NVIDIA H200 SXM (nominal), from --on h200; warning:")
    assert out.index(WARNING) < out.index("Top kernels") and roof_line < out.index("Top kernels")


def test_gpu_kernels_on_a_cpu_roof_are_warned(output4, capsys):
    # an ncu file (compute capability 8.9) judged on a CPU: said nothing before
    assert main(["ncu", output4, "--on", "EPYC 9654"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("roof: AMD EPYC 9654 (nominal), from --on EPYC 9654; warning: the kernels were "
            "profiled on a compute capability 8.9 GPU, but AMD EPYC 9654 is a CPU roof") in out


def test_cpu_ops_on_a_gpu_roof_are_warned(tmp_path, capsys):
    # `rooflab torch --run model.py --on h200` on a machine without a GPU: the trace holds
    # CPU ops only, timed on the CPU; the H200's ceilings do not apply to those times.
    import json

    trace = {"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0,
                              "dur": 50, "args": {"Input Dims": [[64, 128], [128, 32]],
                                                  "Input type": ["float", "float"]}}]}
    path = tmp_path / "cpu.json"
    path.write_text(json.dumps(trace))
    assert main(["torch", str(path), "--on", "h200"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("warning: the kernels ran on the CPU (CPU ops, no GPU kernels), but NVIDIA H200 "
            "SXM is a gpu roof") in out
    assert main(["plot", str(path), "--on", "h200", "-o", str(tmp_path / "c.png")]) == 0
    assert "the kernels ran on the CPU" in capsys.readouterr().err


def test_markdown_report_puts_the_mismatch_before_the_ranking(output4, tmp_path):
    md = tmp_path / "h.md"
    assert main(["report", output4, "--on", "h200", "-o", str(md)]) == 0
    text = md.read_text()
    care = text.index(f"> **Read with care**: {WARNING}")
    assert care < text.index("## Top kernels to work on")


def test_measured_cpu_kernels_reported_on_a_gpu_roof_are_warned(tmp_path, capsys):
    # rooflab.measure on the CPU, saved, then `rooflab report k.json --on h200`
    import rooflab

    k = rooflab.Kernel("triad", flop={"fp64": 2e7}, bytes={"DRAM": 2.4e8}, seconds=0.01,
                       meta={"device": "cpu"})
    path = tmp_path / "k.json"
    rooflab.save_kernels(str(path), [k])
    md = tmp_path / "k.md"
    assert main(["report", str(path), "--on", "h200", "-o", str(md)]) == 0
    assert "> **Read with care**: the kernels ran on the CPU" in md.read_text()

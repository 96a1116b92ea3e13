"""Third audit, profiler side: kernel names across .ncu-rep and CSV, step labels, compare with
different launch counts, single-ceiling roofs, `rooflab plot` on Nsight Compute files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.ingest.aggregate import Launch, _Group
from rooflab.ingest.kernel_names import display_names, step_labels
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.compare import compare_kernels
from rooflab.model.kernel import Kernel

GPP = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"


@pytest.fixture
def gpp() -> Path:
    if not (GPP / "output1.ncu-rep").is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP} (CI lays ../shared beside the clone)")
    pytest.importorskip("ncu_report")
    return GPP


def _group(name: str, key: str) -> _Group:
    return _Group(Launch(path="r.ncu-rep", line=None, id="0", name=name, metrics={}, key=key))


def test_openacc_main_kernel_keeps_the_demangled_name():
    # OpenACC: '<name>_gpu' and its reduction '<name>_gpu__red' both demangle to '<name>'
    groups = [(_group("k_34", "k_34_gpu"), None), (_group("k_34", "k_34_gpu__red"), None)]
    assert display_names(groups) == ["k_34", "k_34_gpu__red"]
    # no key starts the others: both named by their keys, still apart
    groups = [(_group("k", "k_a"), None), (_group("k", "k_b"), None)]
    assert display_names(groups) == ["k_a", "k_b"]
    # a lone kernel keeps its demangled name whatever its key
    assert display_names([(_group("k_34", "k_34_gpu"), None)]) == ["k_34"]


def test_rep_and_csv_name_the_gpp_kernel_alike(gpp, capsys):
    from rooflab.ingest.ncu_files import load_ncu

    rep = {k.name: k for k in load_ncu([str(gpp / "output1.ncu-rep")]).kernels}
    csv = {k.name for k in load_ncu([str(gpp / "output1.csv")]).kernels}
    assert set(rep) == {"sigma_gpp_gpu_34", "sigma_gpp_gpu_34_gpu__red"}
    assert csv == {"sigma_gpp_gpu_34"}
    assert rep["sigma_gpp_gpu_34"].meta["key"] == "sigma_gpp_gpu_34_gpu"       # still kept
    assert rep["sigma_gpp_gpu_34"].seconds == pytest.approx(30.492, rel=1e-4)
    assert rep["sigma_gpp_gpu_34_gpu__red"].seconds == pytest.approx(101.792e-6, rel=1e-4)
    # compare a report with a CSV of another step: matched by name, no --map
    assert main(["compare", str(gpp / "output1.ncu-rep"), str(gpp / "output5.csv"),
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (m,) = data["matches"]
    assert m["kernel"] == "sigma_gpp_gpu_34" and m["before_name"] == "sigma_gpp_gpu_34"
    assert m["speedup"] == pytest.approx(30.492 / 12.294, rel=1e-3)
    assert data["only_before"] == ["sigma_gpp_gpu_34_gpu__red"]
    # the one note: the steps did different work (review 12b I: FLOP -57.9 %)
    (note,) = data["notes"]
    assert note.startswith("sigma_gpp_gpu_34: 2.48x faster; FLOP x0.42") and \
        "mostly less work (FLOP)" in note


def test_step_labels_keep_same_stem_files_apart(gpp):
    from rooflab.ingest.ncu_files import load_ncu

    assert step_labels(["a/output5.csv", "a/output5.ncu-rep", "a/output6.csv"]) == \
        ["output5.csv", "output5.ncu-rep", "output6"]
    assert step_labels(["/data/run1/results.csv", "/data/run2/results.csv"]) == \
        ["run1/results.csv", "run2/results.csv"]
    assert step_labels(["o.csv", "o.csv"]) == ["o.csv", "o.csv #2"]
    imp = load_ncu([str(gpp / "output5.ncu-rep"), str(gpp / "output5.csv")])
    names = {k.name for k in imp.kernels}
    # before: both files were step 'output5', and the report's main kernel turned into
    # 'sigma_gpp_gpu_34_gpu [output5]' beside the CSV's 'sigma_gpp_gpu_34 [output5]'
    assert names == {"sigma_gpp_gpu_34 [output5.ncu-rep]", "sigma_gpp_gpu_34 [output5.csv]",
                     "sigma_gpp_gpu_34_gpu__red [output5.ncu-rep]"}


def test_rocprof_results_csv_in_two_folders_are_two_steps(tmp_path):
    from rooflab.ingest.rocprof import load_rocprof

    text = ("Index,KernelName,gpu-id,queue-id,BeginNs,EndNs,SQ_INSTS_VALU_FMA_F32,"
            "TCC_EA_RDREQ_sum\n0,axpy,2,0,1000,{end},16384,32768\n")
    paths = []
    for run, end in (("run1", 11000), ("run2", 6000)):
        (tmp_path / run).mkdir()
        p = tmp_path / run / "results.csv"
        p.write_text(text.format(end=end))
        paths.append(str(p))
    ks = load_rocprof(paths).kernels
    assert len({k.name for k in ks}) == 2              # before: one step 'results', both 'axpy'
    assert sorted(k.seconds for k in ks) == pytest.approx([5e-6, 10e-6])
    assert {k.meta["step"] for k in ks} == {"run1/results.csv", "run2/results.csv"}


def test_compare_says_per_call_times_when_launch_counts_differ():
    def k(seconds, calls):
        return Kernel(name="red", flop={"fp64": 1e6}, bytes={"DRAM": 8e6}, seconds=seconds,
                      calls=calls)

    c = compare_kernels([k(102e-6, 1)], [k(201e-6, 2)])
    assert c.matches[0].speedup == pytest.approx(102 / 201)        # totals, as before
    (note,) = c.notes
    assert "1 call(s) before, 2 after" in note and "102 us -> 101 us (1.01x)" in note
    assert not compare_kernels([k(1.0, 2)], [k(0.5, 2)]).notes


def test_roof_with_one_compute_ceiling_does_not_claim_only_hardware_helps():
    from rooflab.model import analyze
    from rooflab.model.diagnose import diagnose

    # the roof an .ncu-rep's fp64-only sections give (RTX 4060 Laptop at 1.62 GHz)
    roof = Roof("rtx4060 (profiler peaks)", kind="derived",
                compute=(Ceiling(155.5e9, precision="fp64", unit="vector",
                                 provenance="derived"),),
                memory=(Ceiling(256e9, level="DRAM", provenance="derived"),))
    kern = Kernel(name="gpp", flop={"fp64": 1.1e12}, bytes={"DRAM": 31.9e9}, seconds=12.9,
                  unit="vector")
    (d,) = diagnose(analyze(roof, [kern]))
    words = d.distances[2].words
    assert "only compute ceiling this roof lists" in words and "(fp64 vector, 156 GFLOP/s)" in words
    assert "only other hardware" not in words


def test_plot_reads_ncu_files_and_an_ncu_rep_roof(gpp, tmp_path, capsys):
    steps = [str(gpp / f) for f in ("output4.csv", "output5.csv", "output6.csv")]
    out = tmp_path / "steps.png"
    assert main(["plot", *steps, "--on", str(gpp / "output5.ncu-rep"), "--trajectory",
                 "--level", "DRAM", "-o", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert out.stat().st_size > 10_000
    assert data["roofs"][0]["name"] == "NVIDIA GeForce RTX 4060 Laptop GPU (profiler peaks)"
    pts = sorted((p["ai"], p["flop_per_s"]) for p in data["drawn"]["points"])
    # DRAM AI and FLOP/s of output5, output4, output6: fp64 FLOP / dram__bytes.sum, / time
    assert [round(x, 1) for x, _ in pts] == [6.6, 15.5, 34.8]
    assert [round(y / 1e9, 1) for _, y in pts] == [88.9, 88.3, 88.7]
    assert [a["kind"] for a in data["drawn"]["arrows"]] == ["trajectory", "trajectory"]
    # no --on: the report's own recorded peaks
    assert main(["plot", str(gpp / "output1.ncu-rep"), "-o", str(tmp_path / "r.png")]) == 0
    assert "peaks ncu recorded" in capsys.readouterr().err


def _mm_trace(path: Path, dur_us: float) -> str:
    """A CPU chrome trace with one aten::mm of (64x128) @ (128x32), fp32."""
    ev = {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0,
          "dur": dur_us, "args": {"External id": 1, "Input Dims": [[64, 128], [128, 32]],
                                  "Input type": ["float", "float"],
                                  "Concrete Inputs": ["", ""]}}
    path.write_text(json.dumps({"traceEvents": [ev]}))
    return str(path)


def test_compare_and_report_take_torch_traces(tmp_path, capsys):
    before = _mm_trace(tmp_path / "before.json", 100.0)
    after = _mm_trace(tmp_path / "after.json", 40.0)
    # before: "expected a list of kernels or an object with a 'kernels' list", exit 2
    assert main(["compare", before, after, "--json"]) == 0
    (m,) = json.loads(capsys.readouterr().out)["matches"]
    assert m["kernel"] == "aten::mm [64x128, 128x32]" and m["speedup"] == pytest.approx(2.5)
    # AI of the mm: 2*64*128*32 FLOP / 4*(64*128 + 128*32 + 64*32) B = 524288 / 57344
    assert m["ai_dram_after"] == pytest.approx(524288 / 57344)
    assert main(["report", after, "--on", "h200", "--json"]) == 0
    (k,) = json.loads(capsys.readouterr().out)["kernels"]
    assert k["flop"] == {"fp32": 524288} and k["seconds"] == pytest.approx(40e-6)


def test_run_script_without_torch_ops_names_the_script(tmp_path, capsys):
    pytest.importorskip("torch")
    script = tmp_path / "noop.py"
    script.write_text("print('hello')\n")
    assert main(["torch", "--run", str(script)]) == 2
    err = capsys.readouterr().err
    # before: "error: /tmp/rooflab-trace-....json: the trace holds no cpu_op events; profile
    # with torch.profiler.profile(record_shapes=True)" - a deleted file, and advice for
    # something --run already does
    assert err.startswith(f"error: --run {script}: the script ran no PyTorch op")
    assert "rooflab-trace-" not in err and "Traceback" not in err


def test_csv_table_carries_flop_and_bytes(tmp_path, capsys):
    if not (GPP / "output.csv").is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP}")
    import csv

    out = tmp_path / "k.csv"
    assert main(["ncu", str(GPP / "output.csv"), "-o", str(out)]) == 0
    rows = {r["level"]: r for r in csv.DictReader(out.open())}
    # fp64 dadd + dmul + 2 dfma plus fp32 2 ffma (output.csv holds 24.5 G ffma)
    flop = 122_305_685_313 + 371_957_323_851 + 2 * 734_774_600_586 + 2 * 24_541_362_358
    assert {float(r["flop"]) for r in rows.values()} == {flop}
    assert float(rows["DRAM"]["bytes"]) == 134_957_158_144          # dram__bytes.sum
    assert float(rows["L2"]["bytes"]) == 225_714_841_568            # lts__t_bytes.sum
    for r in rows.values():
        assert float(r["ai"]) == pytest.approx(float(r["flop"]) / float(r["bytes"]))


def test_two_traces_of_one_name_stay_two_points(tmp_path):
    from rooflab.ingest.torch_trace import load_torch_trace

    for run in ("run1", "run2"):
        (tmp_path / run).mkdir()
    a = _mm_trace(tmp_path / "run1" / "trace.json", 100.0)
    b = _mm_trace(tmp_path / "run2" / "trace.json", 40.0)
    names = sorted(k.name for k in load_torch_trace([a, b]).kernels)
    # before: both 'aten::mm [64x128, 128x32] [trace]'
    assert names == ["aten::mm [64x128, 128x32] [run1/trace.json]",
                     "aten::mm [64x128, 128x32] [run2/trace.json]"]


def _ncu_csv(path: Path, launches) -> str:
    """A details-page ncu CSV: (kernel name, ffma count, nanoseconds) per launch."""
    head = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
            '"Block Size","Grid Size","Device","CC","Section Name","Metric Name",'
            '"Metric Unit","Metric Value"\n')
    lines = [head]
    for i, (name, ffma, ns) in enumerate(launches):
        base = (f'"{i}","1","app","h","{name}","1","7","(256, 1, 1)","(1024, 1, 1)","0",'
                f'"9.0","Command line profiler metrics",')
        lines += [base + '"dram__bytes.sum","byte","1,000,000"\n',
                  base + f'"gpu__time_duration.sum","nsecond","{ns}"\n',
                  base + f'"sm__sass_thread_inst_executed_op_ffma_pred_on.sum","inst","{ffma}"\n']
    path.write_text("".join(lines))
    return str(path)


def test_template_instances_match_by_their_arguments_not_their_order(tmp_path, capsys):
    f, d = "void scale<float>(float*, int)", "void scale<double>(double*, int)"
    a = _ncu_csv(tmp_path / "a.csv", [(f, 1_000_000, 10_000), (d, 1_000_000, 50_000)])
    b = _ncu_csv(tmp_path / "b.csv", [(d, 1_000_000, 40_000), (f, 1_000_000, 5_000)])
    assert main(["compare", a, b, "--json"]) == 0
    got = {m["kernel"]: m["speedup"] for m in json.loads(capsys.readouterr().out)["matches"]}
    # before: 'scale<…>' and 'scale<…> #2' by order of appearance, so float (10 us) was
    # matched with double (40 us): 0.25x, and double (50 us) with float (5 us): 10x
    assert got == {"scale<float>": pytest.approx(2.0), "scale<double>": pytest.approx(1.25)}
    # a lone instance keeps the short name
    c = _ncu_csv(tmp_path / "c.csv", [(f, 1_000_000, 10_000)])
    assert main(["ncu", c, "--json"]) == 0
    assert [k["name"] for k in json.loads(capsys.readouterr().out)["kernels"]] == ["scale<…>"]


def test_long_template_names_get_a_stable_hash():
    from rooflab.ingest.kernel_names import template_name

    assert template_name("void scale<float>(float*, int)") == "scale<float>"
    long_a = "void k<" + "A" * 90 + ">(int)"
    long_b = "void k<" + "B" * 90 + ">(int)"
    one = display_names([(_group(long_a, ""), None), (_group(long_b, ""), None)])
    two = display_names([(_group(long_b, ""), None), (_group(long_a, ""), None)])
    assert one == two[::-1] and len(set(one)) == 2 and all(n.startswith("k<…> #") for n in one)


def test_plot_trajectory_of_a_saved_steps_analysis(gpp, tmp_path, capsys):
    steps = [str(gpp / f) for f in ("output4.csv", "output5.csv", "output6.csv")]
    saved = tmp_path / "steps.json"
    assert main(["ncu", *steps, "--on", str(gpp / "output5.ncu-rep"), "-o", str(saved)]) == 0
    capsys.readouterr()
    assert main(["plot", str(saved), "--trajectory", "--level", "DRAM", "-o",
                 str(tmp_path / "s.png"), "--json"]) == 0
    arrows = json.loads(capsys.readouterr().out)["drawn"]["arrows"]
    # before: no arrow (the steps are named 'sigma_gpp_gpu_34 [output4]', ... and the
    # trajectory joined only equal names)
    assert [(round(a["start"][0], 1), round(a["end"][0], 1)) for a in arrows] == \
        [(15.5, 6.6), (6.6, 34.8)]


def test_rocprof_one_crashed_run_among_several_is_a_warning(tmp_path, capsys):
    good = tmp_path / "results.csv"
    good.write_text("Index,KernelName,gpu-id,queue-id,BeginNs,EndNs,SQ_INSTS_VALU_FMA_F32,"
                    "TCC_EA_RDREQ_sum\n0,axpy,2,0,1000,11000,16384,32768\n")
    crashed = tmp_path / "crashed.csv"
    crashed.write_text("Index,KernelName\n")
    # before: the whole command failed on crashed.csv (as ncu does only for a lone file)
    assert main(["rocprof", str(good), str(crashed), "--on", "mi300x", "--json"]) == 0
    out, err = capsys.readouterr()
    (k,) = json.loads(out)["kernels"]
    assert k["flop"] == {"fp32": 64 * 2 * 16384} and k["seconds"] == pytest.approx(10e-6)
    assert "crashed.csv: no usable dispatch: the file has a header but no dispatch rows" in err
    assert main(["rocprof", str(crashed)]) == 2
    assert "no usable dispatch" in capsys.readouterr().err

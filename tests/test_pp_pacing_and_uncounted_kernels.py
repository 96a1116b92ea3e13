"""Audit 11: a user's first hour with the day's new features (bench --run, llm --pp,
rocprof-compute's roofline.csv, choose -o, the busy-machine note, the Python API)."""

from __future__ import annotations

import textwrap
from types import SimpleNamespace

import pytest

import rooflab
from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.hardware.resolve import load_roofs
from rooflab.model.analysis import analyze

ROOF = rooflab.Roof("box", compute=(rooflab.Ceiling(1e11, precision="fp64", unit="vector"),),
                    memory=(rooflab.Ceiling(5e10, level="DRAM"),
                            rooflab.Ceiling(2e11, level="L2")))


# --- a kernel with 0 FLOP and 0 bytes was dropped without a word --------------------------

def test_a_kernel_with_no_counts_is_said_not_dropped():
    zero = rooflab.Kernel("z", flop={"fp64": 0.0}, bytes={"DRAM": 0.0}, seconds=1e-7)
    a = analyze(ROOF, [zero])
    assert a.points == ()
    assert any(n.startswith("z: 0 FLOP and 0 bytes") for n in a.notes)


def test_a_copy_kernel_with_an_empty_level_gets_no_such_note():
    copy = rooflab.Kernel("copy", flop={"fp64": 0.0}, bytes={"DRAM": 8e6, "L2": 0.0},
                          seconds=1e-3)
    a = analyze(ROOF, [copy])
    assert len(a.points) == 1
    assert not any("0 FLOP and 0 bytes" in n for n in a.notes)


def test_bench_run_names_the_uncounted_kernel(tmp_path, capsys):
    script = tmp_path / "zero.py"
    script.write_text(textwrap.dedent("""
        import rooflab
        rooflab.measure(lambda: None, name="z", flop={"fp64": 0}, bytes={"DRAM": 0},
                        plan="quick")
    """))
    assert main(["bench", "--run", str(script), "--on", "EPYC 9654"]) == 0
    assert "z: 0 FLOP and 0 bytes, so no AI and no point" in capsys.readouterr().out


# --- --on with a .csv: a typo was 'unknown hardware', an empty file 'invalid JSON' ----------

def test_a_missing_csv_roof_is_file_not_found(tmp_path):
    with pytest.raises(ParseError, match="file not found"):
        load_roofs(str(tmp_path / "roofline.csv"))


def test_an_empty_or_foreign_csv_roof_says_what_a_roof_is(tmp_path, capsys):
    empty = tmp_path / "roofline.csv"
    empty.write_text("")
    other = tmp_path / "ranking.csv"
    other.write_text("rank,name,seconds\n1,H100,1e-3\n")
    with pytest.raises(ParseError, match="the file is empty; a roof is a roofline.csv"):
        load_roofs(str(empty))
    with pytest.raises(ParseError, match="not rocprof-compute's roofline.csv"):
        load_roofs(str(other))
    kernels = tmp_path / "k.json"
    rooflab.save_kernels(kernels, [rooflab.Kernel("k", flop={"fp64": 1e6},
                                                  bytes={"DRAM": 1e6}, seconds=1e-3)])
    assert main(["report", str(kernels), "--on", str(empty)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "JSON" not in err and err.count("\n") == 1


# --- llm --pp: the throughput line named the slowest stage when TPOT or a transfer paced it -

def _pipeline_line(capsys, *extra):
    assert main(["llm", "llama-3-70b", "--on", "H200", "--phase", "decode", *extra]) == 0
    (line,) = [s for s in capsys.readouterr().out.splitlines()
               if s.startswith("pipeline throughput")]
    return line


def test_too_few_micro_batches_are_paced_by_tpot(capsys):
    # 4 stages of ~7.3 ms, 2 micro-batches: round = max(2 x 7.58 ms, TPOT 29 ms) = 29 ms
    line = _pipeline_line(capsys, "--pp", "4", "--micro-batches", "2")
    assert "the TPOT floor (29 ms) sets the pace" in line
    assert "the slowest stage (3, 7.58 ms) sets the pace" not in line
    assert "68.94 tokens/s" in line          # 2 x 1 / 29.0 ms


def test_a_slow_stage_link_is_named_as_the_pace(capsys):
    # 16.4 kB at 1 MB/s = 16.4 ms > the slowest stage 14.7 ms; round = 4 x 16.4 = 65.5 ms
    line = _pipeline_line(capsys, "--pp", "2", "--micro-batches", "4", "--pp-link-bw", "1MB/s")
    assert "one stage transfer (16.4 ms) outlasts the slowest stage (1, 14.7 ms)" in line
    assert "61.04 tokens/s" in line


def test_a_full_pipeline_is_still_paced_by_its_slowest_stage(capsys):
    line = _pipeline_line(capsys, "--pp", "2")
    assert "the slowest stage (1, 14.7 ms) sets the pace: 67.91 tokens/s" in line


# --- bench's quick probe measured a busy machine and said nothing ---------------------------

def test_bench_says_the_quick_probes_busy_machine_note(tmp_path, capsys, monkeypatch):
    import rooflab.cli.bench as bench

    note = "other processes used 50% of the CPUs while the probe ran"
    profile = SimpleNamespace(extras={"machine_load": {"notes": [note]}})
    monkeypatch.setattr(bench, "probe_roofs", lambda device, progress=None: ((ROOF,), profile))
    script = tmp_path / "one.py"
    script.write_text(textwrap.dedent("""
        import rooflab
        rooflab.measure(lambda: None, name="k", flop={"fp64": 10}, bytes={"DRAM": 80},
                        plan="quick")
    """))
    assert main(["bench", "--run", str(script)]) == 0
    assert f"warning: {note}" in capsys.readouterr().err


# --- compare of two `llm --json` runs (no times) was a table of dashes, nothing said -------

def test_compare_of_untimed_runs_says_there_is_no_speed_up(tmp_path, capsys):
    files = []
    for name, tp in (("one.json", "1"), ("two.json", "2")):
        assert main(["llm", "tinyllama-1.1b", "--on", "H200", "--tp", tp, "--phase", "decode",
                     "--json"]) == 0
        (tmp_path / name).write_text(capsys.readouterr().out)
        files.append(str(tmp_path / name))
    assert main(["compare", *files]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "no matched kernel has a time in both runs" in out


# --- plot_roofline("T4", ...) said "got ('T', '4')"; a string of kernels was a traceback -----

def test_plot_roofline_names_a_wrong_argument_as_given():
    k = rooflab.Kernel("k", flop={"fp64": 1e6}, bytes={"DRAM": 1e6}, seconds=1e-3)
    with pytest.raises(rooflab.RooflabError, match=r"roofs must be Roofs .*got 'T4'$"):
        rooflab.plot_roofline("T4", [k])
    with pytest.raises(rooflab.RooflabError, match=r"kernels must be Kernels .*got 'k'$"):
        rooflab.plot_roofline(ROOF, "k")
    with pytest.raises(rooflab.RooflabError, match="kernels must be Kernels"):
        rooflab.plot_roofline(ROOF, ["k"])
    assert len(rooflab.plot_roofline(ROOF, (x for x in [k])).points) == 1   # any iterable


# --- bench --run SCRIPT -- --help: the script's help, then "mark a kernel with ..." -----------

def test_a_script_that_exits_early_is_not_told_to_mark_kernels(tmp_path, capsys):
    script = tmp_path / "args.py"
    script.write_text(textwrap.dedent("""
        import argparse
        import rooflab
        argparse.ArgumentParser().parse_args()       # --help prints and exits 0
        rooflab.measure(lambda: None, name="k", flop=1.0, bytes=8.0, plan="quick")
    """))
    assert main(["bench", "--run", str(script), "--on", "EPYC 9654", "--", "--help"]) == 2
    err = capsys.readouterr().err
    assert "the script exited (status 0) before it measured a kernel" in err
    assert "mark a kernel" not in err
    assert main(["bench", "--run", str(tmp_path)]) == 2
    assert "a folder, not a script" in capsys.readouterr().err


# --- choose: a model too big for a device named --tp as the way out, not --pp ----------------

def test_choose_names_pp_as_a_way_to_fit(tmp_path, capsys):
    assert main(["llm", "llama-3-70b", "--on", "H200", "--phase", "decode", "--json"]) == 0
    doc = tmp_path / "decode.json"
    doc.write_text(capsys.readouterr().out)
    assert main(["choose", str(doc), "--among", "H100"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "(rooflab llm --tp N or --pp N, or smaller --weights)" in out


# --- llm --pp on a roof without a link: "give the link bandwidth" named no flag --------------

def test_pp_on_a_roof_without_a_link_names_pp_link_bw(tmp_path, capsys):
    roof = tmp_path / "box.json"
    roof.write_text('{"schema_version": 1, "roof": {"name": "box", "kind": "measured", '
                    '"compute": [{"precision": "fp16", "unit": "tensor", "flop_per_s": 1e14}], '
                    '"memory": [{"level": "DRAM", "bytes_per_s": 1e12}]}}')
    assert main(["llm", "tinyllama-1.1b", "--on", str(roof), "--pp", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --pp 2: roof 'box' has no NVLink, PCIe or network ceiling")
    assert "--pp-link-bw" in err and err.count("\n") == 1
    assert main(["llm", "tinyllama-1.1b", "--on", str(roof), "--pp", "2",
                 "--pp-link-bw", "50GB/s", "--phase", "decode"]) == 0


# --- report --on a profile whose probe said it was disturbed: nothing said ------------------

def test_report_repeats_the_profiles_busy_machine_note(tmp_path, capsys):
    note = ("other processes used 48% of the CPUs while the probe ran: measured ceilings "
            "read low; rerun on a quiet machine")
    prof = tmp_path / "me.json"
    rooflab.save_profile(prof, rooflab.MachineProfile(
        host={"name": "box"}, measured=ROOF, extras={"machine_load": {"notes": [note]}}))
    kernels = tmp_path / "k.json"
    rooflab.save_kernels(kernels, [rooflab.Kernel("k", flop={"fp64": 1e6},
                                                  bytes={"DRAM": 1e6}, seconds=1e-3)])
    assert main(["report", str(kernels), "--on", str(prof), "--json"]) == 0
    import json
    assert f"When this profile was measured, {note}." in \
        json.loads(capsys.readouterr().out)["read_with_care"]
    quiet = tmp_path / "quiet.json"
    rooflab.save_profile(quiet, rooflab.MachineProfile(host={"name": "box"}, measured=ROOF))
    assert main(["report", str(kernels), "--on", str(quiet)]) == 0
    assert "When this profile was measured" not in capsys.readouterr().out


# --- Kernel/Ceiling made precision and level canonical but kept unit='Tensor' as typed ------

def test_units_are_canonical_in_python_as_in_files():
    roof = rooflab.Roof("box", compute=(
        rooflab.Ceiling(1e12, precision="FP16", unit="Tensor Cores"),
        rooflab.Ceiling(1e11, precision="fp16", unit="Vector")),
        memory=(rooflab.Ceiling(1e11, level="DRAM"),))
    assert [c.label for c in roof.compute] == ["fp16 tensor", "fp16 vector"]
    k = rooflab.Kernel("mm", flop={"fp16": 1e9}, bytes={"DRAM": 1e6}, seconds=1e-2,
                       unit="Tensor")
    assert k.unit == "tensor"
    a = analyze(roof, [k])
    assert a.points[0].binding == "fp16 tensor" and a.notes == ()    # 1 TFLOP/s, no stand-in


# --- bench --run a script with a syntax error: no line in the 'file:line:' place ------------

def test_a_script_that_does_not_compile_names_its_line(tmp_path, capsys):
    script = tmp_path / "syn.py"
    script.write_text("import rooflab\ndef f(:\n    pass\n")
    assert main(["bench", "--run", str(script), "--on", "EPYC 9654"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {script}:2: the script does not compile: SyntaxError: ")
    assert "def f(:" in err and "Traceback" not in err


# --- bench -o table.csv lost `calls`: a decorated kernel's 3 calls read back as 1 -----------

def test_bench_csv_keeps_calls_so_it_reads_back_as_the_json(tmp_path, capsys):
    from rooflab.ingest.kernelfile import load_kernels

    script = tmp_path / "three.py"
    script.write_text(textwrap.dedent("""
        import rooflab

        @rooflab.measure(name="scale", flop={"fp64": 1e6}, bytes={"DRAM": 1.6e7})
        def scale():
            return sum(range(100))

        for _ in range(3):
            scale()
    """))
    table, doc = tmp_path / "t.csv", tmp_path / "t.json"
    assert main(["bench", "--run", str(script), "--on", "EPYC 9654", "-o", str(table)]) == 0
    assert main(["bench", "--run", str(script), "--on", "EPYC 9654", "-o", str(doc)]) == 0
    capsys.readouterr()
    (from_csv,), (from_json,) = load_kernels(str(table)), load_kernels(str(doc))
    # a first call preempted for ms on a loaded box is left out as warm-up (measure_warmup):
    # the sums are then of the calls kept
    for k in (from_csv, from_json):
        left = k.meta.get("first_calls_left_out", 0) if k is from_json else 3 - k.calls
        assert k.calls + left == 3 and left <= 1
        assert k.flop == {"fp64": 1e6 * k.calls} and k.bytes == {"DRAM": 1.6e7 * k.calls}


# --- llm --pp --batch 1,8: the sweep's tokens/s (one batch in flight) read as the system's ----

def test_pp_sweep_says_its_tokens_per_s_are_one_batch_in_flight(capsys):
    assert main(["llm", "llama-3-70b", "--on", "H200", "--pp", "2", "--batch", "1,8",
                 "--phase", "decode"]) == 0
    out = capsys.readouterr().out
    assert ("the sweep's tokens/s are one batch in flight (batch / TPOT floor); with 2 "
            "micro-batches the pipeline throughput line below gives batch 1's") in out
    assert main(["llm", "llama-3-70b", "--on", "H200", "--batch", "1,8",
                 "--phase", "decode"]) == 0
    assert "one batch in flight" not in capsys.readouterr().out

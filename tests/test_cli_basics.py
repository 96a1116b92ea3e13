"""Review 14c F10 and 14d J: the professional-CLI basics.

- F10: `-o` naming one of the verb's own inputs is refused for every file a verb reads,
  --on / --hardware / --compare / --among / --run included (`bench --on P.json -o P.json`
  replaced the user's profile and exited 0).
- J: shell completion (typer's --install-completion / --show-completion, catalog names and
  files for --on); ROOFLAB_ON as --on's default, named where the roof is said; a
  `generator` block ({"rooflab": version, "command": argv}) in every JSON document, a
  footer line in report .md/.html, host.libraries.rooflab in a probed profile; a global
  -q that drops notes and warnings from stderr (the --json document keeps them).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab import __version__
from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup_roof
from rooflab.hardware.profile import MachineProfile, save_profile

CREATED = "2026-01-02T03:04:05+00:00"


def _profile(path: Path) -> str:
    """A saved profile: T4's nominal roof, a fixed `created`."""
    save_profile(path, MachineProfile(host={"name": "box"}, nominal=lookup_roof("T4"),
                                      created=CREATED))
    return str(path)


def _kernels(path: Path, seconds: float = 5e-4) -> str:
    """One fp32 GEMM: 2.1 GFLOP, 25 MB of DRAM traffic."""
    path.write_text(json.dumps({"kernels": [
        {"name": "gemm", "flop": 2.1e9, "bytes": {"DRAM": 25e6}, "seconds": seconds}]}))
    return str(path)


OP = "sm__sass_thread_inst_executed_op_"
NCU_HEAD = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
            '"Block Size","Grid Size","Device","CC","Section Name","Metric Name",'
            '"Metric Unit","Metric Value"')


def _ncu_csv(path: Path) -> str:
    """An `ncu --csv` details page: one copy kernel, 400 MB read + 400 MB written in
    0.45 ms, no FLOP."""
    metrics = {f"{OP}fadd_pred_on.sum": ("inst", "0"), f"{OP}fmul_pred_on.sum": ("inst", "0"),
               f"{OP}ffma_pred_on.sum": ("inst", "0"),
               "dram__bytes_read.sum": ("byte", "400,000,000"),
               "dram__bytes_write.sum": ("byte", "400,000,000"),
               "gpu__time_duration.sum": ("msecond", "0.45")}
    rows = [f'"0","1","app","h","copy","1","7","(256, 1, 1)","(1024, 1, 1)","0","8.9",'
            f'"Command line profiler metrics","{m}","{u}","{v}"'
            for m, (u, v) in metrics.items()]
    path.write_text("\n".join([NCU_HEAD, *rows]) + "\n")
    return str(path)


def _json(capsys, args) -> dict:
    capsys.readouterr()
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROOFLAB_ON", raising=False)
    script = tmp_path / "s.py"
    script.write_text("print('hi')\n")
    return {"P": _profile(tmp_path / "P.json"), "K": _kernels(tmp_path / "k.json"),
            "K2": _kernels(tmp_path / "k2.json", 2.5e-4), "NCU": _ncu_csv(tmp_path / "n.csv"),
            "S": str(script)}


# --- F10: -o never overwrites an input, whichever option names it ------------------------
# (verb and the option that names P.json) -> the command line; every one wrote P.json and
# exited 0 before the fix where marked `old: overwrote`
REFUSALS = {
    "bench --on": ["bench", "--only", "copy", "--quick", "--on", "P", "-o", "P"],
    "bench --run --on": ["bench", "--run", "S", "--on", "P", "-o", "P"],
    "compare --on": ["compare", "K", "K2", "--on", "P", "-o", "P"],
    "compare first run": ["compare", "P", "K2", "-o", "P"],
    "whatif --hardware": ["whatif", "K", "--on", "T4", "--hardware", "P", "-o", "P"],
    "whatif --on": ["whatif", "K", "--on", "P", "--precision", "fp16", "-o", "P"],
    "llm --compare": ["llm", "tinyllama-1.1b", "--on", "T4", "--compare", "P", "-o", "P"],
    "llm --on": ["llm", "tinyllama-1.1b", "--on", "P", "-o", "P"],
    "report --on": ["report", "K", "--on", "P", "-o", "P"],
    "choose --among": ["choose", "K", "--among", "T4,P", "-o", "P"],
    "ncu --on": ["ncu", "NCU", "--on", "P", "-o", "P"],
    "rocprof --on": ["rocprof", "NCU", "--on", "P", "-o", "P"],
    "torch --on": ["torch", "NCU", "--on", "P", "-o", "P"],
    "likwid --on": ["likwid", "NCU", "--on", "P", "-o", "P"],
    "perf --on": ["perf", "NCU", "--on", "P", "-o", "P"],
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_o_naming_any_input_is_refused_and_the_file_kept(case, files, capsys):
    args = [files.get(a, a) for a in REFUSALS[case]]
    args = [f"T4,{files['P']}" if a == "T4,P" else a for a in args]
    before = Path(files["P"]).read_bytes()
    capsys.readouterr()
    assert main(args) == 2, case
    err = capsys.readouterr().err
    assert f"-o {files['P']}: is also an input" in err and "Traceback" not in err
    assert Path(files["P"]).read_bytes() == before


def test_o_through_a_link_to_the_profile_is_refused(files, tmp_path, capsys):
    link = tmp_path / "link.json"
    link.symlink_to(files["P"])
    before = Path(files["P"]).read_bytes()
    assert main(["compare", files["K"], files["K2"], "--on", files["P"], "-o", str(link)]) == 2
    assert "is also an input (" in capsys.readouterr().err
    assert Path(files["P"]).read_bytes() == before


def test_torch_save_trace_over_its_script_is_refused(files, capsys):
    assert main(["torch", "--run", files["S"], "--save-trace", files["S"]]) == 2
    assert f"--save-trace {files['S']}: is also an input" in capsys.readouterr().err
    assert Path(files["S"]).read_text() == "print('hi')\n"


def test_o_elsewhere_still_writes(files, capsys):
    assert main(["compare", files["K"], files["K2"], "--on", files["P"], "-o", "c.json"]) == 0
    # 0.5 ms -> 0.25 ms: twice as fast
    assert json.loads(Path("c.json").read_text())["matches"][0]["speedup"] == 2.0


# --- J: the generator block, the report footer, the profile's rooflab version -------------
def test_ai_json_names_the_version_and_the_command_last(capsys):
    d = _json(capsys, ["ai", "matmul", "64", "64", "64"])
    assert list(d)[-1] == "generator"
    assert d["generator"] == {"rooflab": __version__,
                              "command": ["rooflab", "ai", "matmul", "64", "64", "64", "--json"]}
    assert d["flop"] == 2 * 64**3             # the existing keys are kept


@pytest.mark.parametrize("args", [
    ["report", "K", "--on", "T4"],
    ["whatif", "K", "--on", "T4", "--precision", "fp16"],
    ["llm", "tinyllama-1.1b", "--on", "T4"],
    ["ncu", "NCU", "--on", "T4"],
    ["plot", "K", "--on", "T4"],
    ["compare", "K", "K2"],
    ["specs", "show", "T4"],
])
def test_every_json_document_has_the_generator_block(args, files, capsys):
    argv = [files.get(a, a) for a in args]
    d = _json(capsys, argv)
    assert d["generator"] == {"rooflab": __version__, "command": ["rooflab", *argv, "--json"]}


def test_a_written_json_has_it_and_the_same_command_gives_the_same_bytes(files, capsys):
    args = ["report", files["K"], "--on", "T4", "-o", "r.json"]
    assert main(args) == 0
    first = Path("r.json").read_bytes()
    assert main(args) == 0
    assert Path("r.json").read_bytes() == first      # no time, no host: deterministic
    assert json.loads(first)["generator"]["command"] == ["rooflab", *args]
    # a stamped document reads back: report judges it again
    assert main(["report", "r.json", "--on", "T4", "--json"]) == 0


def test_report_md_and_html_end_with_the_footer(files, capsys):
    pytest.importorskip("plotly", reason="an HTML report needs plotly (the [html] extra)")
    assert main(["report", files["K"], "--on", "T4", "-o", "r.md"]) == 0
    last = Path("r.md").read_text().rstrip("\n").splitlines()[-1]
    assert last == f"Written by rooflab {__version__}: `rooflab report {files['K']} --on T4 " \
                   f"-o r.md`"
    assert main(["report", files["K"], "--on", "T4", "-o", "r.html"]) == 0
    assert (f"<hr><p class='muted'>Written by rooflab {__version__}: rooflab report "
            f"{files['K']} --on T4 -o r.html</p>") in Path("r.html").read_text()


def test_library_use_stamps_nothing():
    from rooflab.files import dumps_json
    from rooflab.report.markdown import generator_footer

    assert json.loads(dumps_json({"a": 1})) == {"a": 1}
    assert generator_footer() == ""


def test_a_probed_profile_names_its_rooflab(monkeypatch, tmp_path, capsys):
    pytest.importorskip("numba", reason="the CPU probe needs numba (the [cpu] extra)")
    import rooflab.cli.probe as probe_cli

    monkeypatch.chdir(tmp_path)
    made = MachineProfile(host={"name": "box", "libraries": {"numpy": "2.0"}},
                          nominal=lookup_roof("T4"), created=CREATED)
    monkeypatch.setattr(probe_cli, "run_probe", lambda dev, mode, threads, progress: made)
    monkeypatch.setattr(probe_cli, "warn_if_busy", lambda *a, **k: None)
    assert main(["probe", "--quick", "-q", "-o", "p.json"]) == 0
    d = json.loads(Path("p.json").read_text())
    assert d["host"]["libraries"] == {"numpy": "2.0", "rooflab": __version__}
    assert d["created"] == CREATED                    # the one time, unchanged
    assert d["generator"] == {"rooflab": __version__,
                              "command": ["rooflab", "probe", "--quick", "-q", "-o", "p.json"]}


# --- J: ROOFLAB_ON ------------------------------------------------------------------------
def test_rooflab_on_is_the_default_and_the_roof_line_names_it(files, monkeypatch, capsys):
    monkeypatch.setenv("ROOFLAB_ON", "T4")
    assert main(["report", files["K"]]) == 0
    assert "roof: NVIDIA T4 (nominal), from ROOFLAB_ON=T4" in capsys.readouterr().out
    assert _json(capsys, ["report", files["K"]])["roof"]["name"] == "NVIDIA T4"
    # --on given wins, and says so
    assert main(["report", files["K"], "--on", "H100"]) == 0
    out = capsys.readouterr().out
    assert "from --on H100" in out and "ROOFLAB_ON" not in out


def test_rooflab_on_for_ai_with_a_note(monkeypatch, capsys):
    monkeypatch.setenv("ROOFLAB_ON", "t4")
    d = _json(capsys, ["ai", "matmul", "256", "256", "256"])
    # 3 x 256^2 fp16 values = 393,216 B at T4's 320 GB/s: 1.2288 us (docs/json.md)
    assert d["work_floor_s"] == pytest.approx(393216 / 320e9)
    assert main(["ai", "matmul", "256", "256", "256"]) == 0
    assert "note: --on t4 (from ROOFLAB_ON)" in capsys.readouterr().err


def test_rooflab_on_for_plot_says_the_roof(files, monkeypatch, capsys):
    monkeypatch.setenv("ROOFLAB_ON", "T4")
    assert main(["plot", files["K"], "-o", "c.png"]) == 0
    assert "roof: NVIDIA T4 (nominal), from ROOFLAB_ON=T4" in capsys.readouterr().err


def test_rooflab_on_profile_is_an_input_too(files, monkeypatch, capsys):
    monkeypatch.setenv("ROOFLAB_ON", files["P"])
    before = Path(files["P"]).read_bytes()
    assert main(["report", files["K"], "-o", files["P"]]) == 2
    assert Path(files["P"]).read_bytes() == before


# --- J: -q --------------------------------------------------------------------------------
def test_quiet_drops_notes_and_warnings_not_the_json_notes(files, capsys):
    args = ["plot", files["K"], "--on", "T4", "--json"]
    assert main(args) == 0
    loud = capsys.readouterr()
    assert "warning: NVIDIA T4 (nominal): drawn 2 of 6 compute ceilings" in loud.err
    assert main(["-q", *args]) == 0
    quiet = capsys.readouterr()
    assert "warning:" not in quiet.err and "note:" not in quiet.err
    assert json.loads(quiet.out)["notes"] == json.loads(loud.out)["notes"] != []
    # errors are still said
    assert main(["-q", "report", "missing.json", "--on", "T4"]) == 2
    assert capsys.readouterr().err.startswith("error: ")


# --- J: shell completion -----------------------------------------------------------------
def test_completion_script_is_produced(capsys, monkeypatch):
    # typer takes the shell from the process tree (shellingham), not from "bash": a run
    # with no shell above it (a CI runner, a detached job) printed "Shell  not supported"
    # shellingham.detect_shell, the public call every typer makes for it: typer's own
    # helper (typer.completion._get_shell_name) is private and absent in some typers
    # (review s22 r5 F4)
    import shellingham
    monkeypatch.setattr(shellingham, "detect_shell", lambda *a, **k: ("bash", "/bin/bash"))
    assert main(["--show-completion", "bash"]) == 0
    out = capsys.readouterr().out
    assert "_ROOFLAB_COMPLETE=complete_bash" in out
    assert "complete -o default -F _rooflab_completion rooflab" in out


def test_on_completes_catalog_names(monkeypatch, capsys):
    monkeypatch.setenv("_ROOFLAB_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", "rooflab report --on H20")
    monkeypatch.setenv("COMP_CWORD", "3")
    capsys.readouterr()
    assert main(["report"]) == 0
    got = capsys.readouterr().out.split()
    assert {"H200", "H200-SXM", "H20"} <= set(got)
    assert all(n.lower().startswith("h20") for n in got)   # case-insensitive prefix


def test_on_completes_roof_files_and_folders(tmp_path, monkeypatch):
    from rooflab.cli.options import complete_on

    monkeypatch.chdir(tmp_path)
    for name in ("me.json", "roofline.csv", "notes.txt"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "t4.ncu-rep").write_text("")
    assert ("me.json", "file") in complete_on("m")
    names = [n for n, _ in complete_on("")]
    assert {"me.json", "roofline.csv", "runs/"} <= set(names) and "notes.txt" not in names
    assert complete_on("runs/t") == [("runs/t4.ncu-rep", "file")]
    assert ("MI300X", "AMD Instinct MI300X") in complete_on("mi300")

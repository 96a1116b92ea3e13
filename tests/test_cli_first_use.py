"""Audit 4, a first-time user: Ctrl-C, next steps after the demo, the usual wrong files."""

from __future__ import annotations

import json

import pytest

from rooflab.cli import demo as demo_cli
from rooflab.cli.main import main
from rooflab.hardware.profile import MachineProfile, save_profile
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel

ROOF = Roof(name="fake measured", kind="measured",
            compute=(Ceiling(1e11, precision="fp64", unit="vector", provenance="measured"),),
            memory=(Ceiling(2e10, level="DRAM", provenance="measured"),))
# triad of 1e6 fp64 elements: 2e6 FLOP, 24e6 B; floor 24e6 / 2e10 = 1.2 ms, timed 2.4 ms
TRIAD = Kernel("triad_fp64", flop={"fp64": 2e6}, bytes={"DRAM": 24e6}, seconds=2.4e-3)


def fake_run_demo(progress=None):
    return MachineProfile(host={"name": "fake host"}, measured=ROOF), analyze(ROOF, [TRIAD])


def test_demo_says_what_to_run_next_with_its_own_paths(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(demo_cli, "run_demo", fake_run_demo)
    out = tmp_path / "mine"
    assert main(["demo", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "50 %" in text                       # 1.2 ms floor / 2.4 ms measured
    assert f"next: rooflab report {out / 'kernels.json'} --on {out / 'profile.json'}" in text
    assert f"rooflab bench --on {out / 'profile.json'}" in text
    # and the suggested command works on what the demo wrote
    assert main(["report", str(out / "kernels.json"), "--on", str(out / "profile.json")]) == 0
    assert "triad_fp64" in capsys.readouterr().out


def test_ctrl_c_in_the_demo_is_said_not_silent(tmp_path, monkeypatch, capsys):
    def interrupted(progress=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(demo_cli, "run_demo", interrupted)
    out = tmp_path / "demo"
    assert main(["demo", "-o", str(out)]) == 130
    err = capsys.readouterr().err
    assert err.count("error: interrupted; nothing was written") == 1
    assert not out.exists()


def test_ctrl_c_in_the_probe_is_said_once(tmp_path, monkeypatch, capsys):
    pytest.importorskip("numba", reason="the CPU probe needs numba (the [cpu] extra)")
    import rooflab.cli.probe as verb

    def interrupted(*_a):
        raise KeyboardInterrupt

    monkeypatch.setattr(verb, "run_probe", interrupted)
    assert main(["probe", "-q", "-o", str(tmp_path / "p.json")]) == 130
    assert capsys.readouterr().err.count("error: interrupted") == 1


def test_on_the_demo_folder_points_at_its_profile(tmp_path, capsys):
    folder = tmp_path / "rooflab-demo"
    folder.mkdir()
    save_profile(folder / "profile.json", MachineProfile(host={"name": "h"}, measured=ROOF))
    assert main(["ai", "gemv", "1024", "1024", "--on", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "is a directory" in err and str(folder / "profile.json") in err
    assert "unknown hardware" not in err
    # the file it names is the right answer: gemv fp16 AI = 2*1024^2 / (2*(1024^2+2048))
    assert main(["ai", "gemv", "1024", "1024", "--on", str(folder / "profile.json")]) == 0
    assert "0.998" in capsys.readouterr().out


def test_a_catalog_name_still_wins_over_a_folder_of_that_name(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "T4").mkdir()
    assert main(["ai", "gemv", "2048", "2048", "--on", "T4"]) == 0
    assert "26.2 us" in capsys.readouterr().out     # 8.4e6 B / 320 GB/s, seed 004


def test_a_folder_given_as_kernel_file_lists_the_files_in_it(tmp_path, capsys):
    folder = tmp_path / "rooflab-demo"
    folder.mkdir()
    (folder / "kernels.json").write_text("{}")
    (folder / "roofline.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    assert main(["report", str(folder), "--on", "T4"]) == 2
    err = capsys.readouterr().err
    assert "is a directory" in err and str(folder / "kernels.json") in err
    assert "roofline.png" not in err


@pytest.mark.parametrize("head,kind", [(b"\x89PNG\r\n\x1a\n\x00\x00", "a PNG image"),
                                       (b"%PDF-1.7\n\xe2\xe3\xcf\xd3", "a PDF document")])
def test_an_image_where_json_is_expected_is_named(tmp_path, capsys, head, kind):
    f = tmp_path / "roofline.png"
    f.write_bytes(head + bytes(range(128, 256)))
    for argv in (["plot", str(f), "--on", "T4", "-o", str(tmp_path / "c.png")],
                 ["ai", "gemv", "8", "8", "--on", str(f)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"is {kind}, not a text file" in err and "Traceback" not in err


def test_an_empty_json_file_says_empty(tmp_path, capsys):
    f = tmp_path / "kernels.json"
    f.write_text("\n")
    assert main(["report", str(f), "--on", "T4"]) == 2
    err = capsys.readouterr().err
    assert "the file is empty" in err and "Expecting value" not in err
    json.dumps(err)   # one plain line, no exception text


def test_version_flag(capsys):
    import rooflab

    for flag in ("--version", "-V"):
        assert main([flag]) == 0
        assert capsys.readouterr().out.strip() == f"rooflab {rooflab.__version__}"


def test_top_level_help_keeps_its_first_commands_on_one_line_each(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    main(["--help"])
    out = capsys.readouterr().out
    # each suggested command and what it does on one line in an 80-column terminal
    for cmd, what in (("rooflab demo", "this CPU's roof"), ("rooflab specs list", "datasheet"),
                      ("rooflab ai matmul 4096 4096 4096", "FLOP, bytes, intensity")):
        assert any(cmd in line and what in line for line in out.splitlines()), out


def test_llm_tokens_per_second_is_a_plain_number(capsys):
    # tinyllama on T4, batch 128 at context 500: TPOT floor 12.45 ms -> 128 / 12.45 ms
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "--batch", "1,128", "--context", "500",
                 "--phase", "decode"]) == 0
    out = capsys.readouterr().out
    assert "e+0" not in out
    row = next(line for line in out.splitlines() if line.strip("│ ").startswith("128 "))
    assert "10284" in row and "12.4 ms" in row


def test_the_demo_markdown_report_given_as_kernels_is_named_not_json(tmp_path, capsys):
    md = tmp_path / "report.md"
    md.write_text("# rooflab report\n\n| kernel | AI |\n")
    assert main(["report", str(md), "--on", "T4"]) == 2
    err = capsys.readouterr().err
    assert "this .md file is not JSON" in err
    bad = tmp_path / "cut.json"          # a real JSON file cut short keeps the plain message
    bad.write_text('{"kernels": [\n')
    assert main(["report", str(bad), "--on", "T4"]) == 2
    err = capsys.readouterr().err
    assert "cut.json:2: invalid JSON" in err and "is it the right file" not in err


def test_bench_on_a_gpu_roof_says_the_kernels_ran_on_this_cpu(capsys):
    assert main(["bench", "--on", "T4", "--only", "gemm_fp64_64", "--quick"]) == 0
    captured = capsys.readouterr()
    assert "gemm_fp64_64" in captured.out
    warning = [line for line in captured.err.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "this machine's CPU" in warning[0]
    assert "NVIDIA T4, a gpu" in warning[0]


def test_bench_on_a_cpu_roof_or_profile_stays_quiet():
    from rooflab.cli.bench_roofs import other_kind_warning

    assert other_kind_warning("EPYC 9654", "cpu") == ""
    assert other_kind_warning("profile.json", "cpu") == ""       # a file: not the catalog
    assert other_kind_warning("h200", "cuda:0") == ""
    assert "a CUDA GPU" in other_kind_warning("EPYC 9654", "cuda")
    assert other_kind_warning("nosuchdevice", "cpu") == ""       # load_roofs says that one


def test_bench_list_takes_json(capsys):
    assert main(["bench", "--list", "--json"]) == 0
    names = json.loads(capsys.readouterr().out)["kernels"]
    assert len(names) == 20 and names[0] == "copy_fp64" and "sort_fp64" in names


def test_the_readme_error_excerpts_are_what_rooflab_prints(tmp_path, monkeypatch, capsys):
    import re
    import shlex
    from pathlib import Path

    readme = Path(__file__).resolve().parents[1] / "README.md"
    section = readme.read_text().split("## When something goes wrong", 1)[1]
    block = section.split("```", 2)[1]
    pairs = re.findall(r"^\$ rooflab (.+)\n(error: .+)$", block, flags=re.M)
    assert len(pairs) >= 5
    monkeypatch.chdir(tmp_path)
    demo = tmp_path / "rooflab-demo"
    demo.mkdir()
    save_profile(demo / "profile.json", MachineProfile(host={"name": "h"}, measured=ROOF))
    (demo / "roofline.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(128, 256)))
    for args, expected in pairs:
        assert main(shlex.split(args)) == 2, args
        assert capsys.readouterr().err.splitlines()[0] == expected, args


def test_the_kernel_table_fits_an_80_column_terminal_with_whole_names(monkeypatch, capsys):
    from rich.console import Console

    import rooflab.cli.bench as bench_cli

    kernels = [Kernel("gemm_fp64_1024", flop={"fp64": 2 * 1024**3}, bytes={"DRAM": 3 * 8 * 1024**2},
                      seconds=0.0204, meta={"flags": ("noisy",)}),
               Kernel("layernorm_fp32", flop={"fp32": 7 * 4096**2}, bytes={"DRAM": 8 * 4096**2},
                      seconds=0.0357),
               Kernel("sort_fp64", bytes={"DRAM": 33.6e6}, seconds=0.12,
                      meta={"flags": ("cache-resident",)})]
    analysis = analyze(ROOF, kernels)
    monkeypatch.setattr(bench_cli, "wide_console",
                        lambda: Console(width=80, force_terminal=False, highlight=False))
    bench_cli.print_results(analysis, None)
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert not any("…" in line for line in lines)
    row = next(line for line in lines if line.startswith("gemm_fp64_1024"))
    # AI = 2*1024^3 / (24*1024^2) = 85.3; achieved 2.147e9 / 20.4 ms = 105 GFLOP/s
    assert "85.3" in row and "105 GFLOP/s" in row and "compute" in row and "noisy" in row
    assert any(line.startswith("sort_fp64") and "cache-resident" in line for line in lines)
    # a wide terminal keeps the full table, FLOP and bytes included
    monkeypatch.setattr(bench_cli, "wide_console",
                        lambda: Console(width=150, force_terminal=False, highlight=False))
    bench_cli.print_results(analysis, None)
    assert "measured/floor" in capsys.readouterr().out


def test_demo_next_steps_quote_a_path_with_spaces(tmp_path, monkeypatch, capsys):
    import shlex

    monkeypatch.setattr(demo_cli, "run_demo", fake_run_demo)
    out = tmp_path / "my results"
    assert main(["demo", "-o", str(out)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("next:"))
    argv = shlex.split(line.removeprefix("next: ").split("   (")[0])
    assert argv == ["rooflab", "report", str(out / "kernels.json"), "--on",
                    str(out / "profile.json")]


def test_the_report_table_fits_80_columns_and_keeps_its_advice_below(tmp_path, monkeypatch,
                                                                     capsys):
    # At 80 columns the priorities table drops "best advice" and "predicted" (each
    # diagnosis below gives both) instead of folding every cell into word columns.
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [
        {"name": "decode b=1", "flop": {"fp16": 2.2e9}, "bytes": {"DRAM": 2.2e9},
         "seconds": 0.015, "meta": {"op": "decode"}}]}))
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["report", str(path), "--on", "T4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    row = next(ln for ln in lines if "decode b=1" in ln and "memory" in ln)
    assert "2.18x" in row and "batch 8 requests" not in row   # the row is whole on one line
    assert "best advice" not in " ".join(lines)
    assert any(ln.strip().startswith("-> batch 8 requests per weight read") for ln in lines)
    assert max(len(ln) for ln in lines) <= 80
    monkeypatch.setenv("COLUMNS", "160")
    assert main(["report", str(path), "--on", "T4"]) == 0
    wide = capsys.readouterr().out
    assert "best advice" in wide and "predicted" in wide


def test_profiler_kernel_tables_fit_80_columns():
    # `rooflab ncu`/`torch`/`rocprof` at 80 columns printed 'sigm… GFLO… memo…'; now the
    # numbers stay whole (calls move to --json / -o x.csv) and only names fold.
    from rich.console import Console

    from rooflab.cli.profiled import rich_table

    rows = [{"kernel": "sigma_gpp_gpu_34 [output1]", "calls": 1, "seconds": 30.49,
             "time_share": 0.573, "level": lv, "precision": "fp64", "ai": ai,
             "achieved_flop_per_s": 85.2e9, "percent_of_roof": 100.0, "bound": "memory"}
            for lv, ai in (("DRAM", 5.03), ("L2", 4.05))]
    narrow = Console(width=80, record=True)
    narrow.print(rich_table(rows, "1 kernel, longest first"))
    text = narrow.export_text()
    assert "…" not in text and "85.2 GFLOP/s" in text and "memory" in text
    assert max(len(ln) for ln in text.splitlines()) <= 80
    wide = Console(width=160, record=True)
    wide.print(rich_table(rows, "t"))
    assert "calls" in wide.export_text()

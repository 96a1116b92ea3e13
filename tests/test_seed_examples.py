"""docs/seeds.md's commands, run on the inputs shipped in examples/seeds/, print the page's
numbers (review 12a #9: the page ran on files a user could not see)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from rooflab.cli.main import main

SEEDS = Path(__file__).resolve().parents[1] / "examples" / "seeds"


def run(capsys, *args):
    code = main([str(SEEDS / a) if (SEEDS / a).is_file() else a for a in args])
    out, err = capsys.readouterr()
    return code, " ".join(out.split()), err


def test_every_file_the_page_names_is_shipped():
    page = (Path(__file__).resolve().parents[1] / "docs" / "seeds.md").read_text()
    for name in ("seed000.csv", "seed000roof.json",
                 "seed000_ncu.csv", "seed000_ncu_timed.csv", "conv.json", "ew.json",
                 "pts.json", "t4p.json", "k.json"):
        assert name in page and (SEEDS / name).is_file(), name


def test_seed000_ncu_untimed_and_timed(capsys):
    code, out, _ = run(capsys, "ncu", "seed000_ncu.csv", "--on", "A100", "--json")
    assert code == 0
    pts = {p["kernel"]: p for p in json.loads(out)["analysis"]}
    # a 1024^3 fp32 GEMM: 2 x 1024^3 FLOP over 8,388,608 + 4,194,304 B = AI 170.7
    assert pts["sgemm"]["ai"] == pytest.approx(2 * 1024**3 / 12_582_912)
    assert pts["sgemm"]["seconds"] is None
    code, out, _ = run(capsys, "report", "seed000_ncu_timed.csv", "--on", "A100")
    assert code == 0
    # copyKernel: 800 MB / 450 us = 1.78 TB/s = 87 % of the A100's 2.039 TB/s (seed 000 §3.1)
    assert "moves 1.78 TB/s = 87 % of DRAM bandwidth" in out


def test_seed000_table_on_its_roof(capsys):
    code, out, _ = run(capsys, "report", "seed000.csv", "--on", "seed000roof.json", "--json")
    assert code == 0
    pts = {p["kernel"]: p for p in json.loads(out)["analysis"]}
    # 280 TFLOP/s / 1.8 TB/s: ridge 155.6; elementwise_add AI 0.25 -> 450 GFLOP/s, 120 = 27 %
    assert pts["elementwise_add"]["attainable_flop_per_s"] == pytest.approx(0.25 * 1.8e12)
    assert pts["elementwise_add"]["percent_of_roof"] == pytest.approx(120e9 / 450e9 * 100)
    assert pts["gemm_1024"]["ai"] == pytest.approx(175)
    assert pts["gemm_1024"]["percent_of_roof"] == pytest.approx(4200e9 / 280e12 * 100)
    # the seed's roof is fp16 Tensor Core (§3.3), its table fp32 (§2.2): the fallback is said
    code, out, err = run(capsys, "report", "seed000.csv", "--on", "seed000roof.json")
    assert code == 0 and "has no fp32 ceiling; using fp16 tensor" in out + " ".join(err.split())


def test_seed000_whatif_precision_and_fusion(capsys):
    code, out, _ = run(capsys, "whatif", "conv.json", "--on", "A100", "--precision", "fp16")
    assert code == 0
    assert "│ conv │ 20 -> 40 │ 200 us │ 51.6 us │ 3.87x │ memory (was compute) │" in out
    code, out, _ = run(capsys, "whatif", "ew.json", "--on", "A100", "--fuse", "relu,add,mul")
    assert code == 0 and "total: 750 us -> 250 us (3.00x)" in out


def test_seed004_record_table_and_ridge_band(tmp_path, capsys):
    md = tmp_path / "r.md"
    code, _, _ = run(capsys, "report", "pts.json", "--on", "t4p.json", "-o", str(md))
    assert code == 0
    text = md.read_text()
    for row in ("| DRAM bandwidth | 320 GB/s | 270 GB/s | 84 % |",
                "| fp16 tensor peak | 65 TFLOP/s | 50 TFLOP/s | 77 % |",
                "| ridge fp16 / DRAM | 203 | 185 | 91 % |",
                "| decode b=1: FLOP/s | 320 GFLOP/s | 147 GFLOP/s | 54 % of the measured roof |"):
        assert row in text, row
    code, out, _ = run(capsys, "report", "k.json", "--on", "t4p.json")
    assert code == 0
    assert ("read with care: gemm_ai190: AI 190 lies between the ridges of the two roofs (185 "
            "on this one, 203 nominal, fp16 tensor / DRAM)") in out


# --- review r7 F5: every `$ rooflab` command in docs/seeds.md's blocks, run as written ------
# The page said this file "runs every command on this page" while it ran 7 of about 25.
# Now each `$ ...` line of a block is run in-process, from a copy of examples/seeds/ (the
# folder the page says to run them from), and every output line the page prints under it
# must be in what the command printed or wrote with -o (whitespace-normalised: a table row
# pads to the terminal's width). `ncu` runs on a GPU; `cat` and `grep` read the files.

PAGE = Path(__file__).resolve().parents[1] / "docs" / "seeds.md"


def _page_commands() -> list[tuple[str, list[str]]]:
    """(command, the output lines the page shows under it), in page order, from every
    fenced block (seed 002's are indented inside a list item)."""
    cmds: list[tuple[str, list[str]]] = []
    block = False
    for raw in PAGE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line.startswith("```"):
            block = not block
            current = None
            continue
        if not block:
            continue
        if line.startswith("$ "):
            current = (line[2:].split("  #")[0].strip(), [])
            cmds.append(current)
        elif current is not None and line:
            current[1].append(line)
    return cmds


COMMANDS = _page_commands()


def _norm(text: str) -> str:
    return " ".join(text.split())


def _run_page_command(cmd: str, work: Path, capsys, fresh: bool = True) -> str:
    """Run one page command in `work` (first the page command that writes an input it
    needs and the folder lacks: `s21.json`); its output and any text file it wrote.
    `fresh`: copy the shipped files in first; False keeps what earlier commands wrote,
    as a user's shell does (review s21 r4 F3)."""
    import shlex
    import shutil

    if fresh:
        for f in SEEDS.iterdir():      # each command sees the shipped files, as written
            shutil.copy(f, work / f.name)
    argv = shlex.split(cmd)
    written = argv[argv.index("-o") + 1] if "-o" in argv else None
    for name in argv[1:]:
        makers = [c for c, _ in COMMANDS if c.endswith(f" -o {name}")]
        if name != written and makers and not (work / name).exists():
            _run_page_command(makers[0], work, capsys, fresh)
    if argv[0] == "cat":
        return (work / argv[1]).read_text()
    if argv[0] == "grep":
        return (work / argv[-1]).read_text()
    assert argv[0] == "rooflab", cmd
    capsys.readouterr()
    code = main(argv[1:])
    out, err = capsys.readouterr()
    assert code == 0, (cmd, err)
    if written and written.endswith((".md", ".json")):
        out += (work / written).read_text()
    return out + err


def test_the_page_lists_its_commands():
    # the commands the page runs on its own files (a guard against a parse that finds none)
    assert len(COMMANDS) >= 24
    names = [c for c, _ in COMMANDS]
    assert "rooflab report pts.json --on t4p.json -o r.md" in names
    assert "rooflab plot seed000.csv --on seed000roof.json -o roofline.png" in names
    assert sum(c.startswith("rooflab ai conv2d") for c in names) == 3     # r7 F1


@pytest.mark.parametrize("cmd, shown", [c for c in COMMANDS if not c[0].startswith("ncu ")],
                         ids=lambda v: v[:60] if isinstance(v, str) else "")
def test_every_page_command_runs_and_prints_what_the_page_shows(cmd, shown, tmp_path,
                                                                monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    said = _norm(_run_page_command(cmd, tmp_path, capsys))
    missing = [line for line in shown if _norm(line) not in said]
    assert not missing, (cmd, missing)


# --- review s21 r4 F3: the page's first command wrote over the shipped t4p.json -----------
# The page says to run its commands from examples/seeds/ as written; its first one was
# `specs import --from T4 ... -o t4p.json`, which replaced the hand-written profile that
# every later `--on t4p.json` reads (record table rows `ridge fp16 tensor / DRAM` and
# `ridge fp16 vector / DRAM`, roofs named `NVIDIA T4 measured`). The test above copies the
# shipped files back before each command, so it could not see that; these two can.

REPO = Path(__file__).resolve().parents[1]
_WRITES = re.compile(r"(?:^|\s)(?:-o|>)\s+(\S+)")


def _doc_commands(page: Path) -> list[str]:
    """Every `rooflab ...` / `python ...` line in the page's fenced blocks, `$ ` and any
    trailing `  # comment` removed."""
    cmds, block = [], False
    for raw in page.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line.startswith("```"):
            block = not block
            continue
        line = line[2:] if line.startswith("$ ") else line
        if block and line.startswith(("rooflab ", "python ")):
            cmds.append(line.split("  #")[0].strip())
    return cmds


def _tracked_files() -> set[str]:
    try:
        out = subprocess.run(["git", "-C", str(REPO), "ls-files"], capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: which files are tracked is not known")
    return set(out.split())


def test_no_doc_command_writes_over_a_tracked_file():
    tracked = _tracked_files()
    pages = [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]
    assert len(pages) > 10
    over = []
    for page in pages:
        # seeds.md runs from examples/seeds/, every other page from the repository root
        folder = "examples/seeds/" if page.name == "seeds.md" else ""
        for cmd in _doc_commands(page):
            over += [(page.name, cmd) for name in _WRITES.findall(cmd)
                     if folder + name in tracked or name in tracked]
    assert not over, over


def test_the_page_run_in_order_in_one_folder(tmp_path, monkeypatch, capsys):
    """Copy examples/seeds/ once and run the page's commands one after another, as a
    reader's shell does: each still prints what the page shows, and the shipped files
    are as shipped at the end."""
    import shutil

    monkeypatch.chdir(tmp_path)
    for f in SEEDS.iterdir():
        shutil.copy(f, tmp_path / f.name)
    wrong = []
    for cmd, shown in COMMANDS:
        if cmd.startswith("ncu "):
            continue
        said = _norm(_run_page_command(cmd, tmp_path, capsys, fresh=False))
        wrong += [(cmd, line) for line in shown if _norm(line) not in said]
    assert not wrong, wrong
    changed = [f.name for f in SEEDS.iterdir()
               if (tmp_path / f.name).read_bytes() != f.read_bytes()]
    assert not changed, changed


# --- review r7 F4: seed 000's tools, trend reading and §7 extensions, as the page maps them ---

def test_seed000_rocprof_and_attention_as_the_page_quotes(tmp_path, capsys):
    from test_rocprof import WIDE

    # §4.1 "AMD 平台用 rocprof": the v1 sample; the GEMM's 512 x 2e6 MFMA FLOP over
    # 32 x 1e4 + 64 x 4e4 + 64 x 8e3 B = AI 302, in 100 us = 10.2 TFLOP/s, 100 of 120 us
    results = tmp_path / "results.csv"
    results.write_text(WIDE)
    code, out, _ = run(capsys, "rocprof", str(results), "--on", "mi300x", "--top", "10")
    assert code == 0
    assert ("│ Cijk_Alik_Bljk_HHS_BH_MT128x128 │ 1 │ 100 us │ 83.3 % │ DRAM │ fp16 │ 302 │ "
            "10.2 TFLOP/s") in out
    # §7 attention: 2 x 2 x 32 x 500 x 64 = 4.096 MFLOP over 520,192 B; 5 us launch > 1.63 us
    code, out, _ = run(capsys, "ai", "attention", "--heads", "32", "--kv-heads", "4", "--q-len",
                       "1", "--kv-len", "500", "--head-dim", "64", "--on", "T4")
    assert code == 0 and "AI 7.87 FLOP/byte" in out
    assert "bound overhead: one launch (5 us, nominal) > the 1.63 us work floor" in out


def test_seed000_trend_with_compare_and_the_a100_chart(tmp_path, capsys):
    # §4.4's third reading: seed000.csv, then gemm_1024 at 8400 GFLOPS: 2.1e9 / 8.4e12 = 250 us
    after = tmp_path / "after.csv"
    after.write_text((SEEDS / "seed000.csv").read_text().replace(
        "gemm_1024,2.1e9,1.2e7,175,4200", "gemm_1024,2.1e9,1.2e7,175,8400"))
    code, out, _ = run(capsys, "compare", "seed000.csv", str(after), "--on", "A100")
    assert code == 0 and "│ gemm_1024 │ 500 us │ 250 us │ 2.00x │" in out and "175 -> 175" in out
    # §4.3 on the A100: the fp32 vector flat (19.5 / 2.039 = 9.56) under fp16 tensor (153)
    png = tmp_path / "a100.png"
    code, out, _ = run(capsys, "plot", "seed000.csv", "--on", "A100", "-o", str(png), "--json")
    assert code == 0 and png.stat().st_size > 0
    drawn = [(r["compute"], round(r["ai"], 2)) for r in json.loads(out)["drawn"]["ridges"]]
    assert drawn == [("fp32 vector", 9.56), ("fp16 tensor", 153.02)]


def test_inline_commands_the_page_quotes(capsys):
    # §2.3: fp16 tensor over DRAM: V100 125 / 0.9 = 139, A100 312 / 2.039 = 153,
    # H100 990 / 3.35 = 295, B200 2250 / 7.7 = 292
    code, out, _ = run(capsys, "specs", "compare", "V100", "A100", "H100", "B200", "--json")
    assert code == 0
    ridges = [round(r["ridge"]) for d in json.loads(out)["devices"] for r in d["ridges"]
              if (r["precision"], r["unit"], r["level"]) == ("fp16", "tensor", "DRAM")]
    assert ridges == [139, 153, 295, 292]
    # seed 004 with the measured launch count: 880 x 5-10 us against the 7.28 ms gap
    code, out, _ = run(capsys, "llm", "tinyllama-1.1b", "--on", "t4p.json", "--context", "500",
                       "--phase", "decode", "--tpot-ms", "15", "--launches", "880")
    assert code == 0
    assert "880 launches (--launches) explain 4.4 ms-7.28 ms of it (60-100 %" in out

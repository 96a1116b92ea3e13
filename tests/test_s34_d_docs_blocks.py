"""The `rooflab whatif` (and `choose`) output blocks of docs/whatif.md and docs/report.md,
and docs/plot.md's NERSC GPP trajectory block, are what the commands print today: each
line a block shows (its "..." gaps aside) appears in the command's output, whitespace and
table rules aside. The files are the pages' own:
seed 004's `pts.json` and `t4p.json` (examples/seeds/), whatif.md's `step.json` and
report.md's `t4.json`, both written out in the pages' text. All of it is computed from
catalog and seed numbers, so the same on any machine.

docs/report.md's `--hardware H100` block said "one launch assumed (`calls` absent): its
8.12 ms gap above the roof ..."; whatif prints "one launch assumed: a decode step launches
~14 kernels per layer: ...: its 8.12 ms above its floor (the gap below the roof: ...)"
(session 34, helper D, a newcomer's walk through the pages)."""
from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from rooflab.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s.replace("│", " ").replace("┃", " ")).strip()


def _shown(page: str) -> list[tuple[int, str, list[str]]]:
    """(line, command, the lines shown under it) for each `rooflab` command in a code block
    that shows output."""
    out: list = []
    fence, cur = None, None
    for n, line in enumerate((DOCS / page).read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            fence, cur = (line[3:].strip() if fence is None else None), None
            continue
        if fence is None or fence in ("python", "json"):
            continue
        text = line.strip().removeprefix("$ ")
        if re.match(r"rooflab [a-z]", text):
            cur = (n, re.split(r"\s{2,}#\s", text)[0], [])
            out.append(cur)
        elif cur is not None and text:
            cur[2].append(text)
    return [c for c in out if c[2]]


def _files(folder: Path) -> None:
    """The inputs the pages name, as the pages give them."""
    for name in ("pts.json", "t4p.json"):
        shutil.copy(ROOT / "examples" / "seeds" / name, folder / name)
    whatif = (DOCS / "whatif.md").read_text(encoding="utf-8")
    step = re.search(r"\(`step\.json`:\s*`(\{.*?\})`\)", whatif, flags=re.S).group(1)
    (folder / "step.json").write_text(re.sub(r"\s+", " ", step))
    report = (DOCS / "report.md").read_text(encoding="utf-8")
    t4 = report[report.index("with seed 004's T4 numbers in `t4.json`"):]
    t4 = t4[t4.index("```json\n") + 8:]
    (folder / "t4.json").write_text(t4[:t4.index("```")])
    # report.md: a 10-call fp32 GEMV of 2 GFLOP / 4 GB and a 0.1 GFLOP / 1.2 GB add, untimed
    (folder / "k.json").write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": "gemv", "flop": {"fp32": 2e9}, "bytes": {"DRAM": 4e9}, "calls": 10},
        {"name": "add", "flop": {"fp32": 1e8}, "bytes": {"DRAM": 1.2e9}}]}))


CASES = [(page, n, cmd, lines) for page in ("whatif.md", "report.md")
         for n, cmd, lines in _shown(page)
         if re.match(r"rooflab (whatif|choose) (pts|step|t4|k)\.json", cmd)]


def test_the_pages_show_these_commands():
    # whatif.md: --batch 64, --batch 200, step.json --quantize, --hardware H100;
    # report.md: t4.json --quantize, --hardware H100, k.json --precision, choose
    assert [(p, c.split()[1]) for p, _, c, _ in CASES].count(("whatif.md", "whatif")) == 4
    assert len([c for p, _, c, _ in CASES if p == "report.md"]) == 4


def _missing(lines: list[str], printed: str) -> list[str]:
    """The shown lines' fragments (between "..." gaps) the output does not hold."""
    return [frag for shown in lines if not shown.startswith("(")
            for frag in (f.strip(" ,;:") for f in re.split(r"\.\.\.|…", _norm(shown)))
            if len(frag) > 3 and frag not in printed]


@pytest.mark.parametrize("page,line,cmd,lines", CASES,
                         ids=[f"{p}:{n}" for p, n, _, _ in CASES])
def test_the_block_is_what_the_command_prints(page, line, cmd, lines, tmp_path,
                                              monkeypatch, capsys):
    _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(shlex.split(cmd)[1:]) == 0
    got = capsys.readouterr()
    assert _missing(lines, _norm(got.out + "\n" + got.err)) == [], f"{page}:{line}: {cmd}"


def test_plot_md_trajectory_block_is_what_plot_prints(gpp, tmp_path, monkeypatch, capsys):
    # docs/plot.md: the NERSC GPP steps in order; output8.csv is a failed launch, skipped
    # with the profiler's own words. The page said "warning: skipped: output8.csv: ...",
    # a prefix plot no longer prints, and left out the note on the mixed-precision roof:
    # 97.6 % fp64 at 156 GFLOP/s + 2.4 % fp32 at 9.95 TFLOP/s, weighted 159.3 GFLOP/s.
    pytest.importorskip("ncu_report")
    (case,) = [c for c in _shown("plot.md") if "--trajectory --level DRAM" in c[1]]
    for f in gpp.glob("output*"):
        (tmp_path / f.name).symlink_to(f)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    argv = shlex.split(case[1])[1:]
    argv = [a for arg in argv for a in (sorted(p.name for p in tmp_path.glob(arg))
                                        if "?" in arg else [arg])]   # the shell's glob
    assert main(argv) == 0
    got = capsys.readouterr()
    assert _missing(case[2], _norm(got.out + "\n" + got.err)) == []
    assert (tmp_path / "steps.png").is_file()

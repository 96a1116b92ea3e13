"""Windows refuses to rename over a file another program holds open (Excel with a CSV) or
that is read-only, with PermissionError "Access is denied"; antivirus holds a fresh file
for a moment the same way. The error said "give a path in a directory you can write to"
(wrong: the folder is writable), after the whole run, and a scan failed it at random
(review s23 r3 F6). Windows' answers are made here by the os calls that give them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import rooflab.files_rename as files_rename
from rooflab import files
from rooflab.cli import demo
from rooflab.cli.main import main
from rooflab.errors import OutputError

REPO = Path(__file__).resolve().parents[1]
SEED_NCU = REPO / "examples" / "seeds" / "seed000_ncu.csv"
HELD = "The process cannot access the file because it is being used by another process"


@pytest.fixture
def on_windows(monkeypatch):
    monkeypatch.setattr(files_rename, "windows", lambda: True)
    slept: list[float] = []
    monkeypatch.setattr(files_rename.time, "sleep", slept.append)
    return slept


def _refuse_rename_onto(monkeypatch, name: str, times: int | None = None) -> list[str]:
    """os.replace onto `name` fails as on Windows (`times` times, or always)."""
    real, refused = os.replace, []

    def replace(src, dst):
        if Path(dst).name == name and (times is None or len(refused) < times):
            refused.append(str(dst))
            raise PermissionError(13, "Access is denied")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    return refused


def test_output_open_elsewhere_is_named_as_such(tmp_path, monkeypatch, capsys, on_windows):
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    refused = _refuse_rename_onto(monkeypatch, "out.csv")
    rc = main(["ncu", str(SEED_NCU), "--on", "h100", "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2
    assert (f"error: {out}: cannot replace the file (Access is denied): it is open in another "
            f"program (Excel, a viewer) or read-only; close that program") in err
    assert "a directory you can write to" not in err
    # tried 7 times over 1.1 s (the pauses between), then given up; nothing left behind
    assert len(refused) == 7
    assert on_windows == [0.05, 0.1, 0.15, 0.2, 0.25, 0.35]
    assert sum(on_windows) == pytest.approx(1.1)
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_a_short_hold_antivirus_is_outlasted(tmp_path, monkeypatch, capsys, on_windows):
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    refused = _refuse_rename_onto(monkeypatch, "out.csv", times=2)
    assert main(["ncu", str(SEED_NCU), "--on", "h100", "-o", str(out)]) == 0
    assert len(refused) == 2 and on_windows == [0.05, 0.1]
    # the seed's two kernels, written
    assert out.read_text().splitlines()[0].startswith("kernel,calls,seconds,")
    assert {"sgemm", "copyKernel"} <= {line.split(",")[0] for line in
                                       out.read_text().splitlines()[1:]}


def test_new_file_refused_keeps_the_folder_message(tmp_path, monkeypatch, on_windows):
    """No file there to be held: the old advice stands (it is the folder)."""
    _refuse_rename_onto(monkeypatch, "new.json")
    with pytest.raises(OutputError, match="give a path in a directory you can write to"):
        files.write_atomic(tmp_path / "new.json", "{}\n")


def test_posix_rename_is_tried_once(tmp_path, monkeypatch):
    """Not Windows: no retry, no pause, the message as before."""
    monkeypatch.setattr(files_rename, "windows", lambda: False)
    monkeypatch.setattr(files_rename.time, "sleep", lambda s: pytest.fail("slept"))
    out = tmp_path / "out.json"
    out.write_text("old\n")
    refused = _refuse_rename_onto(monkeypatch, "out.json")
    with pytest.raises(OutputError, match="directory you can write to"):
        files.write_atomic(out, "{}\n")
    assert len(refused) == 1


def _held_open(monkeypatch, name: str) -> None:
    """Opening `name` for writing is refused, as Windows refuses it while Excel has it."""
    real = os.open

    def opener(path, flags, *a, **k):
        if Path(path).name == name and flags & (os.O_WRONLY | os.O_RDWR):
            raise PermissionError(13, HELD)
        return real(path, flags, *a, **k)

    monkeypatch.setattr(os, "open", opener)


def test_held_output_refused_before_the_demo_measures(tmp_path, monkeypatch, capsys,
                                                      on_windows):
    outdir = tmp_path / "d"
    outdir.mkdir()
    (outdir / "report.md").write_text("old\n")
    _held_open(monkeypatch, "report.md")
    monkeypatch.setattr(demo, "run_demo", lambda *a, **k: pytest.fail("measured first"))
    assert main(["demo", "-o", str(outdir)]) == 2
    err = capsys.readouterr().err
    assert f"error: {outdir / 'report.md'}: cannot replace the file ({HELD}): it is open" in err
    assert (outdir / "report.md").read_text() == "old\n"


def test_demo_rename_refused_names_the_program(tmp_path, monkeypatch, on_windows):
    outdir = tmp_path / "d"
    outdir.mkdir()
    for name in demo.FILES:
        (outdir / name).write_text("old\n")
    _refuse_rename_onto(monkeypatch, "kernels.json")
    with pytest.raises(OutputError) as caught:
        demo.write_files(outdir, {name: f"new {name}\n" for name in demo.FILES})
    assert str(caught.value) == (
        f"{outdir / 'kernels.json'}: cannot replace the file (Access is denied): it is open "
        f"in another program (Excel, a viewer) or read-only; close that program (or clear "
        f"read-only) and rerun; already replaced: profile.json; the others are as they were")
    assert (outdir / "kernels.json").read_text() == "old\n"
    assert sorted(p.name for p in outdir.iterdir()) == sorted(demo.FILES)

"""Review s22 h1 H5, H7 and h2 F6: output paths and what plot --json carries.

H5: where os.pathconf is missing (Windows) a name was measured in UTF-8 bytes against 255;
NTFS allows 255 UTF-16 units, so 100 CJK characters (300 bytes) were refused.
H7: torch --save-trace renamed its temporary over a symlink (the target stayed empty) or a
FIFO (the node was gone): the same checks as every -o now.
h2 F6: plot --json had no record of the rows a profiler's reader skipped; report --json
keeps them in "notes" as `skipped: ...`."""

from __future__ import annotations

import json
import os
import stat

import pytest
from test_rocprof import WIDE

from rooflab.errors import OutputError
from rooflab.files import check_writable


def test_windows_name_limit_counts_utf16_units(tmp_path, monkeypatch):
    monkeypatch.delattr(os, "pathconf")   # as on Windows
    ok = tmp_path / ("\u62a5\u544a" * 50 + ".md")   # 103 units, 303 UTF-8 bytes
    check_writable(ok)   # old: "File name too long"
    emoji = tmp_path / ("\U0001f680" * 127 + ".md")   # 254 + 3 = 257 UTF-16 units
    with pytest.raises(OutputError, match="File name too long"):
        check_writable(emoji)


class _Prof:
    def export_chrome_trace(self, path: str) -> None:
        with open(path, "w") as f:
            f.write('{"traceEvents": []}')


def test_save_trace_writes_through_a_symlink(tmp_path):
    from rooflab.ingest.torch_run import _export

    real, link = tmp_path / "real.json", tmp_path / "link.json"
    real.write_text("")
    link.symlink_to(real)
    _export(_Prof(), str(link))
    assert link.is_symlink()   # old: the link replaced by a plain file, real.json empty
    assert real.read_text() == '{"traceEvents": []}'


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_save_trace_onto_a_fifo_is_refused_before_the_run(tmp_path):
    from rooflab.ingest.torch_run import _export, run_script

    fifo = tmp_path / "tf.json"
    os.mkfifo(fifo)
    script = tmp_path / "m.py"
    script.write_text("raise SystemExit('must not run')\n")
    with pytest.raises(OutputError, match="is a named pipe|FIFO|not a regular file"):
        run_script(str(script), trace_path=str(fifo))
    with pytest.raises(OutputError, match="not a regular file"):
        _export(_Prof(), str(fifo))
    assert stat.S_ISFIFO(fifo.stat().st_mode)   # old: replaced by a regular file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py", "tf.json"]   # no temp


def test_plot_json_notes_the_skipped_rows(tmp_path, monkeypatch, capsys):
    from rooflab.cli.main import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "results.csv").write_text(WIDE)
    assert main(["plot", "results.csv", "--on", "mi300x", "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    # old: none of these (report --json had them)
    assert [n for n in notes if n.startswith("skipped: ")] == [
        "skipped: results.csv:5: launch 3 of 'broken' skipped: zero time (EndNs 150000 = "
        "BeginNs 150000)", "skipped: results.csv:6: row has 4 of 17 columns (file cut short?)"]

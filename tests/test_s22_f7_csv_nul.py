"""A NUL past read_text's binary check (the first 4096 characters) in a CSV: Python 3.10's
csv raised `_csv.Error: line contains NUL` (a traceback, exit 70); it is read as U+FFFD
there, as 3.11 reads it as a character (review s22 r5 F5)."""

from __future__ import annotations

from rooflab import files, files_decode
from rooflab.cli.main import main


def test_csv_readers_on_a_python_that_refuses_nul(monkeypatch):
    monkeypatch.setattr(files_decode, "_NUL_OK", False)   # what Python 3.10 gets
    assert list(files.csv_reader(["a,b\n", "x\x00y,2\n"])) == [["a", "b"], ["x\ufffdy", "2"]]
    rows = list(files.csv_dict_reader(["name,flop\n", "k\x00,1e9\n"]))
    assert rows == [{"name": "k\ufffd", "flop": "1e9"}]


def test_a_nul_deep_in_a_kernel_csv_is_one_error_line(tmp_path, capsys):
    lines = ["name,flop,bytes,seconds\n"] + [f"k{i},1e9,1e8,0.001\n" for i in range(600)]
    at = next(i for i in range(len(lines)) if len("".join(lines[:i])) > 4096)   # past the check
    lines[at] = lines[at].replace(",", ",\x00", 1)          # its flop cell: NUL then 1e9
    (tmp_path / "k.csv").write_text("".join(lines))
    assert main(["report", str(tmp_path / "k.csv"), "--on", "H200"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tmp_path / 'k.csv'}:{at + 1}: field 'flop' is not a number")
    assert "Traceback" not in err

"""Session 36 I: a file of the wrong kind said as what it is (rocprof as ncu does), and the
"cut short?" hint kept for files that end inside a line or document (perf, torch)."""

from __future__ import annotations

import pytest
from cli_inproc import one_line_error

from rooflab.errors import ParseError
from rooflab.ingest.torch_trace_file import load_trace_json


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_empty_file_given_to_rocprof_is_said_empty(tmp_path, capsys):
    """0 bytes hold no header: "the file is empty", as `ncu` says (s36 B). Before: "no
    rocprof header (a row with KernelName or Kernel_Name) found" alone."""
    err = one_line_error(capsys, ["rocprof", _write(tmp_path, "r.csv", "")])
    assert "the file is empty (was it written completely?)" in err
    assert "no rocprof header" not in err


def test_kernel_csv_given_to_rocprof_names_report(tmp_path, capsys):
    """A rooflab kernel CSV (name,flop,bytes) is put on a roof by `report`: said, as `ncu`
    says it, instead of how to collect rocprof counters."""
    path = _write(tmp_path, "k.csv", "name,flop,bytes\nk,1e9,1e6\n")
    err = one_line_error(capsys, ["rocprof", path])
    assert err.endswith("found: it is a kernel file (name,flop,bytes,...); put it on a roof "
                        "with `rooflab report FILE --on DEVICE`")


@pytest.mark.parametrize("verb, name, text, value", [
    ("rocprof", "n.json", "null\n", "null"),
    ("rocprof", "n.json", "42", "42"),
    ("rocprof", "t.csv", " true \n", "true"),
    ("ncu", "n.json", "null\n", "null"),
])
def test_a_lone_json_value_is_said(tmp_path, capsys, verb, name, text, value):
    """`null` or `42` alone is valid JSON but no table: json.loads of the whole file gives
    a scalar, which the message quotes. Before: only "no ... header found"."""
    err = one_line_error(capsys, [verb, _write(tmp_path, name, text)])
    assert f"it holds only the value {value}, no table: is it the right file?" in err


def test_likwid_output_given_to_rocprof_names_likwid(tmp_path, capsys):
    """file_kind tells likwid-perfctr's CSV by its TABLE,Group line."""
    err = one_line_error(capsys, ["rocprof", _write(tmp_path, "l.csv", "TABLE,Group 1 Raw,x\n")])
    assert err.endswith("it is likwid output; read it with `rooflab likwid FILE`")


def test_torch_trace_and_kernel_list_given_to_rocprof(tmp_path, capsys):
    """A JSON file was "re-run rocprofv3 with --output-format csv" whatever it held; a torch
    trace and a kernel list (a JSON list: rocprofv3's JSON is one object) name their verb,
    rocprofv3's own JSON keeps its hint."""
    err = one_line_error(capsys, ["rocprof", _write(tmp_path, "t.json", '{"traceEvents": []}')])
    assert err.endswith("not a CSV: it is a PyTorch profiler trace; read it with "
                        "`rooflab torch FILE`")
    err = one_line_error(capsys, ["rocprof", _write(
        tmp_path, "k.json", '[{"name": "k", "flop": 1e9, "bytes": 1e6}]')])
    assert "a kernel list to `rooflab report FILE`" in err and "rocprofv3" not in err
    err = one_line_error(capsys, ["rocprof", _write(
        tmp_path, "r.json", '{"rocprofiler-sdk-tool": []}')])
    assert "re-run rocprofv3 with `--output-format csv`" in err


@pytest.mark.parametrize("text", ['[{"name": "k", "flop": 1e9, "bytes": 1e6}]', "hello world"])
def test_one_line_file_without_final_break_is_not_called_cut(tmp_path, capsys, text):
    """A complete one-line file of another kind has no line break at its end; perf's error
    on it said "the file ends inside this line (... file cut short?)". The line is the whole
    file, so the hint is dropped; the error is perf's own."""
    err = one_line_error(capsys, ["perf", _write(tmp_path, "one.json", text)])
    assert "ends inside this line" not in err and "cut short" not in err
    assert ":1: " in err and "perf stat" in err


def test_perf_file_cut_in_its_last_line_keeps_the_hint(tmp_path, capsys):
    """Line 3, '12', follows perf's own comment line and has no break after it: cut."""
    err = one_line_error(capsys, ["perf", _write(tmp_path, "cut.txt", "# started on x\n\n12")])
    assert ":3: the file ends inside this line (no line break after it: file cut short?)" in err


@pytest.mark.parametrize("text, cut", [
    ('{"traceEvents": [1, 2, 3', True),          # "Expecting ','" at the end: cut
    ('{"traceEvents": [{"name": "ab', True),     # a string left open: cut
    ('{"traceEvents": [1 2, 3]}\n', False),      # a comma missing at column 20 of 26
    ('{"traceEvents": [1, 2,]}', False),         # a trailing comma inside
])
def test_torch_says_cut_short_only_for_a_cut_file(tmp_path, text, cut):
    """files.json_end_hint: the decoder stopped at the text's end. Before, every JSON error
    in a trace said "a file cut short?", a missing comma mid-file included."""
    path = _write(tmp_path, "t.json", text)
    with pytest.raises(ParseError) as got:
        load_trace_json(path)
    said = str(got.value)
    assert ("the file ends inside the document (was it written completely?)" in said) is cut
    assert "a file cut short?" not in said
    assert said.endswith("export it with prof.export_chrome_trace(path)")


def test_torch_stream_and_whole_read_agree_on_the_hint(tmp_path, monkeypatch):
    """The streamed reader (small chunks) and json.loads of the whole text give the same
    words: the decoder skips the blanks after a cut before it stops, at the file's end."""
    from rooflab.ingest import torch_trace_stream

    path = _write(tmp_path, "t.json", '{"traceEvents": [1, 2, 3' + " " * 200_000)
    monkeypatch.setattr(torch_trace_stream, "CHUNK", 13)
    with pytest.raises(ParseError) as got:
        load_trace_json(path)
    assert "the file ends inside the document" in str(got.value)

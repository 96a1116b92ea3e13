"""Session 36 B: empty and cut kernel/config files, numbers past a double, and the verbs' own
range words for inf (each at its one reader or check, said with the value as typed)."""

from __future__ import annotations

import pytest
from cli_inproc import one_line_error


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_empty_kernel_csv_is_said_empty(tmp_path, capsys):
    """An empty JSON said "the file is empty"; an empty CSV said "missing column(s) name,
    flop, bytes", as if its header lacked them."""
    err = one_line_error(capsys, ["report", _write(tmp_path, "k.csv", ""), "--on", "h100"])
    assert ":1: the file is empty (was it written completely?)" in err
    assert "missing column" not in err


@pytest.mark.parametrize("text", ['{"kernels": [{"name": "k", "flop": 1e9, "by',
                                  '{"kernels": ['])
def test_cut_json_is_said_cut(tmp_path, capsys, text):
    """The decoder stops at the end of the text (an unterminated string, a value expected
    at the end): a file cut short. Before: "invalid JSON: Unterminated string starting at
    (column 41)" alone, for --on files and kernel files alike (files.load_json)."""
    path = _write(tmp_path, "k.json", text)
    err = one_line_error(capsys, ["report", path, "--on", "h100"])
    assert "the file ends inside the document (was it written completely?)" in err
    err = one_line_error(capsys, ["report", path, "--on", path])
    assert "the file ends inside the document" in err
    # a trailing comma (column 9 of 9 characters) is a mistake inside, not a cut file
    err = one_line_error(capsys, ["report", _write(tmp_path, "c.json", '{"a": 1,}')])
    assert "Expecting property name" in err and "ends inside" not in err


def test_cut_model_config_is_said_cut(tmp_path, capsys):
    """`rooflab llm` reads a config.json with its own decoder call: "not valid JSON:
    Expecting value" before, for a file cut after '"hidden_size": '."""
    path = _write(tmp_path, "config.json", '{"hidden_size": ')
    err = one_line_error(capsys, ["llm", path, "--on", "h100"])
    assert "not valid JSON: Expecting value; the file ends inside the document" in err


@pytest.mark.parametrize("cell", ["1e400", "1" + "0" * 400])
def test_a_csv_number_past_a_double_is_said_as_typed(tmp_path, capsys, cell):
    """float('1e400') is inf: the kernel check then said "flop[fp32] must be >= 0 and
    finite; got inf" for a cell that holds no 'inf'."""
    path = _write(tmp_path, "k.csv", f"name,flop,bytes,seconds\nk,{cell},1e9,1e-3\n")
    err = one_line_error(capsys, ["report", path, "--on", "h100"])
    shown = cell if len(cell) <= 24 else f"{cell[:12]}... (401 characters)"
    assert f"k.csv:2: field 'flop' is '{shown}', past the largest number a double" in err
    assert "got inf" not in err


@pytest.mark.parametrize(("argv", "words"), [
    (["llm", "llama-2-7b", "--on", "h100", "--tp", "2", "--hop-latency-us", "inf"],
     "--hop-latency-us must be >= 0 and finite, in microseconds per ring hop (e.g. 10); "
     "got inf"),
    (["llm", "llama-2-7b", "--on", "h100", "--tp", "2", "--link-latency", "1e999"],
     "--link-latency must be >= 0 and finite, in microseconds per all-reduce (e.g. 10); "
     "got 1e999"),
    (["llm", "llama-2-7b", "--on", "h100", "--pp", "2", "--pp-link-latency", "inf"],
     "--pp-link-latency must be >= 0 and finite, in microseconds per send (e.g. 5); got inf"),
    (["llm", "llama-2-7b", "--on", "h100", "--tpot-ms", "inf"],
     "--tpot-ms must be a positive, finite time in milliseconds (e.g. 15); got inf"),
    (["train", "llama-2-7b", "--on", "h100", "--step-ms", "inf"],
     "--step-ms must be a positive, finite time in milliseconds (e.g. 250); got inf"),
    (["train", "llama-2-7b", "--on", "h100", "--tp", "2", "--link-latency", "inf"],
     "--link-latency must be >= 0 and finite, in microseconds per all-reduce (e.g. 20); "
     "got inf"),
])
def test_own_range_words_say_finite(capsys, argv, words):
    """inf is >= 0 and positive: "must be >= 0 microseconds per ring hop (e.g. 10); got inf"
    refused a value that met the rule it stated."""
    assert f"error: {words}" == one_line_error(capsys, argv)


def test_model_config_given_as_kernels_is_named(tmp_path, capsys):
    """A Hugging Face config.json to `report` (or compare, plot) said "expected a list of
    kernels or an object with a 'kernels' list" and the accepted kinds, not what it is."""
    path = _write(tmp_path, "config.json", '{"model_type": "llama", "hidden_size": 4096, '
                                           '"num_hidden_layers": 32}')
    err = one_line_error(capsys, ["report", path, "--on", "h100"])
    assert "this is a model config (config.json), not a list of kernels" in err
    assert f"`rooflab llm {path} --on HW`" in err


def test_a_csv_given_as_a_model_is_said_not_a_config(tmp_path, capsys):
    """`rooflab llm k.csv`: "not valid JSON: Expecting value" alone before; the file starts
    with 'n', not '{', so it is no config.json at all."""
    path = _write(tmp_path, "k.csv", "name,flop,bytes\nk,1e9,1e9\n")
    err = one_line_error(capsys, ["llm", path, "--on", "h100"])
    assert "a model's config.json is one JSON object ({...}): is it the right file?" in err

"""Review r1 (fuzz): the words a file gives. A kernel or roof name, a ceiling's precision,
level or unit that is no string is an error naming the place and field; an unknown one a
warning, as a kernel file's unknown precision is; an unknown provenance word a warning; a
kernel precision --precision cannot convert names the kernel; a bad $ROOFLAB_ON names the
variable; a folder given to `specs import` is called a folder."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError, InputWarning
from rooflab.model.roof_schema import roof_from_dict
from rooflab.model.schema import kernel_from_dict

KERNEL = {"name": "gemm", "flop": {"fp16": 1.9e11}, "bytes": {"DRAM": 1e9}, "seconds": 0.005}
ROOF = {"name": "r", "compute": [{"precision": "fp16", "unit": "tensor", "flop_per_s": 2.8e14}],
        "memory": [{"level": "DRAM", "bytes_per_s": 1.8e12}]}


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def error_line(argv: list[str], capsys) -> str:
    code, _, err = run(argv, capsys)
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(lines) == 1, err
    return lines[0]


# --- F4: a kernel's name ------------------------------------------------------------------

@pytest.mark.parametrize("name, shown", [(None, "null"), ([1], "[1]"), ({}, "{}"),
                                         (True, "true"), (float("nan"), "NaN"),
                                         (1.5, "1.5")])
def test_a_kernel_name_that_is_no_string_is_refused(name, shown):
    with pytest.raises(InputError) as exc:
        kernel_from_dict({**KERNEL, "name": name}, where="k.json: kernels[0]")
    assert str(exc.value) == (f"k.json: kernels[0]: field 'name' must be a string, e.g. "
                              f"\"gemm\"; got {shown}")


def test_a_whole_number_name_is_read_as_its_digits():
    assert kernel_from_dict({**KERNEL, "name": 7}).name == "7"


def test_a_null_kernel_name_is_a_file_error(tmp_path, capsys):
    path = tmp_path / "n.json"
    path.write_text(json.dumps({"kernels": [{**KERNEL, "name": None}]}))
    assert error_line(["report", str(path), "--on", "A100"], capsys) == (
        f"error: {path}: kernels[0]: field 'name' must be a string, e.g. \"gemm\"; got null")


# --- F7: a roof's ceilings ------------------------------------------------------------------

def _roof(*changes: tuple[str, str, object]) -> dict:
    """ROOF with (kind, field, value) set in its first ceiling of each kind."""
    d = json.loads(json.dumps(ROOF))
    for kind, field, value in changes:
        d[kind][0][field] = value
    return d


@pytest.mark.parametrize("kind, field, value, example", [
    ("memory", "level", None, '"DRAM"'), ("memory", "level", [1], '"DRAM"'),
    ("memory", "level", -1, '"DRAM"'), ("compute", "precision", {}, '"fp16"'),
    ("compute", "precision", None, '"fp16"'),
    ("compute", "unit", 5, '"tensor" or "vector" (or left out for any)')])
def test_a_ceiling_word_that_is_no_string_is_refused(kind, field, value, example):
    with pytest.raises(InputError) as exc:
        roof_from_dict(_roof((kind, field, value)), where="r.json: roof")
    assert str(exc.value) == (f"r.json: roof.{kind}[0]: field '{field}' must be a string "
                              f"such as {example}; got {json.dumps(value)}")


@pytest.mark.parametrize("kind, field, value, said", [
    ("memory", "level", "abc", "ceiling level 'abc' is not a memory level"),
    ("compute", "precision", "fp99", "ceiling precision 'fp99' is not one rooflab knows"),
    ("compute", "unit", "tensr", "ceiling unit 'tensr' (did you mean 'tensor'?) is not a "
                                "compute unit rooflab knows")])
def test_an_unknown_ceiling_word_is_warned_about(kind, field, value, said):
    with pytest.warns(InputWarning) as caught:
        roof = roof_from_dict(_roof((kind, field, value)), where="r.json: roof")
    assert [str(w.message).split(":", 2)[2].strip().startswith(said) for w in caught] == [True]
    assert str(caught[0].message).startswith(f"r.json: roof.{kind}[0]: ")
    assert roof.name == "r"   # read, as a kernel file's unknown word is


def test_known_ceiling_words_are_silent(recwarn):
    roof = roof_from_dict(_roof(("memory", "level", "HBM3e"),
                                ("compute", "unit", "Tensor cores")))
    assert [c.level for c in roof.memory] == ["DRAM"] and roof.compute[0].unit == "tensor"
    assert not [w for w in recwarn if issubclass(w.category, InputWarning)]


def test_a_roof_file_with_a_null_level_is_an_error_on_report(tmp_path, capsys):
    path = tmp_path / "roof.json"
    path.write_text(json.dumps({"schema_version": 1,
                                "roof": _roof(("memory", "level", None))}))
    kernels = tmp_path / "k.json"
    kernels.write_text(json.dumps({"kernels": [KERNEL]}))
    # before: exit 0, a ceiling "None" and the kernel "not placed: roof has no DRAM ceiling"
    assert error_line(["report", str(kernels), "--on", str(path)], capsys) == (
        f"error: {path}: roof.memory[0]: field 'level' must be a string such as \"DRAM\"; "
        f"got null")


def test_a_null_roof_name_is_refused():
    with pytest.raises(InputError, match=r"^roof: field 'name' must be a string, e\.g\. "
                                         r"\"H100 measured\"; got null$"):
        roof_from_dict({**ROOF, "name": None})


# --- F8: provenance words -------------------------------------------------------------------

def test_an_unknown_provenance_word_is_warned_about(tmp_path, capsys):
    path = tmp_path / "prov.json"
    path.write_text(json.dumps({"kernels": [{**KERNEL, "provenance": {"flop": "guessed"}}]}))
    code, _, err = run(["report", str(path), "--on", "A100"], capsys)
    assert code == 0
    assert (f"warning: {path}: kernels[0] 'gemm': provenance 'flop' is 'guessed': not a "
            f"provenance word rooflab knows (given, assumed, nominal, measured, counted, "
            f"derived;") in " ".join(err.split())


def test_rooflab_provenance_words_are_silent(tmp_path, capsys):
    path = tmp_path / "prov.json"
    path.write_text(json.dumps({"kernels": [{**KERNEL, "provenance": {
        "flop": "counted", "bytes": "derived", "seconds": "measured"}}]}))
    code, _, err = run(["report", str(path), "--on", "A100"], capsys)
    assert code == 0 and "provenance" not in err


# --- F9: a precision --precision cannot convert ----------------------------------------------

def test_whatif_precision_names_the_kernel_whose_precision_is_unknown(tmp_path, capsys):
    path = tmp_path / "fp99.json"
    path.write_text(json.dumps({"kernels": [{**KERNEL, "name": "g", "flop": {"fp99": 1e9}}]}))
    line = error_line(["whatif", str(path), "--on", "A100", "--precision", "fp16"], capsys)
    assert line.startswith("error: kernel 'g': its precision 'fp99' is not one rooflab "
                           "knows, so --precision fp16 cannot convert it")


# --- F10: $ROOFLAB_ON --------------------------------------------------------------------------

def test_an_unknown_rooflab_on_names_the_variable(tmp_path, capsys, monkeypatch):
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [KERNEL]}))
    monkeypatch.setenv("ROOFLAB_ON", "zzz")
    line = error_line(["report", str(path)], capsys)
    assert line.startswith("error: $ROOFLAB_ON=zzz: unknown hardware 'zzz'")
    assert line.endswith("; fix or unset ROOFLAB_ON, or pass --on")
    # --on given wins over the variable, which is then not read
    code, out, _ = run(["report", str(path), "--on", "T4"], capsys)
    assert code == 0 and "NVIDIA T4" in out


# --- F3: specs import of a folder --------------------------------------------------------------

def test_specs_import_of_a_folder_says_it_is_a_folder(tmp_path, capsys):
    folder = tmp_path / "impdir"
    folder.mkdir()
    assert error_line(["specs", "import", str(folder)], capsys) == (
        f"error: {folder}: is a directory; give the likwid-bench output or ERT's "
        f"roofline.json file")

"""Bad input that got through (review r3_robust F1, F2, F6, F10, F11, F14): an unknown
compute unit, a file given twice or two files sharing names, a blank kernel name, a time
past any run, a --bytes-scale that leaves the range, a misspelt required CSV column."""

from __future__ import annotations

import json
import warnings

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError, InputWarning
from rooflab.model import Ceiling, Kernel, Roof
from rooflab.model.analysis import analyze
from rooflab.model.diagnose import diagnose
from rooflab.model.display_results import diagnosis_text

GOOD = "name,flop,bytes,seconds,precision\nx,1e9,1e9,1e-3,fp32\n"


def _write(tmp_path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


# F1 ---------------------------------------------------------------------------------------
def test_unknown_unit_in_a_csv_is_warned_with_did_you_mean(tmp_path, capsys):
    # 1e12 fp16 FLOP in 10 ms = 100 TFLOP/s: 74.6 % of the H100's 134 TFLOP/s fp16 vector
    # peak, but 10.1 % of its 989.5 tensor peak, which 'vektor' silently picked
    path = _write(tmp_path, "u.csv", "name,flop,bytes,seconds,precision,unit\n"
                                      "x,1e12,1e8,1e-2,fp16,vektor\n")
    assert main(["report", path, "--on", "h100", "--json"]) == 0
    out, err = capsys.readouterr()
    assert f"{path}:2: kernel 'x': unit 'vektor' (did you mean 'vector'?)" in err
    assert "fastest ceiling" in err
    assert json.loads(out)["kernels"][0]["unit"] == "vektor"   # kept as written


def test_unknown_unit_in_json_names_every_kernel(tmp_path, capsys):
    doc = [{"name": "a", "flop": {"fp16": 1e12}, "bytes": 1e8, "seconds": 0.01, "unit": "Tensr"},
           {"name": "b", "flop": {"fp16": 1e12}, "bytes": 1e8, "seconds": 0.01, "unit": "zzz"}]
    path = _write(tmp_path, "u.json", json.dumps(doc))
    assert main(["report", path, "--on", "h100"]) == 0
    err = capsys.readouterr().err
    assert "kernels[0] 'a': unit 'Tensr' (did you mean 'tensor'?)" in err
    assert "kernels[1] 'b': unit 'zzz'" in err
    assert err.count("not a compute unit") == 1   # one warning per file


def test_unknown_unit_in_python_warns_and_known_ones_do_not():
    with pytest.warns(InputWarning, match=r"kernel 'k': unit 'vektor' \(did you mean 'vector'"):
        Kernel("k", {"fp16": 1e9}, 1e6, 1e-3, unit="vektor")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Kernel("k", {"fp16": 1e9}, 1e6, 1e-3, unit="Tensor cores").unit == "tensor"
        assert Kernel("k", {"fp16": 1e9}, 1e6, 1e-3, unit="Vector").unit == "vector"


# F2 ---------------------------------------------------------------------------------------
def test_a_file_given_twice_is_refused(tmp_path, capsys, monkeypatch):
    path = _write(tmp_path, "good.csv", GOOD)
    assert main(["report", path, path, "--on", "h100"]) == 2
    err = capsys.readouterr().err
    assert "given twice" in err and "counted twice" in err
    monkeypatch.chdir(tmp_path)   # the same file under two spellings
    assert main(["report", "good.csv", "./good.csv", "--on", "h100"]) == 2
    assert "./good.csv is given twice (the same file as good.csv)" in capsys.readouterr().err
    assert main(["whatif", path, path, "--on", "h100", "--bytes-scale", "0.5"]) == 2


def test_two_files_sharing_a_kernel_name_are_named(tmp_path, capsys):
    a = _write(tmp_path, "good.csv", GOOD)
    b = _write(tmp_path, "good2.csv", GOOD)
    assert main(["report", a, b, "--on", "h100", "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any(f"'x' in {a}, {b}" in n for n in notes)


# F10 --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["", "   "])
def test_a_blank_kernel_name_is_an_error(tmp_path, capsys, name):
    csv = _write(tmp_path, "e.csv", f"name,flop,bytes,seconds\n{name},1e9,1e9,1e-3\n")
    assert main(["report", csv, "--on", "h100"]) == 2
    assert f"{csv}:2: field 'name': a kernel's name is empty" in capsys.readouterr().err
    doc = {"kernels": [{"name": "a", "flop": 1e9, "bytes": 1e9, "seconds": 1e-3},
                       {"name": name, "flop": 1e9, "bytes": 1e9, "seconds": 1e-3}]}
    js = _write(tmp_path, "e.json", json.dumps(doc))
    assert main(["report", js, "--on", "h100"]) == 2
    assert f"{js}: kernels[1]: field 'name': a kernel's name is empty" in capsys.readouterr().err
    with pytest.raises(InputError, match="name is empty"):
        Kernel(name, 1e9, 1e9, 1e-3)


# F6 ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("seconds", ["1e300", "1e30", "2e7"])
def test_a_time_past_any_run_is_an_error(tmp_path, capsys, seconds):
    path = _write(tmp_path, "s.csv", f"name,flop,bytes,seconds\nx,1e9,1e9,{seconds}\n")
    assert main(["report", path, "--on", "h100"]) == 2
    err = capsys.readouterr().err
    assert f"seconds {float(seconds):g} is longer than rooflab takes (at most 1e+07 s" in err
    assert "is the unit right?" in err
    assert Kernel("k", 1e9, 1e9, 1e7).seconds == 1e7   # 116 days still taken


def test_huge_ratios_print_three_figures():
    from rooflab.model.display_results import fmt_times

    assert fmt_times(1.8449) == "1.84x"
    assert fmt_times(9999.0) == "10000x"          # 3 figures from 10 (was "9999.00x")
    assert fmt_times(3.35e18) == "3.35e+18x"
    assert fmt_times(1e-10) == "1.00e-10x"
    # 1e-9 FLOP and bytes in 1 ms on 2e11 B/s: floor 5e-21 s, headroom 2e17 (was printed
    # as '200000000000000000.00x')
    roof = Roof("me", "nominal", compute=(Ceiling(2e12, precision="fp32", unit="vector"),),
                memory=(Ceiling(2e11, level="DRAM"),))
    (d,) = diagnose(analyze(roof, [Kernel("x", {"fp32": 1e-9}, 1e-9, 1e-3)]))
    text = diagnosis_text(d)
    assert "headroom 2.00e+17x" in text and "00000000" not in text


# F11 --------------------------------------------------------------------------------------
@pytest.mark.parametrize("factor", ["1e300", "1e25", "1e-30"])
def test_bytes_scale_out_of_range_names_the_flag(tmp_path, capsys, factor):
    # 1e9 bytes in 1 ms: bytes stay <= 1e30 up to x1e21, the time (which grows at most as
    # the bytes do) <= 1e7 s up to x1e10; bytes >= 1e-9 down to x1e-18
    path = _write(tmp_path, "good.csv", GOOD)
    assert main(["whatif", path, "--on", "h100", "--bytes-scale", factor]) == 2
    err = capsys.readouterr().err
    assert f"--bytes-scale {float(factor):g}:" in err
    assert "give a factor from 1e-18 to 1e+10" in err
    assert "kernel 'x'" not in err
    assert main(["whatif", path, "--on", "h100", "--bytes-scale", "1e10"]) == 0


# F14 --------------------------------------------------------------------------------------
def test_a_misspelt_required_column_gets_did_you_mean(tmp_path, capsys):
    path = _write(tmp_path, "f.csv", "name,flops,bytes,seconds\nx,1e9,1e9,1e-3\n")
    assert main(["report", path, "--on", "h100"]) == 2
    err = capsys.readouterr().err
    assert "missing column(s) flop (column 'flops': did you mean 'flop'?)" in err

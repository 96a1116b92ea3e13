"""Review r1 (fuzz): inputs that crashed a reader with a traceback (exit 70) are one
`error:` line naming the file (exit 2), or read; and whatif judges a time below calls x the
launch floor as report does (the floor left out before and after)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError, ParseError
from rooflab.files import load_json
from rooflab.workloads.ops_common import _size

REPO = Path(__file__).resolve().parents[1]
QWEN3 = REPO / "tests" / "data" / "llm_configs" / "qwen3-8b.json"


def user_error(argv: list[str], capsys) -> str:
    """Run the CLI; assert exit 2 with one `error:` line and no traceback; return it."""
    code = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(lines) == 1, err
    return lines[0]


# --- F1: a CSV cell over csv's 128 KiB default limit -------------------------------------

def test_a_kernel_csv_line_over_128_kib_is_a_row_error(tmp_path, capsys):
    # day10.csv's 6 lines, then a 200 000-character line: csv.Error (exit 70) before; now
    # read as a one-cell row, refused by the row check with its line number
    path = tmp_path / "big.csv"
    path.write_text((REPO / "examples" / "seeds" / "day10.csv").read_text()
                    + "x" * 200_000 + "\n")
    line = user_error(["report", str(path), "--on", "A100"], capsys)
    assert line.startswith(f"error: {path}:7: 1 cells, the header has 5")
    assert len(line) < 400   # the cell is not printed


def _kernel_names(argv: list[str], capsys) -> list[str]:
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err[-2000:]
    return [k["name"] for k in json.loads(captured.out)["kernels"]]


def test_a_long_ncu_cell_is_read_not_a_crash(tmp_path, capsys, output4):
    # a 200 000-character kernel name with a quote in it ("" inside the field sends the
    # row to csv.reader, not the plain split): csv.Error, exit 70, before
    long = "sigma" + '""' + "x" * 200_000
    path = tmp_path / "long.csv"
    path.write_text(Path(output4).read_text().replace('"sigma_gpp_gpu_34"', f'"{long}"'))
    names = _kernel_names(["ncu", str(path), "--json"], capsys)
    assert len(names) == 1 and names[0].startswith('sigma"xxx')


def test_a_rocprof_csv_with_a_long_kernel_name_is_read(tmp_path, capsys):
    path = tmp_path / "results.csv"
    path.write_text("Index,KernelName,gpu-id,DurationNs,SQ_INSTS_VALU_MUL_F64,"
                    f'TCC_EA_RDREQ_sum\n0,"{"k" * 200_000}",0,2000,1000,500\n')
    names = _kernel_names(["rocprof", str(path), "--json"], capsys)
    assert len(names) == 1 and names[0].startswith("kkk")


# --- F2, F3: .ncu-rep cut short, a folder named .ncu-rep ---------------------------------

def _rep(fixtures_dir) -> Path:
    path = fixtures_dir / "ncu" / "nersc-gpp" / "output1.ncu-rep"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    return path


def test_a_report_cut_short_skips_its_nameless_last_launch(tmp_path, fixtures_dir, capsys):
    pytest.importorskip("ncu_report")
    from rooflab.ingest.ncu_rep import read_ncu_rep
    from rooflab.ingest.skips import SkipLog

    cut = tmp_path / "cut.ncu-rep"
    cut.write_bytes(_rep(fixtures_dir).read_bytes()[:140_870])
    log = SkipLog(str(cut))
    launches = read_ncu_rep(str(cut), log)
    # the first launch is whole; the second lost its name (AttributeError before)
    assert [launch.id for launch in launches] == ["0"]
    assert launches[0].name.startswith("sigma_gpp_gpu")
    assert [s.reason for s in log.skips()] == [
        "launch 1: no kernel name (a report cut short?); skipped"]
    assert main(["ncu", str(cut), "--on", "A100"]) == 0
    assert f"warning: {cut}: launch 1: no kernel name" in capsys.readouterr().err


def test_a_folder_named_ncu_rep_is_a_directory_not_missing(tmp_path):
    from rooflab.ingest.ncu_rep import read_ncu_rep

    folder = tmp_path / "a.ncu-rep"
    folder.mkdir()
    with pytest.raises(ParseError, match="is a directory; give the .ncu-rep file"):
        read_ncu_rep(str(folder))


# --- F11, F12: llm config counts ----------------------------------------------------------

def _config(tmp_path, **fields) -> str:
    d = json.loads(QWEN3.read_text())
    d.update(fields)
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps(d))
    return str(path)


@pytest.mark.parametrize("field", ["num_attention_heads", "hidden_size", "vocab_size",
                                   "intermediate_size", "num_key_value_heads"])
def test_a_config_count_of_1e308_names_the_file_and_field(tmp_path, capsys, field):
    path = _config(tmp_path, **{field: 1e308})
    line = user_error(["llm", path, "--on", "A100"], capsys)
    assert line.startswith(f"error: {path}:1: field '{field}' is 1e+308, larger than "
                           f"rooflab takes")


def test_an_op_size_past_float_range_is_an_input_error():
    # math.isfinite(10**400) raised OverflowError: an internal error, exit 70
    with pytest.raises(InputError, match="larger than rooflab takes"):
        _size(10**400, "heads")
    assert _size(4096, "n") == 4096


def test_zero_kv_heads_is_refused_not_read_as_full_mha(tmp_path, capsys):
    # read as absent, 0 became 32 K/V heads: 9.1 G parameters, not qwen3-8b's 8.19 G
    path = _config(tmp_path, num_key_value_heads=0)
    line = user_error(["llm", path, "--on", "A100"], capsys)
    assert line == (f"error: {path}:1: field 'num_key_value_heads' must be a positive "
                    f"integer (a JSON number, no quotes); got 0")


# --- F13: JSON the decoder refuses beyond its grammar -------------------------------------

def test_json_nested_too_deeply_is_a_parse_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ParseError, match=r"deep.json: invalid JSON: nested too deeply"):
        load_json(path)


def test_a_torch_trace_nested_too_deeply_is_a_parse_error(tmp_path, capsys):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    line = user_error(["torch", str(path)], capsys)
    assert line.startswith(f"error: {path}: invalid JSON: nested too deeply")


def test_a_number_of_5001_digits_is_a_parse_error(tmp_path, capsys):
    path = tmp_path / "big.json"
    path.write_text('{"kernels": [{"name": "a", "flop": {"fp32": 1' + "0" * 5000
                    + '}, "bytes": {"DRAM": 1e9}, "seconds": 1}]}')
    line = user_error(["report", str(path), "--on", "A100"], capsys)
    assert line == (f"error: {path}: invalid JSON: a number of 5001 digits; write a long "
                    f"number with an exponent, such as 1.5e308")


def test_an_llm_config_nested_too_deeply_is_a_parse_error(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert "nested too deeply" in user_error(["llm", str(path), "--on", "A100"], capsys)


# --- F6: whatif and a time below calls x the launch floor ---------------------------------

def _kernels(tmp_path, **kernel) -> str:
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [{"name": "g", "bytes": {"DRAM": 1e9},
                                             **kernel}]}))
    return str(path)


def test_whatif_leaves_the_launch_floor_out_of_both_times_below_it(tmp_path, capsys):
    # 10000 calls in 20 ms: 2 us a call, below the A100's 5 us launch floor (a profiler's
    # GPU-side time). fp32 -> fp16 moves the work from 19.5 to 312 TFLOP/s at the same
    # efficiency: 20 ms x 19.5 / 312 = 1.25 ms, not 50 ms of launches + 1.25 ms (0.39x)
    path = _kernels(tmp_path, flop={"fp32": 1.9e11}, seconds=0.02, calls=10_000)
    assert main(["whatif", path, "--on", "A100", "--precision", "fp16", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    move = doc["moves"][0]
    assert move["before_s"] == 0.02
    assert move["after_s"] == pytest.approx(0.02 * 19.5e12 / 312e12, rel=1e-9)
    assert any("launch floor is left out of the time before and after" in w
               for w in doc["warnings"])


def test_whatif_keeps_the_launch_floor_of_a_time_that_holds_it(tmp_path, capsys):
    # 100 calls in 20 ms (200 us a call, above the 5 us floor): 500 us of launches stay
    # in; the work 20 - 0.5 = 19.5 ms runs 16x faster: 0.5 + 19.5 / 16 = 1.71875 ms
    path = _kernels(tmp_path, flop={"fp32": 1.9e11}, seconds=0.02, calls=100)
    assert main(["whatif", path, "--on", "A100", "--precision", "fp16", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["moves"][0]["after_s"] == pytest.approx(0.0005 + 0.0195 / 16, rel=1e-9)
    assert not doc.get("warnings")


def test_whatif_fuse_of_kernels_below_the_floor_adds_no_launches(tmp_path, capsys):
    path = tmp_path / "k.json"
    k = {"flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e6}, "seconds": 0.001, "calls": 1000}
    path.write_text(json.dumps({"kernels": [{"name": "a", **k}, {"name": "b", **k}]}))
    assert main(["whatif", str(path), "--on", "A100", "--fuse", "a,b", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # before: 1000 x 5 us = 5 ms of launches were added to the fused kernel's 2 ms
    assert doc["moves"][0]["after_s"] == pytest.approx(0.002, rel=1e-9)


@pytest.mark.parametrize("suffix", ["json", "csv"])
def test_calls_past_1e12_names_the_file_and_field(tmp_path, capsys, suffix):
    path = tmp_path / f"k.{suffix}"
    if suffix == "json":
        path.write_text(json.dumps({"kernels": [{"name": "g", "flop": {"fp16": 1.9e11},
                                                 "bytes": {"DRAM": 1e9}, "seconds": 0.005,
                                                 "calls": 1e308}]}))
        where = f"{path}: kernels[0] 'g'"
    else:
        path.write_text("name,flop,bytes,seconds,calls\ng,1e9,1e9,0.005,1e308\n")
        where = f"{path}:2"
    line = user_error(["whatif", str(path), "--on", "A100", "--precision", "fp8"], capsys)
    assert line.startswith(f"error: {where}: field 'calls' is 1e+308, more than the 1e+12 "
                           f"launches rooflab takes")

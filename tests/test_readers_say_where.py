"""Review 12c D, G, H, J and 12a #10, #16: readers say where; the demo's files are one set."""

from __future__ import annotations

import os
import warnings

import pytest
from test_demo import fake_run_demo
from test_ncu_csv import DETAILS_HEAD, INST, details_rows, write

from rooflab.cli import demo as demo_cli
from rooflab.cli.main import main
from rooflab.errors import InputWarning, ParseError
from rooflab.hardware.resolve import load_roof
from rooflab.ingest.kernelfile import load_kernels
from rooflab.ingest.ncu_files import load_ncu
from rooflab.ingest.rocprof import load_rocprof
from rooflab.workloads import ops

# --- D: demo -o DIR checks every output before measuring, and writes them as a set --------

def test_demo_refuses_a_directory_in_place_of_its_last_file_before_measuring(
        tmp_path, monkeypatch, capsys):
    ran = []
    monkeypatch.setattr(demo_cli, "run_demo", lambda progress=None: ran.append(1))
    out = tmp_path / "dd"
    (out / "report.md").mkdir(parents=True)
    (out / "profile.json").write_text("OLDPROFILE")
    assert main(["demo", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert ran == []                                       # refused before the measurement
    assert f"{out / 'report.md'}: is a directory" in err
    assert "move it away or give another -o directory" in err
    assert "give a file name such as" not in err          # the demo's names are fixed
    assert (out / "profile.json").read_text() == "OLDPROFILE"
    assert sorted(p.name for p in out.iterdir()) == ["profile.json", "report.md"]


def test_demo_failed_write_replaces_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(demo_cli, "run_demo", fake_run_demo)
    out = tmp_path / "d"
    out.mkdir()
    (out / "profile.json").write_text("OLD")
    real = demo_cli._write_temp

    def fail_on_png(target, data):
        if target.name == "roofline.png":
            raise OSError(28, "No space left on device")
        return real(target, data)

    monkeypatch.setattr(demo_cli, "_write_temp", fail_on_png)
    assert main(["demo", "-o", str(out)]) != 0
    assert (out / "profile.json").read_text() == "OLD"
    assert sorted(p.name for p in out.iterdir()) == ["profile.json"]   # no temporaries left


def test_demo_failed_rename_names_the_files_already_replaced(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(demo_cli, "run_demo", fake_run_demo)
    out = tmp_path / "d"
    real = os.replace
    done = []

    def third_fails(src, dst):
        if len(done) == 2:
            raise OSError(5, "Input/output error")
        done.append(dst)
        return real(src, dst)

    monkeypatch.setattr(os, "replace", third_fails)
    assert main(["demo", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "roofline.png: cannot write the file (Input/output error)" in err
    assert "already replaced: profile.json, kernels.json" in err
    assert sorted(p.name for p in out.iterdir()) == ["kernels.json", "profile.json"]


def test_demo_keeps_an_existing_files_mode(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(demo_cli, "run_demo", fake_run_demo)
    out = tmp_path / "d"
    out.mkdir()
    (out / "kernels.json").write_text("{}")
    os.chmod(out / "kernels.json", 0o600)
    assert main(["demo", "-o", str(out)]) == 0
    assert (out / "kernels.json").stat().st_mode & 0o777 == 0o600


# --- G: bad values name their file, line and metric; an unknown precision is said at load --

def _ncu_file(tmp_path, dram):
    values = [("dram__bytes.sum", "byte", dram), ("gpu__time_duration.sum", "usecond", "10"),
              (INST.format("ffma"), "inst", "1,048,576"), (INST.format("fadd"), "inst", "0"),
              (INST.format("fmul"), "inst", "0")]
    return write(tmp_path, "neg.csv", [DETAILS_HEAD, *details_rows(0, values)])


@pytest.mark.parametrize("dram, shown", [("-149", "-149"), ("1e400", "inf")])
def test_ncu_bad_counter_names_file_line_and_metric(tmp_path, capsys, dram, shown):
    path = _ncu_file(tmp_path, dram)
    assert main(["ncu", path, "--on", "A100"]) == 2
    err = capsys.readouterr().err
    # old: "error: kernel 'saxpy': bytes[DRAM] must be >= 0 and finite; got -149.0"
    assert f"error: {path}:2: launch 0 of 'saxpy': metric 'dram__bytes.sum' = {shown} " \
           f"gives bytes[DRAM] = {shown}" in err
    assert "Traceback" not in err


def test_ncu_good_counter_still_reads(tmp_path):
    imp = load_ncu([_ncu_file(tmp_path, "149")])
    (k,) = imp.kernels
    assert k.bytes["DRAM"] == 149.0 and k.flop["fp32"] == 2 * 1_048_576


def test_unknown_precision_is_said_at_load_with_file_and_kernel(tmp_path):
    path = tmp_path / "bad_prec.json"
    path.write_text('{"schema_version":1,"kernels":[{"name":"k","flop":{"fp99":1e9},'
                    '"bytes":{"DRAM":1e8},"seconds":1e-3}]}')
    with pytest.warns(InputWarning, match=r"bad_prec.json: kernels\[0\] 'k': precision "
                                          r"'fp99': not a precision rooflab knows \(fp64, "
                                          r"fp32, tf32, fp16, bf16, fp8, int8, int4"):
        load_kernels(str(path))
    csv_path = tmp_path / "bad_prec.csv"
    csv_path.write_text("name,flop,bytes,seconds,precision\nk,1e9,1e8,1e-3,FP16\n"
                        "j,1e9,1e8,1e-3,fp99\n")
    with pytest.warns(InputWarning, match=r"bad_prec.csv:3: kernel 'j': precision 'fp99'"):
        kernels = load_kernels(str(csv_path))
    assert [tuple(k.flop) for k in kernels] == [("fp16",), ("fp99",)]


def test_known_precisions_load_without_a_warning(tmp_path):
    path = tmp_path / "ok.csv"
    path.write_text("name,flop,bytes,seconds,precision\nk,1e9,1e8,1e-3,bfloat16\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (k,) = load_kernels(str(path))
    assert k.flop == {"bf16": 1e9}


# --- H: ragged kernel-CSV rows, repeated columns, gflops 0 ------------------------------

@pytest.mark.parametrize("text, message", [
    ("name,flop,bytes,seconds\nk,1e9,1e8\n",
     "x.csv:2: 3 cells, the header has 4 (name,flop,bytes,seconds)"),
    ("name,flop,bytes,seconds\nk,1e9,1e8,1e-3,5\n",
     "x.csv:2: 5 cells, the header has 4 (name,flop,bytes,seconds)"),
    ("name,flop,bytes,seconds\nk,1e9,1e8,1e-3\n\nj,1e9,1e8\n",
     "x.csv:4: 3 cells, the header has 4"),       # the file's line, blank lines counted
    ("name,name,flop,bytes,seconds\nk,j,1e9,1e8,1e-3\n",
     "x.csv:1: column 'name' appears twice in the header (columns 1 and 2)"),
    ("name,flop,bytes,gflops\nk,1e9,1e8,0\n",
     "x.csv:2: field 'gflops' must be > 0; got 0 (leave the cell empty for an untimed "
     "kernel)"),
    ("name,flop,bytes,gflops\nk,1e9,1e8,-5\n", "x.csv:2: field 'gflops' must be > 0; got -5"),
])
def test_ragged_or_ambiguous_csv_rows_are_refused(tmp_path, capsys, text, message):
    path = tmp_path / "x.csv"
    path.write_text(text)
    assert main(["report", str(path), "--on", "T4"]) == 2
    assert message in capsys.readouterr().err


def test_trailing_empty_cells_and_empty_gflops_still_read(tmp_path):
    path = tmp_path / "ok.csv"
    path.write_text("name,flop,bytes,seconds\nk,1e9,1e8,1e-3,,\n")
    (k,) = load_kernels(str(path))
    assert k.seconds == 1e-3
    path.write_text("name,flop,bytes,gflops\nk,1e9,1e8,\nj,1e9,1e8,100\n")
    k, j = load_kernels(str(path))
    assert k.seconds is None and j.seconds == pytest.approx(1e9 / 100e9)   # 10 ms


# --- 12a #10: an `ai` that disagrees with flop / bytes; AI alone ------------------------

def test_ai_column_that_disagrees_with_flop_over_bytes_is_warned(tmp_path):
    path = tmp_path / "aimis.csv"
    path.write_text("name,flop,bytes,ai,gflops\nx,2.1e9,1.2e7,100,4200\n")
    with pytest.warns(InputWarning, match=r"aimis.csv:2: kernel 'x': ai 100 but flop / bytes "
                                          r"= 175: the point is placed at flop / bytes"):
        (k,) = load_kernels(str(path))
    assert k.total_flop / k.bytes["DRAM"] == pytest.approx(175)   # 2.1e9 / 1.2e7


def test_seed000_table_ai_agrees_within_rounding(tmp_path):
    # seed 000 §4.2: 0.25, 7.5, 175 exact; softmax 0.51 for 5.6e6 / 1.1e7 = 0.509 (0.2 %)
    path = tmp_path / "seed000.csv"
    path.write_text("name,flop,bytes,ai,gflops\n"
                    "elementwise_add,2.1e6,8.4e6,0.25,120\nconv2d_3x3,1.8e9,2.4e8,7.5,850\n"
                    "gemm_1024,2.1e9,1.2e7,175,4200\nsoftmax,5.6e6,1.1e7,0.51,95\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # the table gives no precision: the fp32-default note (review 16a J) is not an AI
        # warning
        warnings.filterwarnings("ignore", ".*precision not given for 4 kernels", InputWarning)
        assert len(load_kernels(str(path))) == 4


def test_ai_field_in_json_is_checked_too(tmp_path):
    path = tmp_path / "ai.json"
    path.write_text('{"schema_version":1,"kernels":[{"name":"a","flop":{"fp32":1e9},'
                    '"bytes":{"DRAM":1e8},"seconds":1e-3,"ai":10.1},{"name":"b","flop":'
                    '{"fp32":1e9},"bytes":{"DRAM":1e8},"seconds":1e-3,"ai":12}]}')
    with pytest.warns(InputWarning) as caught:
        load_kernels(str(path))
    said = [str(w.message) for w in caught]
    # a: 10.1 vs 10 is 1 %, rounding; b: 12 vs 10 is 20 %
    assert any("kernels[1] 'b': ai 12 but flop / bytes = 10" in m for m in said)
    assert not any("'a': ai" in m for m in said)


def test_ai_and_gflops_without_flop_and_bytes_says_what_to_give(tmp_path, capsys):
    path = tmp_path / "aionly.csv"
    path.write_text("name,ai,gflops\nelementwise_add,0.25,120\n")
    assert main(["report", str(path), "--on", "T4"]) == 2
    err = capsys.readouterr().err
    assert "aionly.csv:1: missing column(s) flop, bytes: rooflab places a kernel from its " \
           "FLOP and bytes (AI = flop / bytes); AI alone gives no floor" in err
    assert "Give flop and bytes columns" in err


# --- 12a #16: a file's vector op kind gets the vector unit, as `ai` gives it ------------

def test_file_gemv_in_fp16_is_held_to_the_vector_ceiling(tmp_path):
    path = tmp_path / "fc.json"
    path.write_text('{"schema_version":1,"kernels":[{"name":"fc_decode","op":"gemv","flop":'
                    '{"fp16":3.4e7},"bytes":{"DRAM":3.4e7},"seconds":25e-6},{"name":"fc",'
                    '"op":"matmul","flop":{"fp16":2.2e11},"bytes":{"DRAM":1.3e8},'
                    '"seconds":1e-3}]}')
    gemv, mm = load_kernels(str(path))
    assert gemv.unit == "vector" and mm.unit is None
    roof = load_roof("A100")
    # A100 fp16: 78 TFLOP/s vector, 312 tensor; `ai gemv` holds a GEMV to the vector one
    assert roof.compute_for("fp16", gemv.unit)[0].value == pytest.approx(78e12)
    assert roof.compute_for("fp16", ops.gemv(2048, 2048).unit)[0].value == pytest.approx(78e12)
    assert roof.compute_for("fp16", mm.unit)[0].value == pytest.approx(312e12)


@pytest.mark.parametrize("op", ["elementwise", "reduction", "softmax", "layernorm", "rmsnorm"])
def test_csv_vector_op_kinds_get_the_vector_unit_unless_given(tmp_path, op):
    path = tmp_path / "v.csv"
    path.write_text(f"name,flop,bytes,seconds,precision,op,unit\nk,1e8,4e8,1e-3,fp16,{op},\n"
                    f"t,1e8,4e8,1e-3,fp16,{op},tensor\n")
    k, t = load_kernels(str(path))
    assert (k.unit, t.unit) == ("vector", "tensor")
    assert getattr(ops, op)(*([1000] if op in ("elementwise", "reduction") else [10, 100]),
                            dtype="fp16").unit == "vector"   # as `ai` counts it


# --- J: rocprof counters that cannot be read or cannot be true ---------------------------

ROC_HEAD = ("Index,KernelName,BeginNs,EndNs,SQ_INSTS_VALU_FMA_F32,SQ_INSTS_VALU_ADD_F32,"
            "SQ_INSTS_VALU_MUL_F32,TCC_EA_RDREQ,TCC_EA_RDREQ_32B,TCC_EA_WRREQ,"
            "TCC_EA_WRREQ_64B")


def _rocprof(tmp_path, row):
    path = tmp_path / "results.csv"
    path.write_text(f"{ROC_HEAD}\n{row}\n")
    return str(path)


def test_rocprof_good_row_by_hand(tmp_path):
    (k,) = load_rocprof(_rocprof(tmp_path, "0,k,1000,2000,1000,0,0,100,0,100,100")).kernels
    assert k.flop == {"fp32": 64 * 2 * 1000}                 # 128 000 FLOP
    assert k.bytes["DRAM"] == 64 * 100 + 64 * 100           # 12 800 B
    assert k.seconds == pytest.approx(1e-6)


def test_rocprof_counter_that_is_not_a_number_is_said_with_line(tmp_path, capsys):
    path = _rocprof(tmp_path, "0,k,1000,2000,abc,0,0,100,0,100,100")
    imp = load_rocprof(path)
    assert [str(s) for s in imp.skips] == [
        f"{path}:2: counter 'SQ_INSTS_VALU_FMA_F32' of 'k' = 'abc' is not a number; read as "
        f"unknown (as n/a)"]
    assert any("SQ_INSTS_VALU_FMA_F32" in n and "not a number" in n for n in imp.notes)
    assert main(["rocprof", path, "--on", "MI250X"]) == 0
    assert f"warning: {path}:2: counter 'SQ_INSTS_VALU_FMA_F32'" in capsys.readouterr().err


def test_rocprof_negative_count_is_refused(tmp_path, capsys):
    path = _rocprof(tmp_path, "0,k,1000,2000,-1000,0,0,100,0,100,100")
    assert main(["rocprof", path, "--on", "MI250X"]) == 2
    assert (f"error: {path}:2: counter 'SQ_INSTS_VALU_FMA_F32' of 'k' is -1000: a count "
            f"cannot be negative") in capsys.readouterr().err


@pytest.mark.parametrize("row, words", [
    # 32 x 200 + 64 x (100 - 200) = 6 400 B once: the 32-B reads are part of all reads
    ("0,k,1000,2000,1000,0,0,100,200,100,100",
     "TCC_EA_RDREQ_32B 200 > TCC_EA_RDREQ 100, the reads they are a part of"),
    # 64 x 500 + 32 x (100 - 500) = 19 200 B once
    ("0,k,1000,2000,1000,0,0,100,0,100,500",
     "TCC_EA_WRREQ_64B 500 > TCC_EA_WRREQ 100, the writes it is a part of"),
    ("0,k,2000,1000,1000,0,0,100,0,100,100",
     "negative time (EndNs 1000 < BeginNs 2000): the end is before the begin"),
    ("0,k,1000,1000,1000,0,0,100,0,100,100", "zero time (EndNs 1000 = BeginNs 1000)"),
])
def test_rocprof_impossible_dispatch_is_skipped_naming_line_and_counters(tmp_path, capsys,
                                                                         row, words):
    path = _rocprof(tmp_path, row)
    assert main(["rocprof", path, "--on", "MI250X"]) == 2
    err = capsys.readouterr().err
    assert f"error: {path}:2: no usable dispatch: launch 0 of 'k' skipped: {words}" in err


def test_rocprof_na_counter_keeps_its_own_words(tmp_path):
    # n/a is the profiler's "not collected": the level is dropped (never 0 bytes), as before
    with pytest.raises(ParseError, match=r"results.csv:2: no usable dispatch: launch 0 of 'k' "
                                         r"skipped: no bytes: TCC_EA_RDREQ is not a number "
                                         r"\(n/a\), so no DRAM bytes"):
        load_rocprof(_rocprof(tmp_path, "0,k,1000,2000,1000,0,0,n/a,0,100,100"))


def test_demo_writes_through_a_symlink(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(demo_cli, "run_demo", fake_run_demo)
    out = tmp_path / "d"
    out.mkdir()
    real = tmp_path / "kept.md"
    real.write_text("old")
    (out / "report.md").symlink_to(real)
    assert main(["demo", "-o", str(out)]) == 0
    assert (out / "report.md").is_symlink()
    assert real.read_text().startswith("# rooflab demo: ")


def test_sparsity_keeps_a_file_gemvs_flop(tmp_path, capsys):
    # 12a #16: FLOP halved only on tensor ceilings; bytes x 9/16 (fp16): AI 1 -> 16/9 = 1.78
    path = tmp_path / "fc.json"
    path.write_text('{"schema_version":1,"kernels":[{"name":"fc_decode","op":"gemv","flop":'
                    '{"fp16":3.4e7},"bytes":{"DRAM":3.4e7},"seconds":25e-6}]}')
    assert main(["whatif", str(path), "--on", "A100", "--sparsity", "2:4"]) == 0
    assert "1 -> 1.78" in capsys.readouterr().out

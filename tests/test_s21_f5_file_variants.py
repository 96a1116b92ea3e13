"""s21 review r5 (real-world file variants): every reader takes the same files, whoever saved
them. F1 gzip (any profiler CSV, a kernel file, standard input); F2 a profiler's file whose
last line has no line break (cut short) is said, naming the line; F3 a torch trace with a
UTF-8 byte-order mark; F4 UTF-16 with its mark (PowerShell's `>`); F5 a cp1252 byte in a
kernel name: read as U+FFFD with a warning naming the line and the fix, in every reader.
Numbers: the hand counts of tests/test_likwid.py, test_perf_stat.py and test_amd_rocm.py."""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path

import pytest
from test_amd_rocm import PMC_PERF
from test_likwid import MEM_DP
from test_perf_stat import BYTES as PERF_BYTES
from test_perf_stat import CSV as PERF_CSV
from test_perf_stat import FLOP as PERF_FLOP
from test_perf_stat import TEXT as PERF_TEXT

from rooflab.cli.main import main
from rooflab.files_kind import file_kind

NCU = Path("/work/shared/fixtures/ncu/nersc-gpp/output.csv")
# a kernel CSV by hand: gemm 2e9 FLOP over 1e7 B in 1 ms
KERNELS = ("name,flop,bytes,seconds,precision\n"
           "gemm,2e9,1e7,1e-3,fp32\n"
           "softmax,5.6e6,1.1e7,2e-5,fp32\n")
# one fp32 mm of [64x32] x [32x16]: 2 x 64 x 32 x 16 = 65 536 FLOP; 4 B x (64x32 + 32x16 +
# 64x16) = 14 336 B
TRACE = {"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 5,
                          "args": {"Input Dims": [[64, 32], [32, 16]],
                                   "Input type": ["float", "float"],
                                   "Call stack": "train.py(3): main"}}]}


def _run(capsys, argv) -> tuple[int, str, str]:
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def _kernels(capsys, argv) -> tuple[dict, str]:
    rc, out, err = _run(capsys, [*argv, "--json"])
    assert rc == 0, err
    return {k["name"]: k for k in json.loads(out)["kernels"]}, err


def _put(tmp_path, name: str, data: bytes) -> str:
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


def _check_likwid(ks):
    # test_likwid: triad 4.02e8 FLOP, DRAM 2.4e9 B; dgemm 1.6e10 FLOP
    assert ks["triad"]["flop"] == {"fp64": pytest.approx(4.02e8)}
    assert ks["triad"]["bytes"]["DRAM"] == pytest.approx(2.4e9)
    assert ks["dgemm"]["flop"] == {"fp64": pytest.approx(1.6e10)}


def _check_rocprof(ks):
    # test_amd_rocm: fp8_gemm 512 x 1e6 FLOP, DRAM 265 600 B
    assert ks["fp8_gemm"]["flop"] == {"fp8": 512_000_000}
    assert ks["fp8_gemm"]["bytes"]["DRAM"] == 265_600


# --- F1: gzip by content, everywhere ----------------------------------------------------

def test_gzipped_likwid_perf_rocprof_read_as_the_plain_files(tmp_path, capsys):
    # before: likwid/perf "holds binary data", rocprof "no rocprof header"
    gz = _put(tmp_path, "lk.csv.gz", gzip.compress(MEM_DP.encode()))
    _check_likwid(_kernels(capsys, ["likwid", gz, "--on", "EPYC 9654"])[0])
    gz = _put(tmp_path, "pmc_perf.csv.gz", gzip.compress(PMC_PERF.encode()))
    _check_rocprof(_kernels(capsys, ["rocprof", gz, "--on", "mi300x"])[0])
    for name, text in (("run.csv.gz", PERF_CSV), ("run.txt.gz", PERF_TEXT)):
        (k,) = _kernels(capsys, ["perf", _put(tmp_path, name, gzip.compress(text.encode()))]
                        )[0].values()
        assert k["flop"] == {"fp64": PERF_FLOP} and k["bytes"] == {"DRAM": PERF_BYTES}


def test_gzipped_kernel_files_are_kernel_files_not_traces(tmp_path, capsys):
    # before: report k.json.gz was sent to the torch reader, which told the user to run
    # `rooflab report FILE` (the command that failed); a .csv.gz was read as JSON
    csv_gz = _put(tmp_path, "k.csv.gz", gzip.compress(KERNELS.encode()))
    doc = {"kernels": [{"name": "gemm", "flop": 2e9, "bytes": 1e7, "seconds": 1e-3,
                        "precision": "fp32"}]}
    json_gz = _put(tmp_path, "k.json.gz", gzip.compress(json.dumps(doc).encode()))
    assert file_kind(csv_gz) == file_kind(json_gz) == "rooflab"
    for path in (csv_gz, json_gz):
        ks, _ = _kernels(capsys, ["report", path, "--on", "A100 80GB SXM"])
        assert ks["gemm"]["flop"] == {"fp32": 2e9} and ks["gemm"]["bytes"] == {"DRAM": 1e7}
        assert ks["gemm"]["seconds"] == 1e-3


def test_gzipped_kernel_csv_on_standard_input(tmp_path, capsys, monkeypatch):
    # before: gzip on stdin was always saved as stdin.json.gz, so taken for a torch trace
    data = gzip.compress(KERNELS.encode())
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    ks, _ = _kernels(capsys, ["report", "-", "--on", "A100 80GB SXM"])
    assert ks["softmax"]["flop"] == {"fp32": 5.6e6}


@pytest.mark.skipif(not NCU.is_file(), reason="ncu fixture not present")
def test_gzipped_ncu_csv_reads_as_the_plain_file(tmp_path, capsys):
    # before: "it is a PyTorch profiler trace; read it with `rooflab torch FILE`"
    gz = _put(tmp_path, "output.csv.gz", gzip.compress(NCU.read_bytes()))
    assert file_kind(gz) == "ncu"
    plain, _ = _kernels(capsys, ["ncu", str(NCU)])
    got, _ = _kernels(capsys, ["ncu", gz])
    assert {n: (k["flop"], k["bytes"], k["seconds"]) for n, k in got.items()} == \
        {n: (k["flop"], k["bytes"], k["seconds"]) for n, k in plain.items()}
    via_report, _ = _kernels(capsys, ["report", gz])
    assert via_report.keys() == plain.keys()


# --- F2: a last line without its line break ---------------------------------------------

def test_likwid_cut_inside_a_count_is_said(tmp_path, capsys):
    # the file stops inside 'CAS_COUNT_RD,MBOX0C0,12500000' of triad's Raw table: 125000,
    # 100x low, was read silently (DRAM 8e6 B, rc 0)
    cut = MEM_DP.index("CAS_COUNT_RD,MBOX0C0,12500000") + len("CAS_COUNT_RD,MBOX0C0,125000")
    text = MEM_DP[:cut]
    line = text.count("\n") + 1
    p = _put(tmp_path, "lk.csv", text.encode())
    rc, _, err = _run(capsys, ["likwid", p, "--on", "EPYC 9654"])
    assert f"{p}:{line}: the file ends inside this line, at " in err
    assert "CAS_COUNT_RD,MBOX0C0,125000' (no line break after it: file cut short?)" in err
    # the whole file, with its last line break: no such warning
    whole = _put(tmp_path, "whole.csv", MEM_DP.encode())
    rc, _, err = _run(capsys, ["likwid", whole, "--on", "EPYC 9654"])
    assert rc == 0 and "cut short" not in err


def test_rocprof_and_perf_cut_inside_the_last_number_are_said(tmp_path, capsys):
    # rocprof: the last field '800' of hgelu cut to '8' (DRAM written 64 x 8, was silent)
    p = _put(tmp_path, "pmc_perf.csv", PMC_PERF.rstrip("\n")[:-2].encode())
    ks, err = _kernels(capsys, ["rocprof", p, "--on", "mi300x"])
    assert (f"{p}:3: the file ends inside this line, at "
            f"'...0,1000,800,800,0,0,1600,800,0,0,800,8'") in err
    assert ks["fp8_gemm"]["bytes"]["DRAM"] == 265_600   # the rows before it as they were
    # perf -x: the write line cut inside its run time: read as it stands, said
    cut = PERF_CSV.index("cas_count_write/,500100000") + len("cas_count_write/,5001")
    p = _put(tmp_path, "run.csv", PERF_CSV[:cut].encode())
    ks, err = _kernels(capsys, ["perf", p])
    assert next(iter(ks.values()))["bytes"] == {"DRAM": PERF_BYTES}
    assert f"{p}:8: the file ends inside this line, at '..." in err
    assert "/cas_count_write/,5001' (no line break after it: file cut short?)" in err
    # cut to '76', which is no perf line: the refusal says the file was cut
    p = _put(tmp_path, "run.csv", PERF_CSV[:PERF_CSV.index("768.00") + 2].encode())
    rc, _, err = _run(capsys, ["perf", p])
    assert rc == 2 and err.startswith(f"error: {p}:8: the file ends inside this line (no "
                                      f"line break after it: file cut short?): '76' is not")


# --- F3, F4: byte-order marks and UTF-16 ------------------------------------------------

def _trace_mm(ks):
    (k,) = ks.values()
    assert k["flop"] == {"fp32": 65536.0} and k["bytes"] == {"DRAM": 14336.0}


def test_torch_trace_with_a_utf8_bom(tmp_path, capsys):
    # before: "not valid JSON (Unexpected UTF-8 BOM ...): a file cut short?"
    p = _put(tmp_path, "t.json", b"\xef\xbb\xbf" + json.dumps(TRACE).encode())
    _trace_mm(_kernels(capsys, ["torch", p])[0])
    _trace_mm(_kernels(capsys, ["report", p])[0])


def test_utf16_files_from_powershell_are_read(tmp_path, capsys):
    # Windows PowerShell 5.1's `>` writes UTF-16LE with a byte-order mark; before: "no ncu
    # CSV header", "holds binary data", "not a UTF-8 text file", "a binary file"
    _trace_mm(_kernels(capsys, ["torch", _put(tmp_path, "t.json",
                                              json.dumps(TRACE).encode("utf-16"))])[0])
    _check_likwid(_kernels(capsys, ["likwid", _put(tmp_path, "lk.csv",
                                                   MEM_DP.encode("utf-16")),
                                    "--on", "EPYC 9654"])[0])
    (k,) = _kernels(capsys, ["perf", _put(tmp_path, "run.txt",
                                          PERF_TEXT.encode("utf-16-be").join([b"\xfe\xff",
                                                                              b""]))]
                    )[0].values()
    assert k["flop"] == {"fp64": PERF_FLOP}
    ks, _ = _kernels(capsys, ["report", _put(tmp_path, "k.csv", KERNELS.encode("utf-16")),
                              "--on", "A100 80GB SXM"])
    assert ks["gemm"]["flop"] == {"fp32": 2e9}


@pytest.mark.skipif(not NCU.is_file(), reason="ncu fixture not present")
def test_utf16_ncu_csv_is_read(tmp_path, capsys):
    plain, _ = _kernels(capsys, ["ncu", str(NCU)])
    p = _put(tmp_path, "out.csv", NCU.read_text(encoding="utf-8").encode("utf-16"))
    got, _ = _kernels(capsys, ["ncu", p])
    assert {n: k["flop"] for n, k in got.items()} == {n: k["flop"] for n, k in plain.items()}


# --- F5: a cp1252 byte in a name --------------------------------------------------------

FIX = "save the file as UTF-8 (Excel: 'CSV UTF-8'; or `iconv -f cp1252 -t utf-8 FILE > NEW`)"


def test_cp1252_byte_in_a_kernel_csv_is_read_with_a_warning_naming_the_line(tmp_path, capsys):
    # before: "not a UTF-8 text file (byte 76: invalid continuation byte); is it the right
    # file?" -- no line, no fix
    p = _put(tmp_path, "k.csv", KERNELS.encode().replace(b"softmax", b"softm\xe4x"))
    ks, err = _kernels(capsys, ["report", p, "--on", "A100 80GB SXM"])
    assert ks["softm\ufffdx"]["flop"] == {"fp32": 5.6e6}
    assert (f"warning: {p}:3: holds a byte that is not UTF-8 (the first, 0xE4, is 'ä' in "
            f"cp1252/Latin-1), read as '\ufffd'; to keep the names, {FIX}") in err


def test_cp1252_byte_said_alike_by_the_trace_and_profiler_readers(tmp_path, capsys):
    raw = json.dumps(TRACE, indent=1).encode()
    line = raw[:raw.index(b"train.py")].count(b"\n") + 1
    p = _put(tmp_path, "t.json", raw.replace(b"train.py", b"tr\xe9in.py"))
    ks, err = _kernels(capsys, ["torch", p])   # before: "a binary file, not a text trace"
    assert next(iter(ks.values()))["flop"] == {"fp32": 65536.0}
    assert f"{p}:{line}: holds a byte that is not UTF-8 (the first, 0xE9, is 'é'" in err
    p = _put(tmp_path, "lk.csv", MEM_DP.encode().replace(b"dgemm", b"dg\xe9mm"))
    ks, err = _kernels(capsys, ["likwid", p, "--on", "EPYC 9654"])   # before: no warning
    assert ks["dg\ufffdmm"]["flop"] == {"fp64": pytest.approx(1.6e10)}
    line = MEM_DP[:MEM_DP.index("dgemm")].count("\n") + 1
    assert f"{p}:{line}: holds 4 bytes that are not UTF-8 (the first, 0xE9, is 'é'" in err


def test_binary_files_are_still_refused_without_a_note(tmp_path, capsys):
    p = _put(tmp_path, "k.csv", b"\x7fELF\x02\x01\x01\x00" + bytes(range(128, 256)) * 4)
    rc, _, err = _run(capsys, ["report", p, "--on", "A100 80GB SXM"])
    assert rc == 2 and "not a UTF-8 text file" in err and "warning" not in err


# --- F6: the op-kind vocabulary, matched once per name ----------------------------------

def test_kind_word_is_one_match_not_a_loop_over_the_vocabulary():
    # 10 000 kernels with names of their own (k0, k1, ...) asked kind_word a few times
    # each, and each call walked the 83 words in Python: 9 % of `report`'s time. Timed
    # against that loop, here, so the machine's speed cancels out.
    import time

    from rooflab.model.opkind import _VOCABULARY, kind_word, normal_kind

    def loop(kind):
        kind = normal_kind(kind)
        return next((w for w in _VOCABULARY
                     if kind == w or (kind.startswith(w) and not kind[len(w)].isalpha())), "")

    names = [f"k{i}" for i in range(4000)] + [f"sgemm_{i}" for i in range(1000)] + [
        "relu_", "add.Tensor", "softmax_backward", "conv2d", "aten::addmm", "addmm", "expand",
        "mul_mat_vec_q4", "mul_mat", "mul", "torch.sigmoid", "spmv_csr", "7pt"]
    assert [kind_word.__wrapped__(n) for n in names] == [loop(n) for n in names]
    assert [kind_word(n) for n in names[-13:]] == [
        "relu", "add", "softmax", "conv", "addmm", "addmm", "", "mul_mat_vec", "mul_mat", "mul",
        "sigmoid", "spmv", ""]

    def timed(f):
        t = time.perf_counter()
        for n in names:
            f(n)
        return time.perf_counter() - t

    assert min(timed(kind_word.__wrapped__) for _ in range(3)) < timed(loop) / 4

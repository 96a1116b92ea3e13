"""Kernel files (review 16a J, L1, L5): a precision left to the fp32 default is said (with
the precision a BLAS name says), a `threads` field picks a scaling profile's row, and
`whatif --only` names the scope of its total and of its work floor.

Hand numbers: dgemm_512 is 2 x 512^3 = 2.68435e8 FLOP; in 0.01 s that is 26.8435 GFLOP/s.
The profile below is measured at 4 threads (fp64 200 GFLOP/s, DRAM 40 GB/s) with a
1-thread row (fp64 50 GFLOP/s, DRAM 20 GB/s): its AI 2.68435e8 / 6.291456e6 = 42.67 is past
both ridges (5 and 2.5), so it reads 26.8435 / 50 = 53.687 % of the 1-thread roof and
26.8435 / 200 = 13.42 % of the 4-thread one.
"""

from __future__ import annotations

import json
import warnings

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputWarning, ParseError
from rooflab.ingest.kernelfile import load_kernels, save_kernels
from rooflab.ingest.kernelfile_rows import blas_precision

DGEMM = "dgemm_512,2.68435e8,6.291456e6"


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _load(path) -> tuple[tuple, list[str]]:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        kernels = load_kernels(path)
    return kernels, [str(w.message) for w in got if issubclass(w.category, InputWarning)]


def _row(n: int, dram: float, fp64: float) -> dict:
    return {"threads": n, "DRAM": {"bytes_per_s": dram, "samples": [dram]},
            "fp64": {"flop_per_s": fp64, "samples": [fp64]},
            "fp32": {"flop_per_s": 2 * fp64, "samples": [2 * fp64]}}


@pytest.fixture
def profile(tmp_path):
    """A probed profile at 4 threads with a scaling row at 1 thread (probe --threads 1,all)."""
    doc = {"measured": {"name": "box measured", "kind": "measured",
                        "compute": [{"precision": "fp64", "unit": "vector",
                                     "flop_per_s": 200e9, "provenance": "measured"},
                                    {"precision": "fp32", "unit": "vector",
                                     "flop_per_s": 400e9, "provenance": "measured"}],
                        "memory": [{"level": "DRAM", "bytes_per_s": 40e9,
                                    "provenance": "measured"}]},
           "extras": {"threads": 4,
                      "scaling": {"counts": [1, 4], "reference_threads": 4, "method": "m",
                                  "by_threads": {"1": _row(1, 20e9, 50e9),
                                                 "4": _row(4, 40e9, 200e9)}}}}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    return str(path)


# --- J: the fp32 default is said --------------------------------------------------------
@pytest.mark.parametrize("name,precision", [
    ("dgemm_512", "fp64"), ("daxpy", "fp64"), ("ddot", "fp64"), ("dsymv_lower", "fp64"),
    ("zgemm", "fp64"), ("cblas_dgemm", "fp64"), ("sgemm", "fp32"), ("caxpy", "fp32"),
    ("DGEMV", "fp64"), ("scale", None), ("jacobi7_256", None), ("spmv_csr_27", None),
    ("gemm", None), ("dotted", None), ("sdotx", None),
])
def test_blas_names_say_their_precision(name, precision):
    assert blas_precision(name) == precision


def test_csv_without_precision_is_said_with_the_blas_hint(tmp_path):
    path = tmp_path / "k.csv"
    path.write_text(f"name,flop,bytes,seconds\njacobi7_256,2.621930e9,7.865791e9,0.754704\n"
                    f"{DGEMM},0.003\n")
    kernels, said = _load(path)
    assert [k.flop for k in kernels] == [{"fp32": 2.62193e9}, {"fp32": 2.68435e8}]  # unchanged
    (text,) = said
    assert text.startswith(f"{path}:2: precision not given for 2 kernels ('jacobi7_256', "
                           f"'dgemm_512'): judged as fp32")
    assert "add a precision column (fp64, fp32, ...)" in text
    assert text.endswith("by BLAS naming (d/z fp64, s/c fp32): fp64 for dgemm_512")


def test_csv_with_precision_or_flop_columns_says_nothing(tmp_path):
    given = tmp_path / "g.csv"
    given.write_text(f"name,flop,bytes,seconds,precision\n{DGEMM},0.003,fp64\n")
    split = tmp_path / "s.csv"
    split.write_text("name,flop,flop_fp64,bytes,seconds\ndgemm_512,2.68435e8,2.68435e8,"
                     "6.291456e6,0.003\n")
    for path in (given, split):
        kernels, said = _load(path)
        assert kernels[0].flop == {"fp64": 2.68435e8} and said == []


def test_an_empty_precision_cell_is_said_and_three_names_at_most(tmp_path):
    path = tmp_path / "k.csv"
    rows = "".join(f"k{i},1e9,1e8,0.1,\n" for i in range(5))
    path.write_text(f"name,flop,bytes,seconds,precision\na,1e9,1e8,0.1,fp64\n{rows}")
    (text,) = _load(path)[1]
    assert text.startswith(f"{path}:3: precision not given for 5 kernels ('k0', 'k1', 'k2' "
                           f"and 2 more)")
    assert "fill its precision cell" in text and "BLAS" not in text


def test_a_kernel_without_flop_has_no_precision_to_judge(tmp_path):
    path = tmp_path / "k.csv"
    path.write_text("name,flop,bytes,seconds\ndcopy,0,1.6e10,1.0\n")
    assert _load(path)[1] == []


def test_a_kernel_at_two_levels_is_counted_once(tmp_path):
    path = tmp_path / "k.csv"
    path.write_text("name,flop,bytes,seconds,level\ndaxpy,2e9,2.4e10,1.0,DRAM\n"
                    "daxpy,2e9,2.4e10,1.0,L1\n")
    kernels, (text,) = _load(path)
    assert len(kernels) == 1
    assert "precision not given for 1 kernel ('daxpy')" in text and "fp64 for daxpy" in text


def test_json_bare_flop_is_said_a_keyed_one_is_not(tmp_path):
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [
        {"name": "cblas_zgemm", "flop": 1e9, "bytes": 1e8, "seconds": 0.1},
        {"name": "sdot", "flop": {"fp32": 1e9}, "bytes": 1e8, "seconds": 0.1}]}))
    (text,) = _load(path)[1]
    assert text.startswith(f"{path}: precision not given for 1 kernel "
                           f"(\'cblas_zgemm\'): judged as fp32")
    # the example keys this kernel's own FLOP, not a fixed number (review 17a N13)
    assert 'key the FLOP by precision, e.g. "flop": {"fp64": 1e9}' in text
    assert text.endswith("fp64 for cblas_zgemm")


def test_report_prints_the_note_on_stderr(tmp_path, capsys):
    path = tmp_path / "k.csv"
    path.write_text(f"name,flop,bytes,seconds\n{DGEMM},0.003\n")
    code, _, err = _run(capsys, "report", str(path), "--on", "EPYC 9654")
    assert code == 0
    assert "warning: " in err and "precision not given for 1 kernel ('dgemm_512')" in err


# --- L1: threads ------------------------------------------------------------------------
def test_threads_is_read_from_every_place(tmp_path):
    csv = tmp_path / "k.csv"
    csv.write_text(f"name,flop,bytes,seconds,precision,threads\n{DGEMM},0.01,fp64,1\n"
                   f"b,1e9,1e8,0.1,fp64,\n")
    kernels, said = _load(csv)
    assert kernels[0].meta == {"threads": 1} and "threads" not in kernels[1].meta
    assert isinstance(kernels[0].meta["threads"], int) and said == []
    doc = tmp_path / "k.json"
    doc.write_text(json.dumps({"threads": 2, "kernels": [
        {"name": "a", "flop": {"fp64": 1e9}, "bytes": 1e8, "seconds": 0.1},
        {"name": "b", "flop": {"fp64": 1e9}, "bytes": 1e8, "seconds": 0.1, "threads": 1},
        {"name": "c", "flop": {"fp64": 1e9}, "bytes": 1e8, "seconds": 0.1,
         "meta": {"threads": 4}}]}))
    kernels, said = _load(doc)
    assert [k.meta["threads"] for k in kernels] == [2, 1, 4] and said == []   # not unknown
    # written back and read again: meta.threads survives
    again = load_kernels(save_kernels(tmp_path / "again.json", kernels))
    assert [k.meta["threads"] for k in again] == [2, 1, 4]


@pytest.mark.parametrize("cell", ["0", "1.5", "two", "-2"])
def test_a_bad_thread_count_is_one_line_error(tmp_path, capsys, cell):
    path = tmp_path / "k.csv"
    path.write_text(f"name,flop,bytes,seconds,precision,threads\n{DGEMM},0.01,fp64,{cell}\n")
    with pytest.raises(ParseError, match="'threads' must be a whole number of threads >= 1"):
        load_kernels(path)
    code, _, err = _run(capsys, "report", str(path), "--on", "EPYC 9654")
    assert code == 2 and err.startswith(f"error: {path}:2:") and "Traceback" not in err


def _judged(capsys, kernels: str, on: str) -> tuple[float, str, list[str]]:
    code, out, _ = _run(capsys, "report", kernels, "--on", on, "--json")
    assert code == 0
    doc = json.loads(out)
    return doc["analysis"][0]["percent_of_roof"], doc["roof"]["name"], doc.get("notes", [])


def test_threads_1_picks_the_one_thread_row(tmp_path, capsys, profile):
    path = tmp_path / "k.csv"
    path.write_text(f"name,flop,bytes,seconds,precision,threads\n{DGEMM},0.01,fp64,1\n")
    pct, roof, notes = _judged(capsys, str(path), profile)
    assert pct == pytest.approx(53.687, abs=0.01)   # 26.8435 / 50 (13.42 % on 4 threads)
    assert roof == "box measured (1 thread)"
    assert any("judged on the profile's 1-thread row" in n for n in notes)
    # the reference count (4) is the profile's own roof: nothing to say
    path.write_text(f"name,flop,bytes,seconds,precision,threads\n{DGEMM},0.01,fp64,4\n")
    pct, roof, notes = _judged(capsys, str(path), profile)
    assert pct == pytest.approx(13.42, abs=0.01) and not any("thread" in n for n in notes)


def test_no_row_for_the_count_is_a_warning(tmp_path, capsys, profile):
    path = tmp_path / "k.csv"
    path.write_text(f"name,flop,bytes,seconds,precision,threads\n{DGEMM},0.01,fp64,2\n")
    pct, _, notes = _judged(capsys, str(path), profile)
    assert pct == pytest.approx(13.42, abs=0.01)   # kept on the 4-thread roof, and said
    assert any("ran on 2 threads" in n and "no 2-thread row (rows: 1, 4)" in n
               and "rooflab probe --threads 2,all" in n for n in notes)
    code, _, err = _run(capsys, "plot", str(path), "--on", profile, "-o",
                        str(tmp_path / "x.png"))
    assert code == 0 and "warning: the kernels ran on 2 threads" in err


def test_one_thread_on_a_catalog_chip_or_another_row_is_said(tmp_path, capsys, profile):
    path = tmp_path / "k.csv"
    path.write_text(f"name,flop,bytes,seconds,precision,threads\n{DGEMM},0.01,fp64,1\n")
    _, _, notes = _judged(capsys, str(path), "EPYC 9654")
    assert any("ran on 1 thread" in n and "catalog entry is the whole chip" in n
               for n in notes)
    pct, _, notes = _judged(capsys, str(path), f"{profile}@4t")
    assert pct == pytest.approx(13.42, abs=0.01)   # the row the user chose
    assert any("picks the 4-thread row" in n for n in notes)


def test_different_counts_share_one_roof_and_are_said(tmp_path, capsys, profile):
    path = tmp_path / "k.csv"
    path.write_text(f"name,flop,bytes,seconds,precision,threads\n{DGEMM},0.01,fp64,1\n"
                    f"b,1e9,1e8,0.1,fp64,4\n")
    _, roof, notes = _judged(capsys, str(path), profile)
    assert roof == "box measured"
    assert any("different thread counts (1 thread: dgemm_512; 4 threads: b)" in n
               for n in notes)


# --- L5: whatif --only names each line's scope --------------------------------------------
def test_whatif_only_labels_total_and_floor_scopes(tmp_path, capsys, profile):
    path = tmp_path / "k.csv"
    path.write_text("name,flop,bytes,seconds,precision\n"
                    "jacobi7_256,2.621930e9,7.865791e9,0.754704,fp64\n"
                    "spmv,2.16e9,1.376e10,0.604588,fp64\n")
    code, out, _ = _run(capsys, "whatif", str(path), "--on", profile, "--bytes-scale",
                        "0.6667", "--only", "jacobi7_256")
    assert code == 0
    text = " ".join(out.split())
    # total over both kernels: 0.754704 + 0.604588 = 1.359 s -> 0.754704 x 0.6667 +
    # 0.604588 = 1.108 s; the work floor over jacobi only: 7.865791e9 / 40e9 = 197 ms ->
    # x 0.6667 = 131 ms; all: 196.6 + 344.0 = 541 ms -> 360 ms
    assert "total (all 2 kernels, 1 of them unchanged): 1.36 s -> 1.11 s (1.23x)" in text
    assert "work floor (jacobi7_256 only): 197 ms -> 131 ms (1.50x)" in text
    # every kernel changed: one scope, no label
    code, out, _ = _run(capsys, "whatif", str(path), "--on", profile, "--bytes-scale",
                        "0.6667")
    text = " ".join(out.split())
    assert "total: 1.36 s -> 906 ms" in text and "work floor: 541 ms -> 360 ms" in text

"""Thread rows with L3, one thread-row chooser for `bench --kernel --threads` and kernel
files, the seeds' CSVs with their precision, and the two triads in the docs (task X2).

Hand numbers: the profile below is probed at 4 threads (measured DRAM 40 GB/s, L3 200 GB/s)
with a 1-thread row of `probe --threads 1,all` (L1 300, L2 150, L3 60, DRAM 10 GB/s). A
one-thread STREAM triad (24 B an update) at 2 MiB per thread sits in L3; at 30 GB/s it is
30 / 60 = 50 % of the one-thread L3 ceiling (15 % of the 4-thread one).
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest

from rooflab.bench import kernel_runner as kr
from rooflab.cli.main import main
from rooflab.errors import InputWarning
from rooflab.hardware import thread_rows
from rooflab.hardware.profile import roof_at_threads
from rooflab.ingest.kernelfile import load_kernels
from rooflab.probe.cpu.runner import Rate

ROOT = Path(__file__).resolve().parents[1]


def _level(value: float, ws: float | None = None) -> dict:
    got = {"bytes_per_s": value, "samples": [value, 0.9 * value]}
    return got | ({"ws_bytes_per_thread": ws} if ws else {})


def _row(n: int, l1: float, l2: float, l3: float | None, dram: float) -> dict:
    row = {"threads": n, "L1": _level(l1, 16384), "L2": _level(l2, 262144),
           "DRAM": _level(dram), "fp64": {"flop_per_s": 5e10 * n, "samples": [5e10 * n]},
           "fp32": {"flop_per_s": 1e11 * n, "samples": [1e11 * n]}}
    if l3 is not None:
        row["L3"] = _level(l3, 2 * 2**20)
    return row


def _profile(l3_in_rows: bool = True) -> dict:
    """A probe --threads 1,all profile dict: measured at 4 threads, a 1-thread row."""
    l3 = 60e9 if l3_in_rows else None
    memory = [{"level": lv, "bytes_per_s": v, "provenance": "measured"}
              for lv, v in (("L1", 1.2e12), ("L2", 6e11), ("L3", 2e11), ("DRAM", 4e10))]
    return {"schema_version": 1, "host": {"name": "box"},
            "measured": {"name": "box measured (4 threads)", "kind": "measured",
                         "compute": [{"precision": "fp64", "unit": "vector",
                                      "flop_per_s": 2e11, "provenance": "measured"}],
                         "memory": memory},
            "extras": {"threads": 4,
                       "scaling": {"counts": [1, 4], "reference_threads": 4, "method": "m",
                                   "by_threads": {
                                       "1": _row(1, 3e11, 1.5e11, l3, 1e10),
                                       "4": _row(4, 1.2e12, 6e11, 2e11 if l3 else None,
                                                 4e10)}}}}


@pytest.fixture
def profile_path(tmp_path) -> str:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_profile()))
    return str(path)


# --- 1: the one-thread row has L3 ---------------------------------------------------------
def test_one_thread_row_has_its_l3_ceiling():
    roof = roof_at_threads(_profile(), 1)
    l3 = roof.find_memory("L3")
    assert l3 is not None and l3.value == 60e9 and l3.provenance == "measured"
    assert l3.samples == (60e9, 54e9)
    assert "measured (1 thread): STREAM triad" in l3.method and "2 MiB per thread" in l3.method
    # the row's real-traffic DRAM (triad x 4/3) follows it: test_real_traffic_everywhere.py
    assert [c.level for c in roof.memory] == ["L1", "L2", "L3", "DRAM", "DRAM (real traffic)"]
    assert "no GEMM or low precisions there" in roof.notes[0] and "L3" not in roof.notes[0]


def test_a_row_without_l3_still_says_so():
    # profiles written before L3 was measured (or hosts without one): no L3 ceiling, said
    roof = roof_at_threads(_profile(l3_in_rows=False), 1)
    assert roof.find_memory("L3") is None
    assert "no L3, GEMM or low precisions there" in roof.notes[0]


def test_bench_kernel_in_l3_on_one_thread_lands_on_the_one_thread_l3(profile_path,
                                                                      monkeypatch, capsys):
    pytest.importorskip("numba")

    def fake_run(k, ws, threads, caps, plan=None):
        # 30e9 / 24 updates/s of stream (24 B each): 30 GB/s, in L3
        assert threads == 1 and ws == 2 * 2**20
        return kr.KernelResult(k, threads, 1024, "L3",
                               Rate(samples=(30e9 / 24,), reps=1, seconds=(1.0,)))

    monkeypatch.setattr(kr, "run_kernel", fake_run)
    assert main(["bench", "--kernel", "stream", "--size", "2MiB", "--threads", "1",
                 "--on", profile_path, "--json"]) == 0
    on = json.loads(capsys.readouterr().out)["on"]
    assert on is not None, "no L3 ceiling in the one-thread row"
    assert on["ceiling_value"] == 60e9 and on["percent"] == pytest.approx(50.0)
    assert on["roof"].startswith("box measured (1 thread)")


# --- 2: one chooser, the subject a parameter ----------------------------------------------
def roofs_for_kernel_threads(spec: str, n: int, subject: str):
    # looked up at call time: each test below fails on its own where the chooser lacks it
    return thread_rows.roofs_for_kernel_threads(spec, n, getattr(thread_rows, subject))


def test_run_and_kernels_get_the_same_sentence_but_the_subject(profile_path):
    _, run_words, run_warn = roofs_for_kernel_threads(profile_path, 2, "RUN")
    _, file_words, file_warn = roofs_for_kernel_threads(profile_path, 2, "KERNELS")
    assert run_warn and file_warn
    assert run_words.startswith("this run ran on 2 threads (--threads 2); ")
    assert file_words.startswith("the kernels ran on 2 threads (their 'threads'); ")
    assert run_words.split("; ", 1)[1] == file_words.split("; ", 1)[1]
    assert "no 2-thread row (rows: 1, 4)" in run_words
    assert "rooflab probe --threads 2,all" in run_words


def test_the_picked_row_is_the_same_for_both(profile_path):
    run_roofs, run_words, _ = roofs_for_kernel_threads(profile_path, 1, "RUN")
    file_roofs, file_words, _ = roofs_for_kernel_threads(profile_path, 1, "KERNELS")
    assert run_roofs == file_roofs and run_roofs[0].find_memory("L3").value == 60e9
    assert run_words.startswith("judged on the profile's 1-thread row, picked to match "
                                "--threads 1; ")
    assert file_words.startswith("judged on the profile's 1-thread row, picked to match "
                                 "their 'threads'; ")


def test_a_run_labels_its_own_row_where_a_kernel_file_says_nothing(profile_path):
    # the placement line of a bench run always says which row judged it; a kernel file
    # on its profile's own count needs no note
    assert roofs_for_kernel_threads(profile_path, 4, "RUN") == (
        None, "the profile's roof, measured at 4 threads like this run", False)
    assert roofs_for_kernel_threads(profile_path, 4, "KERNELS") == (None, "", False)
    assert roofs_for_kernel_threads(profile_path + "@1t", 1, "RUN")[1] == (
        "the profile's 1-thread row, as --on asked, like this run")


def test_a_one_thread_run_on_a_catalog_chip_is_told_it_is_the_whole_chip():
    # before: the bench line said only "the ceiling is for the threads that roof was
    # measured or rated with"; a kernel file got the whole-chip warning
    picked, words, warn = roofs_for_kernel_threads("EPYC 9654", 1, "RUN")
    assert picked is None and warn
    assert words.startswith("this run ran on 1 thread (--threads 1); the roof 'EPYC 9654' "
                            "has no per-thread-count rows (a catalog entry is the whole chip")
    assert "rooflab probe --threads 1,all -o me.json" in words


def test_bench_has_no_chooser_of_its_own():
    import rooflab.cli.bench as bench

    assert not hasattr(bench, "roofs_for_threads") and not hasattr(bench, "_profile_counts")


# --- 3: the seeds' CSVs give their precision ------------------------------------------------
def _precision_warnings(path) -> list[str]:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        load_kernels(path)
    return [str(w.message) for w in got if issubclass(w.category, InputWarning)
            and "precision not given" in str(w.message)]


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "examples" / "seeds")
                                        .glob("*.csv")))
def test_shipped_seed_csvs_give_their_precision(name):
    assert _precision_warnings(ROOT / "examples" / "seeds" / name) == []


def test_seed000_table_is_fp32_as_its_numbers_say():
    kernels = {k.name: k for k in load_kernels(ROOT / "examples" / "seeds" / "seed000.csv")}
    # gemm_1024: 2 x 1024^3 = 2.147e9 FLOP (the table's 2.1e9); (3 x 1024^2) x 4 B (fp32,
    # seed 000 §2.2) = 12.6 MB, the table's 1.2e7 B; fp16 would be 6.3 MB
    assert kernels["gemm_1024"].flop == {"fp32": 2.1e9}
    assert set(kernels) == {"elementwise_add", "conv2d_3x3", "gemm_1024", "softmax"}
    assert all(set(k.flop) == {"fp32"} for k in kernels.values())


def test_docs_csv_examples_give_their_precision(tmp_path):
    seeds = (ROOT / "docs" / "seeds.md").read_text()
    block = re.search(r"\$ cat seed000\.csv\n(.*?)\$ rooflab", seeds, re.S).group(1)
    assert block == (ROOT / "examples" / "seeds" / "seed000.csv").read_text()
    report = " ".join((ROOT / "docs" / "report.md").read_text().split())
    head, row = re.search(r"\(`(name,flop,bytes,gflops[^`]*)` / `(elementwise_add,[^`]*)`",
                          report).groups()
    path = tmp_path / "r.csv"
    path.write_text(f"{head}\n{row}\n")
    assert _precision_warnings(path) == []


def test_readme_says_the_fp32_default_warns():
    text = " ".join((ROOT / "README.md").read_text().split())
    assert "precision fp32, with a `warning: ... precision not given" in text


# --- 4: each triad example says which triad ------------------------------------------------
def test_every_triad_example_says_which_triad():
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for line in page.read_text().splitlines():
            if "--kernel triad" in line:
                assert "4-stream" in line and "a = b*c + d" in line, (page.name, line)
            if re.search(r"bench --only [\w,]*\btriad\b", line):
                assert "STREAM" in line and "a = b + s*c" in line, (page.name, line)

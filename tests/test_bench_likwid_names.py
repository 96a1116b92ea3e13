"""`bench --kernel` with likwid-bench's names and meanings, the thread row of a scaling
profile picked for --threads, and `specs import` of likwid-bench runs: the working set
checked against the level, the byte count said (review 16a F, G, L8)."""

from __future__ import annotations

import json

import pytest

from rooflab.bench import kernel_runner as kr
from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.hardware.import_roofs import (
    CacheSizes,
    bench_ceilings,
    bytes_counted,
    parse_likwid_bench,
)
from rooflab.hardware.profile import MachineProfile, profile_to_dict
from rooflab.probe.cpu.runner import Rate


# --- F: likwid's names -------------------------------------------------------------------
# `likwid-bench -l NAME` (likwid 5.2, this VM): stream "A(i) = B(i)*c + C(i)", streams 3,
# FLOP 2, 24 B per element; triad "A(i) = B(i) * C(i) + D(i)", streams 4, FLOP 2, 32 B
# (24 B loaded, 8 B stored); peakflops_avx_fma: streams 1, FLOP 30, 8 B.
def test_stream_and_triad_have_likwids_meaning():
    stream, triad = kr.kernel("stream"), kr.kernel("triad")
    assert stream.formula == "a[i] = b[i] + s*c[i]"
    assert (stream.streams, stream.flop, stream.bytes_per_update) == (3, 2, 24)
    assert triad.formula == "a[i] = b[i]*c[i] + d[i]"
    assert (triad.streams, triad.flop, triad.bytes_per_update) == (4, 2, 32)
    assert (triad.loads, triad.stores) == (3, 1)
    # likwid-bench's SIMD variants name the same kernel (numba picks the width)
    assert kr.kernel("stream_avx512") is stream and kr.kernel("COPY_AVX512_FMA") is kr.kernel(
        "copy")
    assert "numba kernel" in kr.simd_note("stream_avx512") and kr.simd_note("stream") == ""
    # 32 KiB of likwid's triad: 32768 / 32 = 1024 elements per stream
    assert kr.elements(triad, 32 * 1024) == 1024


@pytest.mark.parametrize("name, words", [
    ("copy_mem", "non-temporal stores"),
    ("stream_mem_avx512", "use --kernel stream_avx512"),
    ("peakflops_avx_fma", "1 stream, 30 FLOP, 8 B per element"),
])
def test_likwid_kernels_without_a_counterpart_say_why(name, words):
    with pytest.raises(InputError, match=words):
        kr.kernel(name)


def test_peakflops_likwid_column_names_no_equivalent():
    rows = {r["kernel"]: r for r in kr.details_rows()}
    assert rows["peakflops"]["likwid"].startswith("none")
    assert "peakflops_avx_fma is 1 stream, 30 FLOP, 8 B" in rows["peakflops"]["likwid"]
    assert rows["stream"]["likwid"].startswith("stream: 3 streams, 2 FLOP, 24 B")
    assert rows["triad"]["likwid"] == "triad: 4 streams, 2 FLOP, 32 B"


def rate(*samples: float) -> Rate:
    return Rate(samples=tuple(samples), reps=1, seconds=(1.0,) * len(samples))


def test_summary_says_best_sample_beside_likwids_name():
    # 1e9 updates/s best (0.5e9 the other): stream moves 24 GB/s, triad 32 GB/s
    r = kr.KernelResult(kr.kernel("triad"), 1, 1024, "L1", rate(1e9, 0.5e9))
    assert r.bytes_per_s == pytest.approx(32e9)
    text = "\n".join(kr.summary_lines(r, None))
    assert ("likwid        triad: 4 streams, 2 FLOP, 32 B; rooflab's figure is the best "
            "sample (likwid-bench prints the run's average)") in text
    peak = kr.KernelResult(kr.kernel("peakflops"), 1, 96, "registers", rate(1e9))
    assert "best sample (likwid" not in "\n".join(kr.summary_lines(peak, None))
    assert kr.result_dict(r, None)["likwid_value"].startswith("the run's average")


@pytest.mark.parametrize("args, words", [
    (["--kernel", "copy_mem"], "numba emits none"),
    (["--kernel", "stream", "--size", "0"], "more than 0 bytes"),
])
def test_cli_refusals(args, words, capsys):
    assert main(["bench", *args]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


@pytest.mark.slow
def test_real_likwid_triad_run(capsys):
    pytest.importorskip("numba")
    code = main(["bench", "--kernel", "triad", "--size", "32KiB", "--threads", "1",
                 "--quick", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["elements_per_stream"] == 1024 and out["bytes_per_update"] == 32
    # 2 FLOP per 32 B
    assert out["flop_per_s"] == pytest.approx(out["bytes_per_s"] / 16)


# --- G: the row for --threads --------------------------------------------------------------
def _row(n: int, dram: float, l1: float | None = None) -> dict:
    r = {"threads": n, "DRAM": {"bytes_per_s": dram, "samples": [dram, dram]},
         "fp64": {"flop_per_s": 5e10 * n, "samples": [5e10 * n]}}
    if l1:
        r["L1"] = {"bytes_per_s": l1, "samples": [l1], "ws_bytes_per_thread": 16384}
    return r


# the full run at 4 threads measured DRAM 20 GB/s (cpu_probe_fakes); 1 thread reached 10
SCALING = {"counts": [1, 2, 4], "reference_threads": 4, "method": "m",
           "by_threads": {"1": _row(1, 10e9, 300e9), "2": _row(2, 16e9),
                          "4": _row(4, 20e9)}}


@pytest.fixture
def scaling_profile(tmp_path):
    from cpu_probe_fakes import assembled_profile

    p = assembled_profile(1e11, 2e11)
    p = MachineProfile(host=p.host, nominal=p.nominal, measured=p.measured,
                       extras=dict(p.extras) | {"scaling": SCALING, "threads": 4})
    path = tmp_path / "t.json"
    path.write_text(json.dumps(profile_to_dict(p)))
    return str(path)


def _roofs_for_run(on: str, threads: int):
    """What bench --kernel --threads does with --on: the kernel-file chooser, this run as
    the subject."""
    from rooflab.cli.inputs import resolve_on
    from rooflab.hardware.thread_rows import RUN, roofs_for_kernel_threads

    picked, said, _ = roofs_for_kernel_threads(on, threads, RUN)
    return picked or resolve_on(on), said


def test_the_row_for_threads_is_picked(scaling_profile):
    roofs, said = _roofs_for_run(scaling_profile, 1)
    assert "(1 thread)" in roofs[0].name and roofs[0].find_memory("DRAM").value == 10e9
    assert said == (f"judged on the profile's 1-thread row, picked to match --threads 1; "
                    f"--on {scaling_profile}@1t picks the same")
    roofs, said = _roofs_for_run(scaling_profile, 4)
    assert roofs[0].find_memory("DRAM").value == 2e10
    assert said == "the profile's roof, measured at 4 threads like this run"
    roofs, said = _roofs_for_run(scaling_profile, 3)   # no row: the measured roof, said
    assert roofs[0].find_memory("DRAM").value == 2e10
    assert said.startswith("this run ran on 3 threads (--threads 3); the profile ")
    assert "no 3-thread row (rows: 1, 2, 4)" in said and "--threads 3,all" in said
    roofs, said = _roofs_for_run(scaling_profile + "@2t", 1)   # the user's choice holds
    assert roofs[0].find_memory("DRAM").value == 16e9
    assert said == (f"this run ran on 1 thread (--threads 1), and --on {scaling_profile}@2t "
                    f"picks the 2-thread row: judged on that row, as asked")


def test_one_thread_run_is_judged_by_the_one_thread_row(scaling_profile, monkeypatch,
                                                        capsys):
    pytest.importorskip("numba")

    def fake_run(k, ws, threads, caps, plan=None):
        # 5e9/24 updates/s of stream: 5 GB/s at DRAM
        return kr.KernelResult(k, threads, 1024, "DRAM", rate(5e9 / 24))

    monkeypatch.setattr(kr, "run_kernel", fake_run)
    assert main(["bench", "--kernel", "stream", "--threads", "1", "--on",
                 scaling_profile]) == 0
    text = " ".join(capsys.readouterr().out.split())
    # 5 / 10 GB/s (the 1-thread row); the all-thread roof's 20 GB/s gave 25 %
    assert ("50 % of DRAM (measured; judged on the profile's 1-thread row, picked to match "
            "--threads 1; --on ") in text
    assert main(["bench", "--kernel", "stream", "--threads", "1", "--on", scaling_profile,
                 "--json"]) == 0
    on = json.loads(capsys.readouterr().out)["on"]
    assert on["percent"] == pytest.approx(50.0) and "1-thread row" in on["threads_row"]


# --- L8: specs import of likwid-bench runs -------------------------------------------------
# Real likwid-bench 5.2 output on this VM (`likwid-bench -t load -w S0:512kB:1`,
# 2026-11-30), the summary lines only.
LOAD_512KB = """\
LIKWID MICRO BENCHMARK
Test: load
Using 1 work groups
Using 1 threads
Size (Byte):\t\t512000
Size per thread:\t512000
Number of Flops:\t0
MFlops/s:\t\t0.00
Data volume (Byte):\t5120000
MByte/s:\t\t58164.10
"""
ZEN4 = CacheSizes(l1=32 * 2**10, l2=2**20, llc=32 * 2**20, source="these caches")


def test_working_set_is_checked_against_the_level():
    runs = parse_likwid_bench(LOAD_512KB, "lb_load.txt")
    dram = bench_ceilings(runs, "DRAM", "lb_load.txt", ZEN4)[0]
    assert dram.value == pytest.approx(58.1641e9)
    (warning,) = dram.warnings
    assert "imported as DRAM" in warning and "512 kB per thread fits in L2 (1 MiB" in warning
    # the same run named L2 sits where it says: no warning; named L1 it does not fit
    assert bench_ceilings(runs, "L2", "lb_load.txt", ZEN4)[0].warnings == ()
    assert "more than L1d (32 KiB" in bench_ceilings(runs, "L1", "lb_load.txt",
                                                     ZEN4)[0].warnings[0]
    # only the LLC known (--llc): STREAM's rule, 512 kB is 1.95x a 256 KiB LLC, not >= 4x
    small = CacheSizes(llc=256 * 2**10, source="--llc 256KiB")
    got = bench_ceilings(runs, "DRAM", "lb_load.txt", small)[0].warnings[0]
    assert "1.95x the last-level cache (256 KiB); DRAM needs >= 4x it" in got
    big = parse_likwid_bench(LOAD_512KB.replace("512000", "400000000"), "b.txt")
    assert bench_ceilings(big, "DRAM", "b.txt", ZEN4)[0].warnings == ()
    assert bench_ceilings(runs, "DRAM", "lb_load.txt")[0].warnings == ()   # no sizes known


def test_method_says_which_bytes_the_kernel_counts():
    assert bytes_counted("load").startswith("real bytes (load stores nothing")
    assert bytes_counted("update_avx512").startswith("real bytes (update stores to the lines")
    # STREAM counts: the store's write-allocate read left out (likwid-bench -l's bytes)
    assert "24 of the 32 B" in bytes_counted("stream_avx512_fma")
    assert "1.33x" in bytes_counted("stream")
    assert "32 of the 40 B" in bytes_counted("triad") and "8 of the 16 B" in bytes_counted(
        "store")
    assert bytes_counted("copy_mem_avx512").startswith("real bytes (copy_mem_avx512 uses "
                                                       "non-temporal")
    dram = bench_ceilings(parse_likwid_bench(LOAD_512KB, "l.txt"), "DRAM", "l.txt")[0]
    assert "MByte/s as printed: real bytes" in dram.method


def test_cli_import_warns_and_keeps_the_warning(tmp_path, capsys):
    src = tmp_path / "lb_load.txt"
    src.write_text(LOAD_512KB)
    out = tmp_path / "roof.json"
    assert main(["specs", "import", f"{src}@DRAM", "--fp64", "100GFLOP/s", "--llc", "32MiB",
                 "-o", str(out)]) == 0
    err = " ".join(capsys.readouterr().err.split())
    # 512 kB / 32 MiB = 0.0153x the LLC
    assert "warning:" in err and "0.0153x the last-level cache (32 MiB)" in err
    assert "by --llc 32MiB" in err
    (dram,) = json.loads(out.read_text())["memory"]
    assert dram["warnings"] and "real bytes" in dram["method"]
    assert main(["specs", "import", f"{src}@DRAM", "--fp64", "1GFLOP/s", "--llc", "lots"]) == 2
    assert "--llc must be a positive number" in capsys.readouterr().err

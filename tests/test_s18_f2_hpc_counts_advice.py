"""Review s18 r2 (an HPC engineer's day): F1 non-temporal stores on a STREAM-counted
stencil, F2 an SpMV's y write-allocate read, F3 the cache that holds a small dot, F4 counter
bytes at L2/L3, F5 a STREAM triad's non-temporal stores. Each test fails on the code before.

Hand numbers (roof ROOF: fp64 100 GFLOP/s; DRAM 10 GB/s STREAM-counted, DRAM (real traffic)
15 GB/s; L1 40 GB/s, L3 20 GB/s, STREAM-counted; no launch floor; each kernel timed at
twice its floor, 50 % of roof):
- 7-point Jacobi 256^3 x 10 sweeps: 254^3 x 10 = 163,870,640 points, 8 FLOP each:
  1,310,965,120 FLOP; 16 B/point: 2,621,930,240 B (AI 0.5); with --write-allocate 24 B/point
  3,932,895,360 B (AI 0.333). Streaming stores: real traffic 24 -> 16 B/point, 1.5x, and the
  count goes to (or stays at) 16 B/point: AI 0.5 either way (was 0.75 for the 16 B count).
- STREAM triad a = b + s*c over 2e8 elements: 4e8 FLOP, 6.4e9 B real (32 B/element),
  4.8e9 B STREAM-counted (24 B/element). Streaming stores: 32 -> 24 B, 1.333x; AI 4e8 / 4.8e9 =
  0.08333 in both counts (was: no advice).
- `ai spmv 1e6 5e6` (fp64, int32): values 40e6 + indices 20e6 + rowptr 4,000,004 + x 8e6 +
  y 8e6 + y's write-allocate read 8e6 = 88,000,004 B (was 80,000,004); floor on the real-
  traffic ceiling 88,000,004 / 15e9 = 5.8667 ms (was 5.3333).
- Counter bytes of that SpMV (88,000,004 B, 1e7 FLOP: 5e6 nonzeros): rows = (88,000,004 -
  12 x 5e6) / (4 + 3 x 8) = 1,000,000.14 (was / 20 = 1.4e6); 8 right-hand sides per matrix
  read: 8 x 88 / (64 + 8 x 24) = 2.75x (was 8 x 88 / (65.6 + 8 x 22.4) = 2.868x).
- dot 1000 fp64: 16 kB, within 75 % of a 32 KiB L1: "fit in L1"; from L1 at 40 GB/s the
  floor is 16e3 / 40e9 = 400 ns.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.advice_sparse import sparse_bytes
from rooflab.model.byte_convention import memory_ceiling
from rooflab.model.diagnose import diagnose
from rooflab.model.machine import Machine
from rooflab.model.sanity_counts import check_cache_resident
from rooflab.workloads import ops_hpc

COUNTED = "explicit loads + stores, no write-allocate (STREAM/likwid convention)"
ROOF = Roof("quiet EPYC", kind="measured",
            compute=(Ceiling(100e9, precision="fp64", unit="vector"),),
            memory=(Ceiling(40e9, level="L1", method=COUNTED),
                    Ceiling(20e9, level="L3", method=COUNTED),
                    Ceiling(10e9, level="DRAM", method=COUNTED),
                    Ceiling(15e9, level="DRAM (real traffic)",
                            method="real traffic, write-allocate reads included")))
CPU = Machine("cpu", caches={"L1": 32768.0, "L2": 524288.0, "L3": 33554432.0})
POINTS = 254 ** 3 * 10
NT = "use non-temporal"


def _nt(kernel):
    d = diagnose(analyze(ROOF, [kernel]), machine=CPU)[0]
    return next((a for a in d.advice if a.action.startswith(NT)), None)


def _timed(op, bw):
    """op's kernel timed at twice its memory floor on `bw` B/s (50 % of roof)."""
    return op.kernel(seconds=2 * op.bytes / bw)


# --- F1: the stencil's predicted point ---------------------------------------------------

def test_nt_stores_on_a_stream_counted_stencil_keep_16_bytes_a_point():
    op = ops_hpc.stencil("256x256x256", 7, sweeps=10)
    assert op.bytes == 16 * POINTS == 2_621_930_240
    a = _nt(_timed(op, 10e9))
    assert a.new_ai == pytest.approx(0.5)                          # was 0.75 (10.7 B/point)
    assert a.speedup == pytest.approx(1.5, rel=1e-6)               # 24 -> 16 B real
    assert a.action == "use non-temporal (streaming) stores for the output grid"
    assert "leaves that read out already" in a.detail


def test_nt_stores_on_a_write_allocate_stencil_drop_to_16_bytes():
    op = ops_hpc.stencil("256x256x256", 7, sweeps=10, write_allocate=True)
    assert op.bytes == 24 * POINTS
    a = _nt(_timed(op, 15e9))
    assert a.new_ai == pytest.approx(1_310_965_120 / 2_621_930_240)   # 0.333 -> 0.5
    assert a.speedup == pytest.approx(1.5, rel=1e-6)


def test_stencil_without_split_reads_its_bytes_per_point():
    # 16 B per updated point (meta shape), no split: the count has no write-allocate read
    k = Kernel("jacobi7", {"fp64": 8.0 * POINTS}, {"DRAM": 16.0 * POINTS},
               seconds=2 * 16.0 * POINTS / 10e9,
               meta={"op": "stencil", "shape": {"updated_points": POINTS}})
    a = _nt(k)
    assert a.new_ai == pytest.approx(0.5) and a.speedup == pytest.approx(1.5, rel=1e-6)


# --- F5: a STREAM triad -------------------------------------------------------------------

@pytest.mark.parametrize("nbytes, meta, prov, bw", [
    (6.4e9, {"op": "triad", "byte_count": "real traffic"}, {}, 15e9),     # real traffic
    (4.8e9, {"op": "triad"}, {}, 10e9),                                   # STREAM-counted
    (6.4e9, {}, {"bytes": "counted"}, 15e9),                              # perf's counters
])
def test_a_triad_gets_nt_stores_32_to_24_bytes(nbytes, meta, prov, bw):
    k = Kernel("triad_perf", {"fp64": 4e8}, {"DRAM": nbytes}, seconds=2 * nbytes / bw,
               meta=meta, provenance=prov)
    a = _nt(k)
    assert a is not None                                           # was never offered
    assert a.action == "use non-temporal (streaming) stores for the output array"
    assert a.new_ai == pytest.approx(4e8 / 4.8e9)                  # 24 B per element
    assert a.speedup == pytest.approx(32 / 24, rel=1e-6)


def test_out_of_place_axpy_with_write_allocate_gets_it_in_place_does_not():
    op = ops_hpc.axpy(1e8, write_allocate=True, out_of_place=True)
    assert op.bytes == 3.2e9
    a = _nt(_timed(op, 15e9))
    assert a.new_ai == pytest.approx(2e8 / 2.4e9) and a.speedup == pytest.approx(4 / 3)
    assert _nt(_timed(ops_hpc.axpy(1e8), 15e9)) is None            # y's store hits its read


# --- F2: the SpMV's y write-allocate read -------------------------------------------------

def test_ai_spmv_counts_y_write_allocate_read_and_says_real_traffic():
    op = ops_hpc.spmv(1e6, 5e6)
    assert op.bytes == 88_000_004                                  # was 80,000,004
    assert op.bytes_split["write_allocate"] == 8e6
    k = op.kernel(seconds=0.01)
    assert k.meta["byte_count"] == "real traffic"
    assert op.scaled(20).kernel().meta["byte_count"] == "real traffic"
    (p,) = analyze(ROOF, [k]).points
    assert p.bytes_per_s == 15e9
    assert p.bytes / p.bytes_per_s == pytest.approx(5.866667e-3, rel=1e-6)


def test_counter_spmv_rows_guess_holds_y_write_allocate_read():
    k = Kernel("spmv", {"fp64": 1e7}, {"DRAM": 88_000_004}, seconds=0.02,
               provenance={"bytes": "counted"})
    split = sparse_bytes(k, "fp64")
    assert "(1e+06 rows per call)" in split.source                # was 1.4e+06
    assert split.matrix == pytest.approx(64_000_004 / 88_000_004, rel=1e-6)
    d = diagnose(analyze(ROOF, [k]), machine=CPU)[0]
    spmm = next(a for a in d.advice if a.action.startswith("multiply 8 right-hand"))
    assert spmm.speedup == pytest.approx(2.75, rel=1e-4)          # was 2.868


# --- F3: the cache that holds a small dot -------------------------------------------------

def test_smallest_cache_holding_names_l1_for_16_kb():
    from rooflab.model.sanity_counts import smallest_cache_holding  # new in this fix

    assert smallest_cache_holding(CPU, 16e3) == ("L1", 32768.0)
    assert smallest_cache_holding(CPU, 1e6) == ("L3", 33554432.0)   # 1 MB > 75 % of L2
    assert smallest_cache_holding(CPU, 1e9) is None


def test_report_cache_resident_names_l1():
    k = ops_hpc.dot(1000).kernel(seconds=1e-3, calls=1000).with_(bytes={"DRAM": 16e6})
    (p,) = analyze(ROOF, [k]).points
    f = check_cache_resident(k, p, CPU)
    assert "16 kB per call fits in the L1 (32.8 kB" in f.message    # was "the L3 (33.6 MB"


def test_ai_low_leads_with_the_cache_for_a_16_kb_dot():
    # 16e6 B in 0.5 ms = 32 GB/s, 2.13x the 15 GB/s real-traffic roof: ai_low fires, and
    # its first cause is the L1 that holds the 16 kB (was "the measured DRAM roof is too
    # low (... a read-modify-write stream ...)" for a loop without stores)
    from rooflab.model.sanity_counts import check_ai_low

    k = ops_hpc.dot(1000).kernel(seconds=5e-4, calls=1000).with_(bytes={"DRAM": 16e6})
    f = check_ai_low(k, analyze(ROOF, [k]).points, CPU)
    assert f.causes[0].startswith("the working set (16 kB per call) fits in the L1")


def _profile(tmp_path) -> str:
    mem = [{"level": lv, "bytes_per_s": bw, "kind": "measured", "method": COUNTED}
           for lv, bw in (("L1", 40e9), ("L2", 30e9), ("L3", 20e9), ("DRAM", 10e9))]
    doc = {"schema_version": 1, "host": {"cpu_model": "AMD EPYC", "caches": {
        "l1d": 32768, "l2": 524288, "l3": 33554432}},
        "measured": {"name": "quiet EPYC", "kind": "measured", "memory": mem,
                     "compute": [{"precision": "fp64", "unit": "vector",
                                  "flop_per_s": 100e9, "kind": "measured"}]}}
    path = tmp_path / "me.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_ai_dot_1000_says_it_fits_l1(tmp_path, capsys):
    assert main(["ai", "dot", "1000", "--on", _profile(tmp_path), "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    fit = [n for n in notes if n.startswith("the operands (16 kB) fit in L1 (32 KiB")]
    assert fit and "its floor is 400 ns" in fit[0]                # 16e3 / 40e9
    assert main(["ai", "dot", "1e8", "--on", _profile(tmp_path), "--json"]) == 0
    assert not any("fit in" in n for n in json.loads(capsys.readouterr().out)["notes"])


# --- F4: counter bytes at a cache level ---------------------------------------------------

def test_counter_bytes_at_l3_get_the_write_allocate_note():
    k = Kernel("stencil", {"fp64": 1.31e9}, {"L3": 3.93e9, "DRAM": 3.93e9}, seconds=1.0,
               provenance={"bytes": "counted"})
    c, note = memory_ceiling(ROOF, k, "L3")
    assert c.value == 20e9
    assert "L3 bytes measured by hardware counters" in note and "4/3" in note   # was ''
    assert memory_ceiling(ROOF, k.with_(provenance={}), "L3")[1] == ""


# --- F8: the SpMV's index bytes -----------------------------------------------------------

def _levers(kernel):
    d = diagnose(analyze(ROOF, [kernel]), machine=CPU)[0]
    return {a.action: a for a in d.advice}


def test_spmv_index_advice_blocked_format_and_16_bit_indices():
    # 704,000,004 B: column indices 216e6, row pointers 8,000,004. BCSR 3x3: indices / 9,
    # row pointers / 3: 704,000,004 - 192e6 - 5,333,336 = 506,666,668 B: 1.38947x. 16-bit
    # relative column indices: - 108e6 = 596,000,004 B: 1.18121x (was: neither offered)
    op = ops_hpc.spmv(2e6, 54e6)
    got = _levers(_timed(op, 15e9))
    bcsr = got["store the matrix in a blocked format (BCSR/BSR 3x3 blocks)"]
    assert bcsr.speedup == pytest.approx(704_000_004 / 506_666_668, rel=1e-6)
    assert bcsr.new_ai == pytest.approx(1.08e8 / 506_666_668)
    narrow = got["use 16-bit relative column indices"]
    assert narrow.speedup == pytest.approx(704_000_004 / 596_000_004, rel=1e-6)
    # int16 indices already (432e6 + 108e6 + 4,000,002 + 3 x 16e6 = 592,000,002 B): no
    # narrower-index lever; blocking still: 108e6 -> 12e6 col, 4,000,002 -> 1,333,334
    # rowptr: 592,000,002 - 96e6 - 2,666,668 = 493,333,334 B: 1.2x
    short = _levers(_timed(ops_hpc.spmv(2e6, 54e6, index_bytes=2), 15e9))
    assert "use 16-bit relative column indices" not in short
    assert short["store the matrix in a blocked format (BCSR/BSR 3x3 blocks)"].speedup == \
        pytest.approx(592_000_002 / 493_333_334, rel=1e-6)

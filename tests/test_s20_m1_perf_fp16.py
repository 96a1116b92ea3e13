"""rooflab perf reads Sapphire Rapids' half-precision FP events (fp_arith_inst_retired2.*,
perf's sapphirerapids floating-point.json) through flop_events' LIKWID_FP16 weights:
scalar_half 1, 128b/256b/512b_packed_half 8/16/32 FLOP a count, complex_scalar_half 2
(perf's FLOPc metric), and .scalar (umask 0x3: regular + complex scalar half) only for
the part the file does not hold. Before, every one was 'not read' and the run had no
fp16 FLOP."""

from __future__ import annotations

import pytest

from rooflab.ingest.perf_stat import load_perf_stat

HEAD = "\n Performance counter stats for 'system wide':\n\n"
TAIL = ("        10,000,000      uncore_imc/cas_count_read/\n"
        "         5,000,000      uncore_imc/cas_count_write/\n"
        "\n       2.000000000 seconds time elapsed\n\n")


def _kernel(tmp_path, events: dict[str, int]):
    body = "".join(f"{v:>18,}      {e}\n" for e, v in events.items())
    p = tmp_path / "spr.txt"
    p.write_text(HEAD + body + TAIL)
    (k,) = load_perf_stat(str(p)).kernels
    return k


def test_packed_and_scalar_half_are_fp16_flop(tmp_path):
    k = _kernel(tmp_path, {
        "fp_arith_inst_retired2.scalar_half": 1_000,
        "fp_arith_inst_retired2.128b_packed_half": 100,
        "fp_arith_inst_retired2.256b_packed_half": 10,
        "fp_arith_inst_retired2.512b_packed_half": 100_000_000,
        "fp_arith_inst_retired.512b_packed_single": 1_000_000,
    })
    # 1000 + 8 x 100 + 16 x 10 + 32 x 1e8 = 3 200 001 960; fp32: 16 x 1e6
    assert k.flop == {"fp16": 3_200_001_960.0, "fp32": 16_000_000.0}
    assert k.bytes == {"DRAM": 64.0 * 15_000_000}
    assert not any(n.startswith("not read") for n in k.meta["notes"]), k.meta["notes"]


def test_scalar_is_read_for_the_part_the_file_lacks(tmp_path):
    # .scalar 5000 = scalar_half 3000 + complex 2000: the complex ones at 2 FLOP each,
    # 3000 + 2 x 2000 = 7000
    k = _kernel(tmp_path, {"fp_arith_inst_retired2.scalar": 5_000,
                           "fp_arith_inst_retired2.scalar_half": 3_000})
    assert k.flop == {"fp16": 7_000.0}
    assert ("fp_arith_inst_retired2.scalar less fp_arith_inst_retired2.scalar_half read as "
            "fp_arith_inst_retired2.complex_scalar_half (2 FLOP each)") in k.meta["notes"]


def test_scalar_with_both_parts_is_left_out(tmp_path):
    # 3000 x 1 + 2000 x 2, not 5000 more on top
    k = _kernel(tmp_path, {"fp_arith_inst_retired2.scalar": 5_000,
                           "fp_arith_inst_retired2.scalar_half": 3_000,
                           "fp_arith_inst_retired2.complex_scalar_half": 2_000})
    assert k.flop == {"fp16": 7_000.0}
    assert any(n.startswith("fp_arith_inst_retired2.scalar left out") for n in k.meta["notes"])


def test_scalar_alone_reads_as_likwid_does(tmp_path):
    k = _kernel(tmp_path, {"fp_arith_inst_retired2.scalar": 5_000,
                           "fp_arith_inst_retired2.512b_packed_half": 10})
    assert k.flop == {"fp16": pytest.approx(5_000 + 32 * 10)}


def test_vector_alone_is_not_read_and_says_why(tmp_path):
    k = _kernel(tmp_path, {"fp_arith_inst_retired2.vector": 10,
                           "fp_arith_inst_retired.scalar_double": 4})
    assert k.flop == {"fp64": 4.0}
    assert any(n.startswith("fp_arith_inst_retired2.vector not read: it counts packed half")
               for n in k.meta["notes"])

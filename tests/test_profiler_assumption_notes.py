"""Review 12b E, F, H, J, K (ncu), L: rocprof and ncu imports say what they assumed.

Hand numbers are the review's: a triad of 1,048,576 fp32 FMA per dispatch on wave64
(16,384 wave instructions), 262,144 64-B HBM reads and 131,072 64-B HBM writes, 20 us,
two dispatches.
"""

from __future__ import annotations

import json
import math

import pytest

from rooflab.cli.main import main
from rooflab.ingest.rocprof import COLLECT_HINT, load_rocprof

TRIAD = '"void triad<float>(float*, float const*, float const*, float) [clone .kd]"'
COUNTERS = ("SQ_INSTS_VALU_ADD_F32", "SQ_INSTS_VALU_MUL_F32", "SQ_INSTS_VALU_FMA_F32",
            "SQ_INSTS_VALU_TRANS_F32", "TCC_EA_RDREQ_sum", "TCC_EA_RDREQ_32B_sum",
            "TCC_EA_WRREQ_sum", "TCC_EA_WRREQ_64B_sum", "TCP_TOTAL_CACHE_ACCESSES_sum")
VALUES = ("0", "0", "16384", "0", "262144", "0", "131072", "131072", "49152")


def _triad(tmp_path, drop=(), cells=None, wave=64, fma="16384", name="results.csv"):
    """A rocprof v1 results.csv of the triad, two dispatches; `drop`: counters left out;
    `cells`: {counter: [text of dispatch 0, text of dispatch 1]}."""
    cols = [c for c in COUNTERS if c not in drop]
    header = "Index,KernelName,gpu-id,wave_size," + ",".join(cols) + ",BeginNs,EndNs"
    rows = [header]
    for i, (begin, end) in enumerate(((1_000_000, 1_020_000), (1_100_000, 1_120_000))):
        vals = []
        for c, v in zip(COUNTERS, VALUES, strict=True):
            if c in drop:
                continue
            v = fma if c == "SQ_INSTS_VALU_FMA_F32" else v
            vals.append((cells or {}).get(c, [v, v])[i])
        rows.append(f"{i},{TRIAD},2,{wave}," + ",".join(vals) + f",{begin},{end}")
    p = tmp_path / name
    p.write_text("\n".join(rows) + "\n")
    return p


FLOP = 2 * 64 * 2 * 16_384                        # 4,194,304 over two dispatches
DRAM = 2 * (64 * 262_144 + 64 * 131_072)          # 50,331,648 B


def test_the_plain_triad_by_hand(tmp_path):
    (k,) = load_rocprof(str(_triad(tmp_path))).kernels
    assert k.flop == {"fp32": FLOP} and k.bytes["DRAM"] == DRAM
    assert round(k.total_flop / k.bytes["DRAM"], 4) == 0.0833
    assert not k.meta.get("notes")


# --- E: a counter that is not a number is unknown, never 0 ---------------------------

@pytest.mark.parametrize("text", ["n/a", "", "nan"])
def test_na_read_counter_drops_the_dram_level_with_a_note(tmp_path, text):
    p = _triad(tmp_path, cells={"TCC_EA_RDREQ_sum": [text, text]})
    imp = load_rocprof(str(p))
    (k,) = imp.kernels
    # old code: DRAM = 2 x 64 x 131,072 = 16,777,216 B (writes only), AI 0.25 instead of 0.0833
    assert "DRAM" not in k.bytes
    assert k.bytes["L1"] == 2 * 64 * 49_152
    (note,) = [n for n in imp.notes if "TCC_EA_RDREQ" in n]
    assert "dispatch 0 (and 1 more)" in note and "no DRAM point" in note


def test_one_na_dispatch_drops_the_level_for_the_whole_kernel(tmp_path):
    # dispatch 1's writes are n/a: dispatch 0's DRAM bytes over both dispatches' time would
    # read half; the level goes, L1 stays (both dispatches counted it)
    p = _triad(tmp_path, cells={"TCC_EA_WRREQ_sum": ["131072", "n/a"]})
    imp = load_rocprof(str(p))
    (k,) = imp.kernels
    assert "DRAM" not in k.bytes and k.calls == 2 and k.bytes["L1"] == 2 * 64 * 49_152
    assert any("TCC_EA_WRREQ is not a number (n/a) in dispatch 1:" in n for n in imp.notes)


def test_na_only_byte_counter_is_a_skip_naming_it(tmp_path):
    p = _triad(tmp_path, drop=("TCP_TOTAL_CACHE_ACCESSES_sum",),
               cells={"TCC_EA_RDREQ_sum": ["n/a", "n/a"]})
    with pytest.raises(Exception, match=r"TCC_EA_RDREQ is not a number \(n/a\), so no DRAM"):
        load_rocprof(str(p))


def test_reads_not_collected_is_said(tmp_path):
    p = _triad(tmp_path, drop=("TCC_EA_RDREQ_sum", "TCC_EA_RDREQ_32B_sum"))
    imp = load_rocprof(str(p))
    (k,) = imp.kernels
    assert k.bytes["DRAM"] == 2 * 64 * 131_072          # the writes, said to be alone
    assert any("DRAM = writes only: TCC_EA_WRREQ without TCC_EA_RDREQ" in n
               for n in imp.notes)


def test_na_channel_makes_the_channel_sum_unknown(tmp_path):
    p = tmp_path / "results.csv"
    p.write_text("Index,KernelName,BeginNs,EndNs,SQ_INSTS_VALU_FMA_F32,TCC_EA_RDREQ[0],"
                 "TCC_EA_RDREQ[1],TCC_EA_WRREQ[0],TCC_EA_WRREQ[1],TCP_TOTAL_CACHE_ACCESSES\n"
                 "0,k,0,1000,100,10,n/a,5,5,7\n")
    imp = load_rocprof(str(p))
    (k,) = imp.kernels
    assert "DRAM" not in k.bytes and k.bytes["L1"] == 64 * 7    # old: 64 x 10 + 32 x 10


# --- F: the split counters and partial FLOP --------------------------------------------

def test_missing_split_counters_are_said_and_assumed(tmp_path):
    p = _triad(tmp_path, drop=("TCC_EA_RDREQ_32B_sum", "TCC_EA_WRREQ_64B_sum"))
    imp = load_rocprof(str(p))
    (k,) = imp.kernels
    # the assumption itself is rocprof-compute's formula: writes 32 B, reads 64 B
    assert k.bytes["DRAM"] == 2 * (64 * 262_144 + 32 * 131_072)       # 41,943,040 B
    text = "\n".join(imp.notes)
    assert "TCC_EA_WRREQ_64B not collected: every DRAM write assumed 32 B" in text
    assert "TCC_EA_RDREQ_32B not collected: every DRAM read assumed 64 B" in text


def test_collect_hint_names_the_split_counters():
    for counter in ("TCC_EA_RDREQ_32B", "TCC_EA_WRREQ_64B", "TCC_BUBBLE"):
        assert counter in COLLECT_HINT


def test_fma_only_gets_a_partial_flop_note(tmp_path):
    p = _triad(tmp_path, drop=("SQ_INSTS_VALU_ADD_F32", "SQ_INSTS_VALU_MUL_F32",
                               "SQ_INSTS_VALU_TRANS_F32"))
    imp = load_rocprof(str(p))
    assert imp.kernels[0].flop == {"fp32": FLOP}
    (note,) = [n for n in imp.notes if "FLOP from" in n]
    assert "fp32 FLOP from FMA only" in note and "SQ_INSTS_VALU_ADD_F32" in note
    assert "may read low" in note


def test_notes_reach_the_terminal(tmp_path, capsys):
    p = _triad(tmp_path, drop=("TCC_EA_WRREQ_64B_sum",))
    assert main(["rocprof", str(p), "--on", "mi250x"]) == 0
    out = capsys.readouterr().out
    assert "TCC_EA_WRREQ_64B not collected" in out


# --- L: the file's wave size -------------------------------------------------------------

def test_wave32_counts_32_lanes(tmp_path):
    # the same 1,048,576-FMA triad as 32,768 wave32 instructions per dispatch
    p = _triad(tmp_path, wave=32, fma="32768")
    imp = load_rocprof(str(p))
    (k,) = imp.kernels
    assert k.flop == {"fp32": 2 * 32 * 2 * 32_768} == {"fp32": FLOP}   # old: 8,388,608
    assert any("32 lanes" in n for n in imp.notes)


def test_rocprofv2_wave_size_column(tmp_path):
    p = tmp_path / "v2.csv"
    p.write_text("Dispatch_ID,Kernel_Name,Wave_Size,Start_Timestamp,End_Timestamp,"
                 "SQ_INSTS_VALU_FMA_F32,TCC_EA_RDREQ_sum,TCC_EA_RDREQ_32B_sum,"
                 "TCC_EA_WRREQ_sum,TCC_EA_WRREQ_64B_sum\n"
                 "1,k,32,0,1000,1000,10,0,10,10\n")
    (k,) = load_rocprof(str(p)).kernels
    assert k.flop == {"fp32": 32 * 2 * 1000}


def test_no_wave_size_column_is_wave64(tmp_path):
    p = tmp_path / "v2.csv"
    p.write_text("Dispatch_ID,Kernel_Name,Start_Timestamp,End_Timestamp,"
                 "SQ_INSTS_VALU_FMA_F32,TCC_EA_RDREQ_sum,TCC_EA_RDREQ_32B_sum,"
                 "TCC_EA_WRREQ_sum,TCC_EA_WRREQ_64B_sum\n"
                 "1,k,0,1000,1000,10,0,10,10\n")
    imp = load_rocprof(str(p))
    assert imp.kernels[0].flop == {"fp32": 64 * 2 * 1000}
    assert not any("lanes" in n for n in imp.notes)


def test_json_keeps_the_notes(tmp_path, capsys):
    p = _triad(tmp_path, wave=32, fma="32768")
    assert main(["rocprof", str(p), "--on", "mi250x", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kernels"][0]["flop"] == {"fp32": FLOP}


# --- ncu: E (an n/a level is said) and K (read-only DRAM, the sector note) ---------------

IDENT = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
         '"Block Size","Grid Size","Device","CC"')
HEAD = IDENT + ',"Section Name","Metric Name","Metric Unit","Metric Value"'
FFMA = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"


def _ncu(tmp_path, kernels, cc="8.0", name="k.csv"):
    """A `--page details` CSV: kernels = [(name, [(metric, unit, value), ...]), ...]."""
    rows = [HEAD]
    for i, (kname, values) in enumerate(kernels):
        rows += [f'"{i}","1","app","h","{kname}","1","7","(256, 1, 1)","(1024, 1, 1)","0",'
                 f'"{cc}","Command line profiler metrics","{m}","{u}","{v}"'
                 for m, u, v in values]
    p = tmp_path / name
    p.write_text("\n".join(rows) + "\n")
    return p


SAXPY = [(FFMA, "inst", "1,048,576"), ("gpu__time_duration.sum", "usecond", "10")]


def test_ncu_byte_counts_say_an_na_level():
    from rooflab.ingest.ncu_metrics import byte_counts

    nbytes, notes = byte_counts({"dram__bytes.sum": math.nan, "lts__t_bytes.sum": 1.26e7})
    assert nbytes == {"L2": 1.26e7}
    assert notes == ["dram__bytes.sum is not a number (n/a) in the file: no DRAM point"]


def test_ncu_na_dram_is_said_on_the_terminal(tmp_path, capsys):
    p = _ncu(tmp_path, [("saxpy", SAXPY + [("dram__bytes.sum", "Mbyte", "n/a"),
                                           ("lts__t_bytes.sum", "Mbyte", "12.60")])])
    assert main(["ncu", str(p), "--on", "a100"]) == 0
    out = capsys.readouterr().out
    assert "saxpy: dram__bytes.sum is not a number (n/a) in the file: no DRAM point" in out


def test_ncu_all_levels_na_is_a_skip_naming_the_metric(tmp_path):
    from rooflab.errors import ParseError
    from rooflab.ingest.ncu_files import load_ncu

    p = _ncu(tmp_path, [("saxpy", SAXPY + [("dram__bytes.sum", "Mbyte", "n/a")])])
    with pytest.raises(ParseError, match=r"dram__bytes.sum is not a number \(n/a\)"):
        load_ncu([str(p)])


def test_ncu_read_only_dram_gets_a_note(tmp_path):
    from rooflab.ingest.ncu_files import load_ncu

    p = _ncu(tmp_path, [
        ("onlyread", SAXPY + [("dram__bytes_read.sum", "Mbyte", "8")]),
        ("rw", SAXPY + [("dram__bytes_read.sum", "Mbyte", "8"),
                        ("dram__bytes_write.sum", "Mbyte", "4")])])
    ks = {k.name: k for k in load_ncu([str(p)]).kernels}
    assert ks["onlyread"].bytes["DRAM"] == 8e6 and ks["rw"].bytes["DRAM"] == 12e6
    (note,) = [n for n in ks["onlyread"].meta["notes"] if n.startswith("DRAM")]
    assert note.startswith("DRAM = reads only: dram__bytes_read.sum without "
                           "dram__bytes_write.sum")
    assert not any(n.startswith("DRAM") for n in ks["rw"].meta["notes"])


def test_ncu_sector_note_has_its_parentheses(tmp_path):
    from rooflab.ingest.ncu_metrics import byte_counts

    nbytes, notes = byte_counts({"dram__sectors_read.sum": 1000.0,
                                 "dram__sectors_write.sum": 500.0,
                                 "lts__t_sectors.sum": 4000.0})
    assert nbytes == {"DRAM": 32 * (1000 + 500), "L2": 32 * 4000}
    assert notes == [
        "DRAM bytes = 32 x (dram__sectors_read.sum + dram__sectors_write.sum) (32-byte sectors)",
        "L2 bytes = 32 x lts__t_sectors.sum (32-byte sectors)"]


# --- J: a catalog roof at boost under kernels that ran at base clock ------------------------

def _gpp_like(tmp_path, clock_hz):
    # 1e9 DFMA, 100 MB DRAM, 1.62e9 cycles at the given clock
    cycles = 1.62e9
    return _ncu(tmp_path, [("dk", [
        ("sm__sass_thread_inst_executed_op_dfma_pred_on.sum", "inst", "1,000,000,000"),
        ("dram__bytes.sum", "Mbyte", "100"),
        ("sm__cycles_elapsed.avg", "cycle", f"{cycles:.0f}"),
        ("sm__cycles_elapsed.avg.per_second", "hz", f"{clock_hz:.2f}")])], cc="8.9")


def test_base_clock_under_a_boost_catalog_roof_is_said(tmp_path):
    from rooflab.ingest.ncu_files import load_ncu
    from rooflab.ingest.profile_checks import catalog_clock_hz
    from rooflab.ingest.profile_import import choose_roof

    imp = load_ncu([str(_gpp_like(tmp_path, 1_619_726_202.90))])
    assert imp.clock_hz == pytest.approx(1_619_726_202.90)
    # judged at boost on request (review s26 r2 F1: else the ceilings scale to the clock)
    choice = choose_roof("RTX 4060 Laptop GPU@boost", imp)
    # 14.56 TFLOP/s fp32 / (24 SMs x 128 lanes x 2) = 2.3698 GHz; 1.6197 / 2.3698 = 68 %
    assert catalog_clock_hz(choice.roof) == pytest.approx(14.56e12 / (24 * 128 * 2))
    assert "the kernels ran at 1.62 GHz" in choice.source
    assert "assume 2.37 GHz (boost)" in choice.source and "at most 68 %" in choice.source
    assert "--clock-control none" in choice.source and "--on the .ncu-rep" in choice.source


def test_boost_clock_run_gets_no_clock_note(tmp_path):
    from rooflab.ingest.ncu_files import load_ncu
    from rooflab.ingest.profile_import import choose_roof

    imp = load_ncu([str(_gpp_like(tmp_path, 2.3e9))])
    assert "kernels ran at" not in choose_roof("RTX 4060 Laptop GPU", imp).source


def test_clock_note_on_the_ncu_terminal(tmp_path, capsys):
    p = _gpp_like(tmp_path, 1_619_726_202.90)
    assert main(["ncu", str(p), "--on", "RTX 4060 Laptop GPU@boost"]) == 0
    assert "the kernels ran at 1.62 GHz" in capsys.readouterr().out.replace("\n", "")


# --- H: the lower-bound roof per precision; the minor precision's note -------------------

# output.csv's sigma_gpp_gpu_29 (review 12b, "Checked and found correct")
GPP_FP64 = 122_305_685_313 + 371_957_323_851 + 2 * 734_774_600_586
GPP_FP32 = 2 * 24_541_362_358
GPP_T = 36_873_068_823 / 1_619_726_202.90


def _gpp():
    from rooflab.model import Kernel

    return Kernel("sigma_gpp_gpu_29", {"fp64": float(GPP_FP64), "fp32": float(GPP_FP32)},
                  {"DRAM": 1.3496e11}, seconds=GPP_T, unit="vector")


def test_envelope_fp64_ceiling_is_fp64s_own_rate():
    from rooflab.ingest.profile_import import envelope_roof

    roof = envelope_roof([_gpp()])
    (c,) = roof.compute
    # review 13v F-B: the fp32 part is held to this ceiling too, so fp64 alone (1.9638e12 /
    # 22.765 s = 86.3 GFLOP/s) put the kernel at 102 % of its own envelope; the ceiling is
    # the total, 88.4 GFLOP/s, and says that fp64 alone is 86.3 (tests/test_report_matches_ncu.py)
    assert (c.precision, c.unit) == ("fp64", "vector")
    assert c.value == pytest.approx((GPP_FP64 + GPP_FP32) / GPP_T)
    assert round(c.value / 1e9, 1) == 88.4
    assert "fp64 alone 86.3 GFLOP/s" in c.method


def test_minor_precision_held_to_another_ceiling_gets_the_note():
    from rooflab.ingest.profile_import import RecordedPeaks, peaks_roof
    from rooflab.model import analyze

    # a .ncu-rep roof with fp64 peaks only: 2 x 48 x 1.62e9 = 155.5 GFLOP/s, 255.8 GB/s
    roof = peaks_roof(RecordedPeaks({"fp64": 155.5e9}, {"DRAM": 255.8e9}, "output5.ncu-rep"))
    an = analyze(roof, [_gpp()])
    assert any("has no fp32 ceiling; using fp64 vector" in n and "only indicative" in n
               for n in an.notes)               # old: only a pure fp32 kernel got it
    (p,) = an.points
    # both parts on the one ceiling: (fp64 + fp32) / 155.5 GFLOP/s
    assert p.percent_of_roof == pytest.approx(
        100 * (GPP_FP64 + GPP_FP32) / GPP_T / 155.5e9)

"""Review s28 R2 (numbers as printed): the reproductions of F1-F4 and F6-F16 as assertions.

Hand checks beside each: 1790 s / 60 = 29.8 min; a +0.04 % change (1 ms -> 1.0004 ms) beside
a 0.01 % gate; 1 token / 2.63 s = 0.380 tok/s; 4.507 ms / 45.2 ms = 9.97 % (1 / 10.03);
72 x 50 GB/s = 3.6 TB/s; 10 Mb/s / 8 = 1.25 MB/s; q_proj's weights 33,554,432 / 33,570,816 B
= 99.95 %; 16e9 B in 1.3 s = 12.3 GB/s.
"""

from __future__ import annotations

import json
import re

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.sides import change_text, pct_text, share_text
from rooflab.units import (
    fmt_ai,
    fmt_bytes_binary,
    fmt_seconds,
    parse_rate,
    per_s,
    seconds_apart,
    si,
)

HEAD = "name,flop,bytes,seconds,precision\n"


def run(capsys, monkeypatch, *args) -> tuple[int, str, str]:
    monkeypatch.setenv("COLUMNS", "250")   # one table row per line
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def csv(tmp_path, name: str, *rows: str) -> str:
    p = tmp_path / name
    p.write_text(HEAD + "".join(r + "\n" for r in rows))
    return str(p)


# ------------------------------------------------------------------ F1 long durations

def test_f1_durations_of_1000_s_and_more_are_minutes_and_hours():
    # the old loop stopped at s: '1e+03 s', '1.23e+03 s', '8.64e+04 s'
    assert fmt_seconds(999.4) == "999 s"
    assert fmt_seconds(999.6) == "16.7 min"           # 999.6 / 60 = 16.66
    assert fmt_seconds(1790) == "29.8 min"
    assert fmt_seconds(3599) == "1 h"                 # 59.98 min rounds to 60: hours
    assert fmt_seconds(5400) == "1.5 h"
    assert fmt_seconds(86400) == "24 h"
    assert fmt_seconds(1.01e7) == "2806 h"            # whole hours, not '2.81e+03 h'
    assert fmt_seconds(233) == "233 s"                # under 1000 s: unchanged
    assert "e+" not in "".join(fmt_seconds(10.0 ** k) for k in range(-12, 12))


def test_f1_llm_request_floor_of_a_70b_model_on_a_t4(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, "llm", "llama-3-70b", "--on", "T4",
                       "--generate", "4096")
    assert code == 0
    floor = re.search(r"request floor (\S+ \S+)", out).group(1)
    assert floor.endswith(" min") and "e+" not in out


# ------------------------------------------------------------------ F2 compare

def test_f2_compare_shows_the_change_the_gate_failed_on(tmp_path, capsys, monkeypatch):
    a = csv(tmp_path, "c1.csv", "k1,1e9,1e8,0.001,fp32")
    b = csv(tmp_path, "c2.csv", "k1,1e9,1e8,0.0010004,fp32")
    code, out, err = run(capsys, monkeypatch, "compare", a, b, "--fail-if-slower", "0.01")
    assert code == 1 and "slower by more than 0.01 %: k1" in out + err
    (row,) = [line for line in out.splitlines() if line.startswith("│ k1")]
    cells = [c.strip() for c in row.split("│")[1:-1]]
    # 1.0004 / 1 - 1 = +0.04 % > 0.01 %: the row says so; speed-up 1 / 1.0004 = 0.9996
    assert cells[1:5] == ["1 ms", "1.0004 ms", "0.9996x", "+0.04 %"]
    assert "-0.04 %" in row and "-0.0 %" not in row          # FLOP/s change
    assert "matched total: 1 ms -> 1.0004 ms (0.9996x)" in out


def test_f2_no_negative_zero_and_long_kernels_in_minutes(tmp_path, capsys, monkeypatch):
    a = csv(tmp_path, "a.csv", "k1,1e9,1e8,0.001,fp32", "k3,1e15,1e12,1500,fp32")
    b = csv(tmp_path, "b.csv", "k1,1e9,1e8,0.0009996,fp32", "k3,1e15,1e12,1400,fp32")
    code, out, _ = run(capsys, monkeypatch, "compare", a, b, "--on", "H100 SXM")
    assert code == 0
    assert "-0.0 %" not in out and "-0.04 %" in out
    assert re.search(r"│\s*25 min\s*│\s*23.3 min\s*│", out)      # 1500 s -> 1400 s
    assert "e+03" not in out


def test_f2_change_text_keeps_its_side_of_zero_and_of_the_gate():
    assert change_text(0.04, (0.0, 0.01)) == "+0.04 %"
    assert change_text(-0.04) == "-0.04 %"
    assert change_text(2.5) == "+2.5 %"
    assert change_text(0.0) == "+0.0 %"
    assert change_text(10.004, (0.0, 10.0)) == "+10.004 %"
    assert seconds_apart(1e-3, 1.0004e-3) == ("1 ms", "1.0004 ms")
    assert seconds_apart(1500, 1400) == ("25 min", "23.3 min")


# ------------------------------------------------------------------ F3 / F13 tokens/s

def test_f3_choose_prints_a_cpus_tokens_per_second(tmp_path, capsys, monkeypatch):
    code, doc, _ = run(capsys, monkeypatch, "llm", "llama-3.1-405b", "--on", "H100 SXM",
                       "--json")
    assert code == 0
    path = tmp_path / "d405.json"
    path.write_text(doc)
    code, out, _ = run(capsys, monkeypatch, "choose", str(path), "--among",
                       "AWS Graviton3,NVIDIA Grace CPU Superchip 144-core")
    assert code == 0
    rows = {c[1]: c for c in ([x.strip() for x in line.split("│")[1:-1]]
                              for line in out.splitlines() if line.startswith("│"))}
    grav = rows["AWS Graviton3"]
    # 1 token / 2.63 s = 0.380 tok/s (the old cell: '0')
    assert grav[2] == "2.63 s" and grav[-3] == grav[-2] == "0.3802"
    assert rows["NVIDIA Grace CPU Superchip 144-core"][-3] == "1.238"    # 1 / 808 ms


def test_f13_one_tokens_per_second_rule():
    assert per_s(0.38021) == "0.3802"
    assert per_s(221.94) == "221.9"
    assert per_s(1482.2) == "1482"                     # no thousands comma (choose had one)
    assert per_s(25207.3) == "25207"


# ------------------------------------------------------------------ F4 llm --tpot-ms

def test_f4_measured_tpot_keeps_the_10_percent_line(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, "llm", "llama-3-8b", "--on", "H100 SXM",
                       "--tpot-ms", "45.2")
    assert code == 0
    # 4.507 ms / 45.2 ms = 9.97 %: latency-bound, so not '10 %'; 1 / 9.97 % = 10.03x
    assert "= 9.97 % of the roof, 10.03x the floor" in out


def test_f4_a_slow_tpot_and_its_gap_shares(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, "llm", "llama-3-8b", "--on", "H100 SXM",
                       "--tpot-ms", "1500")
    assert code == 0
    # 4.507 ms / 1.5 s = 0.30 %; launches 2.25-4.51 ms of a 1.4955 s gap = 0.15-0.30 %
    assert "= 0.3 % of the roof, 333x the floor" in out
    assert "(0.15-0.3 %; CUDA graphs, fusion)" in out
    assert "the rest, 1.49 s, is host-side" in out          # not '1.49 s-1.49 s'
    assert "(0-0 %" not in out and "= 0 % of the roof" not in out


# ------------------------------------------------------------------ F6 sweep AI

def test_f6_sweep_ai_as_fmt_ai_writes_it(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, "llm", "llama-3-8b", "--on", "H100 SXM",
                       "--batch", "1,4,16,64,256")
    assert code == 0
    assert "e+03" not in out
    assert re.search(r"│\s+16 │\s+1022 │", out)      # prefill AI at batch 16 (was 1.02e+03)
    assert fmt_ai(-0.0) == "0" and fmt_ai(1333333) == "1333333"


# ------------------------------------------------------------------ F7 / F8 scale

def test_f7_link_figures_in_si(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, "scale", "--on", "B200", "--per-node", "72",
                       "--nics-per-node", "72", "--hidden", "8192", "--blocks", "8",
                       "--tokens", "4096")
    assert code == 0
    # 72 NICs x 400 Gb/s / 8 = 3.6 TB/s across nodes (was '3.6e+03 GB/s')
    assert "one ring per NIC = 3.6 TB/s across nodes" in out and "e+03" not in out
    code, out, _ = run(capsys, monkeypatch, "scale", "--on", "B200", "--link-bw", "1.8TB/s",
                       "--inter-bw", "10Mb/s", "--hidden", "1024", "--blocks", "4",
                       "--tokens", "512")
    assert code == 0
    assert ("intra-node link: NVLink 1.8 TB/s (given (--link-bw)); inter-node: 1.25 MB/s "
            "(given (--inter-bw))") in out


def test_f8_efficiency_and_speedup_on_a_slow_network(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, "scale", "--on", "H100 SXM", "--inter-bw",
                       "1Gb/s", "--hidden", "4096", "--blocks", "32", "--tokens", "512")
    assert code == 0
    row = next(line.split() for line in out.splitlines() if line.split()[:2] == ["16", "network"])
    # 16 x 20 ms / 193 s = 0.0017 of one GPU's pace; / 16 = 0.0104 % efficiency
    assert row[-4:] == ["0.01", "%", "0.0017", "network"]


def test_f8_a_ring_that_exposes_time_is_not_100_percent(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, "scale", "--on", "H100 SXM", "--hidden", "4096",
                       "--blocks", "32", "--tokens", "65536")
    assert code == 0
    row = next(line.split() for line in out.splitlines() if line.startswith("1024"))
    assert row[-7:-5] == ["503", "us"] and row[-5:-3] == ["99.98", "%"]
    assert "link latency: 0 us per hop assumed" in out
    assert share_text(100.0) == "100.0 %" and share_text(0.0104) == "0.01 %"


# ------------------------------------------------------------------ F9 bit rates

@pytest.mark.parametrize(("text", "rate"), [
    ("400Gb/s", 50e9), ("400Gbit/s", 50e9), ("400gbit/s", 50e9), ("400gbps", 50e9),
    ("400 Gbps", 50e9), ("50Kb/s", 6250.0), ("2 kbit/s", 250.0), ("400GB/s", 400e9),
    ("400MB/s", 400e6), ("50kB/s", 50e3), ("4.5e11", 4.5e11),
])
def test_f9_bits_and_bytes(text, rate):
    assert parse_rate(text) == rate


@pytest.mark.parametrize(("text", "bits", "nbytes"), [
    ("400gb/s", "400Gbit/s", "400GB/s"), ("50kb/s", "50kbit/s", "50kB/s"),
    ("400mb/s", "400Mbit/s", "400MB/s"), ("3tb/s", "3Tbit/s", "3TB/s"),
])
def test_f9_an_all_lower_case_b_is_refused_naming_both_spellings(text, bits, nbytes):
    # before: '400gb/s' was 400 GB/s while '50kb/s' was 50 kbit/s, a silent 8x apart
    with pytest.raises(InputError, match="ambiguous") as e:
        parse_rate(text, "--inter-bw")
    assert bits in str(e.value) and nbytes in str(e.value)


def test_f9_the_cli_refuses_it_with_exit_2(capsys, monkeypatch):
    code, _, err = run(capsys, monkeypatch, "scale", "--on", "H100 SXM", "--hidden", "1024",
                       "--blocks", "2", "--tokens", "512", "--inter-bw", "100gb/s")
    assert code == 2 and "say 100Gbit/s (or 100Gb/s) for bits" in err
    assert "Traceback" not in err


# ------------------------------------------------------------------ F10 / F11 report

K_CSV = ("tiny,2,6,1e-9,fp32", "huge,1e18,1e15,2000,fp32", "mid,1e9,1e8,0.001,fp32",
         "nearroof,1.9996e12,1e9,0.1,fp32")


def test_f10_gain_share_matches_the_detail_line(tmp_path, capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, "report", csv(tmp_path, "k.csv", *K_CSV),
                       "--on", "H100 SXM")
    assert code == 0
    # 70.2 ms of 2000.1 s = 0.0035 %: the table and the detail say the same figure
    assert "70.2 ms / 0.0035 %" in out and "(0.0035 % of the total)" in out
    assert "33.3 min measured" in out                      # was '2e+03 s measured'
    assert "e-05 %" not in out and "e-11 %" not in out       # tiny shares: '<0.001%'


def test_f10_near_the_roof_the_gains_differ(tmp_path, capsys, monkeypatch):
    path = csv(tmp_path, "near.csv", "at9996,6.6973e12,1e9,0.1,fp32",
               "at10004,6.7027e12,1e9,0.1,fp32")
    code, out, _ = run(capsys, monkeypatch, "report", path, "--on", "H100 SXM")
    assert code == 0
    # 40.3 us of 0.2 s = 0.02 %; the other gains nothing
    assert "40.3 us / 0.02 %" in out and "0 ns / 0 %" in out


def test_f10_whatif_weight_share_is_not_rounded_to_all(tmp_path, capsys, monkeypatch):
    code, doc, _ = run(capsys, monkeypatch, "llm", "llama-3-8b", "--on", "H100 SXM",
                       "--json")
    path = tmp_path / "decode.json"
    path.write_text(doc)
    code, out, err = run(capsys, monkeypatch, "whatif", str(path), "--on", "H100 SXM",
                         "--quantize", "int4")
    assert code == 0
    # q_proj: 33,554,432 of 33,570,816 B = 99.95 % weights (was '100 %')
    assert "weights 99.95 % of the bytes" in out + err
    assert "weights 100 % of the bytes" not in out + err


def test_f11_record_table_ratios(tmp_path, capsys, monkeypatch):
    from pathlib import Path

    roof = Path(__file__).resolve().parents[1] / "examples" / "seeds" / "t4p.json"
    path = csv(tmp_path, "r.csv", "huge,1e18,1e15,2000,fp16", "fast,1e12,1e9,1e-6,fp16")
    code, out, _ = run(capsys, monkeypatch, "report", path, "--on", str(roof))
    assert code == 0
    assert not re.search(r"(?<![0-9])0\.00x", out)
    # 1 us against a 15.4 ms floor: 6.50e-05x, not '0.00x'; 20000x above, not '20000.00x'
    assert "6.50e-05x the floor" in out and "fast (20000x above)" in out


# ------------------------------------------------------------------ F12 torch copies

def test_f12_a_weight_upload_in_seconds_and_gigabytes(tmp_path):
    from test_s20_f8_torch_traces import MM, op

    from rooflab.ingest.torch_trace import load_torch_trace

    def device(name, ts, dur, ext, cat="kernel", **args):
        return {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 7, "ts": ts,
                "dur": dur, "args": {"External id": ext, **args}}

    copy = ([[1024, 1024], [1024, 1024], []], ["float", "float", "Scalar"], ["", "", "False"])
    events = [op("aten::mm", 0, 20, 1, *MM), device("sm90_gemm", 100, 100.0, 1),
              op("aten::copy_", 35, 20, 3, *copy),
              device("Memcpy HtoD (Pageable -> Device)", 300, 1.3e6, 3, cat="gpu_memcpy",
                     bytes=16e9)]
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": events}))
    note = next(n for n in load_torch_trace(str(p)).notes if n.startswith("host<->device"))
    # 1.3 s of 1.3001 s op time = 99.99 %; 16e9 B / 1.3 s = 12.3 GB/s
    assert note.startswith("host<->device copies (99.99 % of op time")
    assert "1 x Memcpy HtoD (Pageable -> Device), 1.3 s (launched by aten::copy_ 1.3 s), " \
           "16 GB at 12.3 GB/s" in note


# ------------------------------------------------------------------ F14 / F15 / F16

def test_f14_gain_speed_up_in_the_headrooms_figures():
    from rooflab.hardware.catalog import lookup_roof
    from rooflab.model.analysis import analyze
    from rooflab.model.diagnose import diagnose
    from rooflab.model.kernel import Kernel

    # seed 004 decode b=1 on a T4: 15 ms / 6.875 ms = 2.18x, as the headroom prints it
    k = Kernel("decode b=1", {"fp16": 2.2e9}, {"DRAM": 2.2e9}, seconds=0.015,
               meta={"op": "decode"})
    (d,) = diagnose(analyze(lookup_roof("T4"), [k]))
    assert d.gain_words.endswith("(2.18x faster)")


def test_f15_edges_of_the_formatters():
    assert fmt_bytes_binary(2**50) == "1 PiB" and fmt_bytes_binary(3 * 2**40) == "3 TiB"
    assert si(1e21, "B") == "1000 EB"
    assert pct_text(4.9e-05) == "<0.001 %" and pct_text(5e-11, space=True) == "<0.001 %"
    assert pct_text(0.0035) == "0.0035 %" and pct_text(9.996) == "9.996 %"


def test_f16_short_run_warning_in_us_and_a_small_process_in_mb():
    from rooflab.measure_checks import single_run_warning
    from rooflab.probe.gpu.load import GpuProcess

    with pytest.warns(Warning, match="under 100 us"):
        text = single_run_warning("blk", 12e-6, 1)
    assert "one run of 12 us" in text and "about 1 us of clock" in text and "µs" not in text
    assert GpuProcess(1234, 42e6).label() == "pid 1234: 42 MB"     # was '0.0 GB'

"""Audit 18: an ncu metric n/a in some launches of a kernel and a number in others.

Hand numbers: saxpy, three launches of 10 us, each 1,048,576 FFMA (2,097,152 FLOP), 12.6 MB
of L2 and 8 MB of DRAM, except where a launch's metric is written `n/a`.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.ingest.ncu_files import load_ncu

IDENT = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
         '"Block Size","Grid Size","Device","CC"')
HEAD = IDENT + ',"Section Name","Metric Name","Metric Unit","Metric Value"'
FFMA = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"
DFMA = "sm__sass_thread_inst_executed_op_dfma_pred_on.sum"
BASE = [(FFMA, "inst", "1,048,576"), (FFMA.replace("ffma", "fadd"), "inst", "0"),
        (FFMA.replace("ffma", "fmul"), "inst", "0"), ("gpu__time_duration.sum", "usecond", "10"),
        ("lts__t_bytes.sum", "Mbyte", "12.60")]


def _ncu(tmp_path, launches, kernel="saxpy"):
    """A `--page details` CSV of launches of one kernel: [[(metric, unit, value)], ...]."""
    rows = [HEAD]
    for i, values in enumerate(launches):
        rows += [f'"{i}","1","app","h","{kernel}","1","7","(256, 1, 1)","(1024, 1, 1)","0",'
                 f'"8.0","Command line profiler metrics","{m}","{u}","{v}"'
                 for m, u, v in values]
    p = tmp_path / "k.csv"
    p.write_text("\n".join(rows) + "\n")
    return p


def _dram(v):
    return BASE + [("dram__bytes.sum", "Mbyte", v)]


def test_dram_na_in_one_launch_drops_dram_for_the_kernel(tmp_path):
    # old code: DRAM = 16 MB (two launches) over 30 us (three): 0.53 TB/s, a third low
    (k,) = load_ncu([str(_ncu(tmp_path, [_dram("8"), _dram("8"), _dram("n/a")]))]).kernels
    assert "DRAM" not in k.bytes
    assert k.bytes["L2"] == pytest.approx(3 * 12.6e6)
    assert k.seconds == pytest.approx(30e-6) and k.calls == 3
    assert k.flop == {"fp32": 3 * 2 * 1_048_576}
    assert ("dram__bytes.sum not a number (n/a) in 1 of 3 launches (first: launch 2): no "
            "DRAM point") in " ".join(k.meta["notes"])


def test_every_launch_na_keeps_the_one_plain_note(tmp_path):
    (k,) = load_ncu([str(_ncu(tmp_path, [_dram("n/a"), _dram("n/a")]))]).kernels
    assert "DRAM" not in k.bytes and k.bytes["L2"] == 2 * 12.6e6
    assert k.meta["notes"] == ["dram__bytes.sum is not a number (n/a) in the file: no DRAM "
                               "point"]


def test_fp64_na_in_one_launch_drops_fp64_for_the_kernel(tmp_path):
    # old code: fp64 = 2 x 2 x 1000 FLOP from two launches over three launches' time
    fp64 = [BASE + [(DFMA, "inst", v)] for v in ("1,000", "n/a", "1,000")]
    (k,) = load_ncu([str(_ncu(tmp_path, fp64))]).kernels
    assert k.flop == {"fp32": 3 * 2 * 1_048_576}
    assert k.bytes == {"L2": 3 * 12.6e6}
    assert (f"{DFMA} not a number (n/a) in 1 of 3 launches (first: launch 1): no fp64 FLOP "
            "counted") in " ".join(k.meta["notes"])


def test_a_kernel_left_with_no_bytes_is_a_skip_naming_the_metrics(tmp_path):
    # DRAM n/a in launch 0, L2 n/a in launch 1: neither level is known for every launch
    launches = [[*BASE[:-1], ("lts__t_bytes.sum", "Mbyte", "12.60"),
                 ("dram__bytes.sum", "Mbyte", "n/a")],
                [*BASE[:-1], ("lts__t_bytes.sum", "Mbyte", "n/a"),
                 ("dram__bytes.sum", "Mbyte", "8")]]
    p = _ncu(tmp_path, launches)
    rows = p.read_text().splitlines()
    other = [r.replace('"saxpy"', '"copy"').replace('"0","1","app"', '"2","1","app"', 1)
             for r in rows[1:] if r.startswith('"0"')]
    p.write_text("\n".join(rows + other) + "\n")
    imp = load_ncu([str(p)])
    assert [k.name for k in imp.kernels] == ["copy"]
    (skip,) = [str(s) for s in imp.skips]
    assert ("kernel 'saxpy' skipped: no bytes: dram__bytes.sum n/a in launch 0 of this "
            "kernel; lts__t_bytes.sum n/a in launch 1 of this kernel") in skip


def test_no_na_is_summed_as_before(tmp_path):
    (k,) = load_ncu([str(_ncu(tmp_path, [_dram("8"), _dram("8")]))]).kernels
    assert k.bytes == {"DRAM": 16e6, "L2": 25.2e6}
    assert "notes" not in k.meta


def test_the_note_reaches_the_terminal(tmp_path, capsys):
    p = _ncu(tmp_path, [_dram("8"), _dram("n/a")])
    assert main(["ncu", str(p), "--on", "a100"]) == 0
    out = capsys.readouterr().out
    assert "dram__bytes.sum not a number (n/a) in 1 of 2 launches" in out


# 2 x 1,048,576 FLOP over 0.1 MB of DRAM: AI 20.97, above check_ai_high's 4 for an
# elementwise op; 0.21 TFLOP/s in 10 us, far below an A100's 19.5 TFLOP/s fp32 roof, so
# no point is above its roof (the only case the verbs used to warn in).
HIGH_AI = [(FFMA, "inst", "1,048,576"), (FFMA.replace("ffma", "fadd"), "inst", "0"),
           (FFMA.replace("ffma", "fmul"), "inst", "0"), ("gpu__time_duration.sum", "usecond", "10"),
           ("dram__bytes.sum", "Mbyte", "0.1")]


def test_ncu_json_warns_of_an_ai_too_high_like_report(tmp_path, capsys):
    p = _ncu(tmp_path, [HIGH_AI], kernel="void elementwise_add(float*, float const*, int)")
    assert main(["ncu", str(p), "--on", "a100", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (k,) = doc["kernels"]
    assert (k["flop"], k["bytes"]) == ({"fp32": 2 * 1_048_576}, {"DRAM": 1e5})
    (line,) = doc["read_with_care"]
    assert line.startswith("1 kernel(s) have an AI too high for their op: elementwise_add "
                           "(AI 21")


def test_ncu_terminal_warns_of_an_ai_too_high(tmp_path, capsys):
    p = _ncu(tmp_path, [HIGH_AI], kernel="void elementwise_add(float*, float const*, int)")
    assert main(["ncu", str(p), "--on", "a100"]) == 0
    assert "read with care: 1 kernel(s) have an AI too high" in capsys.readouterr().out


def test_a_gemm_at_the_same_ai_is_no_warning(tmp_path, capsys):
    p = _ncu(tmp_path, [HIGH_AI], kernel="void gemm_kernel(float*)")
    assert main(["ncu", str(p), "--on", "a100", "--json"]) == 0
    assert "read_with_care" not in json.loads(capsys.readouterr().out)

"""ncu CSV parsing on synthetic files written from the real metric names (both pages)."""

from __future__ import annotations

import math

import pytest

from rooflab.errors import ParseError
from rooflab.ingest.aggregate import short_name
from rooflab.ingest.ncu_files import load_ncu
from rooflab.ingest.ncu_metrics import launch_counts, recorded_peaks
from rooflab.ingest.ncu_numbers import parse_number, unit_scale

IDENT = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
         '"Block Size","Grid Size","Device","CC"')
RULES = '"Rule Name","Rule Type","Rule Description","Estimated Speedup Type","Estimated Speedup"'
DETAILS_HEAD = IDENT + ',"Section Name","Metric Name","Metric Unit","Metric Value"'
INST = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"


def ident(i, name="saxpy(float, float *, float *)", cc="8.0"):
    return (f'"{i}","4242","app","host","{name}","1","7","(256, 1, 1)","(4096, 1, 1)",'
            f'"0","{cc}"')


def details_rows(i, values, name="saxpy(float, float *, float *)", rules=False, cc="8.0"):
    tail = ',"","","","",""' if rules else ""
    return [f'{ident(i, name, cc)},"Command line profiler metrics","{m}","{u}","{v}"{tail}'
            for m, u, v in values]


BASIC = [("dram__bytes.sum", "Mbyte", "12.58"),          # auto-scaled unit
         ("lts__t_bytes.sum", "Mbyte", "25.17"),
         ("l1tex__t_bytes.sum", "byte", "50,331,648"),   # thousands separators
         ("gpu__time_duration.sum", "usecond", "10.24"),
         (INST.format("ffma"), "inst", "1,048,576"),
         (INST.format("fadd"), "inst", "0"),
         (INST.format("fmul"), "inst", "0")]


def write(tmp_path, name, lines):
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return str(p)


def test_units_and_numbers():
    assert unit_scale("Kbyte") == 1e3 and unit_scale("Mbyte") == 1e6
    assert unit_scale("usecond") == 1e-6 and unit_scale("msecond") == 1e-3
    assert unit_scale("nsecond") == 1e-9 and unit_scale("ns") == 1e-9
    assert unit_scale("Gcycle/second") == 1e9 and unit_scale("cycle/nsecond") == pytest.approx(1e9)
    assert unit_scale("hz") == 1 and unit_scale("Ghz") == 1e9
    assert unit_scale("Tbyte/second") == 1e12 and unit_scale("byte/cycle") == 1
    assert unit_scale("inst") == 1 and unit_scale("") == 1
    assert unit_scale("furlong") is None
    assert parse_number("1,619,726,202.90") == 1619726202.9
    assert math.isnan(parse_number("nan")) and math.isnan(parse_number("n/a"))
    with pytest.raises(ValueError):
        parse_number("abc")


def test_details_page_with_preamble_rules_and_two_launches(tmp_path):
    lines = ["program output before the header", "==PROF== Connected to process 4242 (app)",
             "==WARNING== something", DETAILS_HEAD + "," + RULES]
    lines += details_rows(0, BASIC, rules=True)
    lines += details_rows(1, BASIC, rules=True)
    # a rule-only row of newer ncu versions: no metric on it
    lines.append(f'{ident(1)},"SpeedOfLight","","","","SOLBottleneck","OPT","low","global","3"')
    lines.append("==PROF== Disconnected from process 4242")
    imp = load_ncu([write(tmp_path, "a.csv", lines)])
    (k,) = imp.kernels
    assert k.name == "saxpy" and k.calls == 2 and k.meta["full_name"].startswith("saxpy(")
    assert k.flop == {"fp32": pytest.approx(2 * 2 * 1_048_576)}
    assert k.bytes["DRAM"] == pytest.approx(2 * 12.58e6)
    assert k.bytes["L1"] == pytest.approx(2 * 50_331_648)
    assert k.seconds == pytest.approx(2 * 10.24e-6)
    assert k.samples == pytest.approx((10.24e-6, 10.24e-6))
    assert k.provenance == {"flop": "counted", "bytes": "counted", "seconds": "measured"}
    assert imp.skips == ()


def test_raw_page_with_units_row_and_cycles_time(tmp_path):
    metrics = ["dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
               "sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second",
               INST.format("dadd"), INST.format("dmul"), INST.format("dfma"),
               "launch__grid_size"]
    head = IDENT + "," + ",".join(f'"{m}"' for m in metrics)
    units = ",".join(['""'] * 11) + ',"Kbyte","Kbyte","Mbyte","Mcycle","Gcycle/second",' \
                                    '"inst","inst","inst",""'
    row = ident(0, "void k<double, 4>(double *)") + \
        ',"800","200","3","2","1.5","1,000","2,000","3,000","64"'
    imp = load_ncu([write(tmp_path, "raw.csv", ["==PROF== x", head, units, row])])
    (k,) = imp.kernels
    assert k.name == "k<…>"
    assert k.flop == {"fp64": pytest.approx(1000 + 2000 + 2 * 3000)}
    assert k.bytes == {"DRAM": pytest.approx(1e6), "L2": pytest.approx(3e6)}
    assert k.seconds == pytest.approx(2e6 / 1.5e9)


def test_bad_rows_are_skipped_with_file_line_and_reason(tmp_path):
    good = details_rows(0, BASIC)
    nan_launch = details_rows(1, [(m, u, "nan") for m, u, _ in BASIC])
    zero_time = details_rows(2, [(m, u, "0" if "time" in m else v) for m, u, v in BASIC])
    unknown = details_rows(0, [("smsp__warps_active.avg", "warp", "12")])
    bad_unit = details_rows(0, [("dram__bytes_read.sum", "furlong", "1")])
    not_number = details_rows(0, [("lts__t_bytes.sum", "byte", "lots")])
    cut = [good[0][:40]]
    lines = [DETAILS_HEAD] + good + nan_launch + zero_time + unknown + bad_unit + not_number + cut
    path = write(tmp_path, "bad.csv", lines)
    imp = load_ncu([path])
    assert [k.calls for k in imp.kernels] == [1]
    text = "\n".join(str(s) for s in imp.skips)
    assert f"{path}:{2 + len(good)}: launch 1 of 'saxpy' skipped: every metric is nan" in text
    assert "launch 2 of 'saxpy' skipped: zero time" in text
    assert "metric 'smsp__warps_active.avg' is not used by rooflab" in text
    assert "unknown unit 'furlong'" in text
    assert "value 'lots' is not a number" in text
    assert f"{path}:{len(lines)}: row has" in text and "file cut short" in text


def test_nothing_usable_is_a_parse_error(tmp_path):
    empty = write(tmp_path, "empty.csv", ["==PROF== nothing was profiled"])
    with pytest.raises(ParseError, match="no ncu CSV header"):
        load_ncu([empty])
    nan = write(tmp_path, "nan.csv", [DETAILS_HEAD] + details_rows(
        0, [(m, u, "nan") for m, u, _ in BASIC]))
    with pytest.raises(ParseError, match="no usable kernel launch.*failed launch"):
        load_ncu([nan])
    no_cols = write(tmp_path, "cols.csv", ['"ID","Kernel Name","Metric Name"', '"0","k","x"'])
    with pytest.raises(ParseError, match="Metric Unit, Metric Value"):
        load_ncu([no_cols])
    # A time metric collected but nan: the launch cannot be trusted (without any time
    # metric the kernel is kept untimed: tests/test_seed_passages.py).
    nan_time = write(tmp_path, "nantime.csv", [DETAILS_HEAD] + details_rows(
        0, [(m, u, "nan" if "time" in m else v) for m, u, v in BASIC]))
    with pytest.raises(ParseError, match="no time"):
        load_ncu([nan_time])
    with pytest.raises(ParseError, match="file not found"):
        load_ncu([str(tmp_path / "missing.csv")])


def test_several_files_are_steps_and_a_failed_file_is_reported(tmp_path):
    a = write(tmp_path, "step0.csv", [DETAILS_HEAD] + details_rows(0, BASIC))
    b = write(tmp_path, "step1.csv", [DETAILS_HEAD] + details_rows(0, BASIC))
    bad = write(tmp_path, "step2.csv", [DETAILS_HEAD] + details_rows(
        0, [(m, u, "nan") for m, u, _ in BASIC]))
    imp = load_ncu([a, b, bad])
    assert sorted(k.meta["step"] for k in imp.kernels) == ["step0", "step1"]
    assert sorted(k.name for k in imp.kernels) == ["saxpy [step0]", "saxpy [step1]"]
    assert [s.path for s in imp.failed] == [bad]


def test_tensor_flop_from_ops_path_else_factor_with_note():
    m = {"gpu__time_duration.sum": 1e-3, "dram__bytes.sum": 1e6,
         "sm__ops_path_tensor_src_fp16_dst_fp32.sum": 4e9,
         "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum": 1e9,
         "sm__inst_executed_pipe_tensor.sum": 123.0}
    c = launch_counts(m, (8, 0))
    assert c.flop == {"fp16": 4e9, "bf16": 1e9} and c.tensor_flop == 5e9
    assert "sm__ops_path_tensor_*" in c.notes[0]
    m2 = {"gpu__time_duration.sum": 1e-3, "dram__bytes.sum": 1e6,
          "sm__inst_executed_pipe_tensor.sum": 1000.0}
    c2 = launch_counts(m2, (8, 9))
    # Ada (CC 8.9) HMMA.16816: 2 x 16 x 8 x 16 = 4096 FLOP per warp instruction
    assert c2.flop == {"fp16": 4_096_000.0}
    assert "x 4096" in c2.notes[0]
    c3 = launch_counts(m2, (9, 0))   # no factor for Hopper: not counted, and said so
    assert "fp16" not in c3.flop and "no factor" in c3.notes[0]


def test_fp16_uses_nvidia_packed_weights():
    m = {"gpu__time_duration.sum": 1.0, "dram__bytes.sum": 1.0, INST.format("hadd"): 1.0,
         "sm__" + INST.format("hmul")[4:]: 1.0, INST.format("hfma"): 1.0}
    assert launch_counts(m).flop == {"fp16": 2 + 2 + 4}


def test_recorded_peaks_formula():
    m = {INST.format("dfma") + ".peak_sustained": 48.0,
         "sm__cycles_elapsed.avg.per_second": 1.62e9,
         "dram__bytes.sum.peak_sustained": 32.0, "dram__cycles_elapsed.avg.per_second": 8e9}
    compute, memory = recorded_peaks(m)
    assert compute == {"fp64": pytest.approx(2 * 48 * 1.62e9)}
    assert memory == {"DRAM": pytest.approx(32 * 8e9)}


def test_short_name():
    assert short_name("void cutlass::Kernel<cutlass::gemm::kernel::Gemm<float, 4>>"
                      "(cutlass::Params)") == "cutlass::Kernel<…>"
    assert short_name("(anonymous namespace)::softmax_kernel(float *, int)") == "softmax_kernel"
    assert short_name("sigma_gpp_gpu_29") == "sigma_gpp_gpu_29"
    assert len(short_name("x" * 200)) == 60


def test_roof_from_catalog_by_device_name_in_raw_page(tmp_path):
    from rooflab.ingest.profile_import import choose_roof

    metrics = ["device__attribute_display_name", "dram__bytes.sum", "gpu__time_duration.sum",
               INST.format("ffma")]
    head = IDENT + "," + ",".join(f'"{m}"' for m in metrics)
    units = ",".join(['""'] * 11) + ',"","byte","nsecond","inst"'
    row = ident(0, "copy") + ',"NVIDIA H200","1,000,000","500","10"'
    imp = load_ncu([write(tmp_path, "h200.csv", [head, units, row])])
    assert imp.devices == ("NVIDIA H200",)
    choice = choose_roof(None, imp)
    assert "catalog entry matched by the device name 'NVIDIA H200'" in choice.source
    assert choice.roof.find_memory("DRAM").value == 4.8e12
    assert imp.kernels[0].seconds == pytest.approx(500e-9)


def test_cli_bad_inputs_say_error_and_exit_2(tmp_path, capsys):
    from rooflab.cli.main import main

    good = write(tmp_path, "a.csv", [DETAILS_HEAD] + details_rows(0, BASIC))
    assert main(["ncu", good, "-o", str(tmp_path / "x.txt")]) == 2
    assert "unknown suffix '.txt'" in capsys.readouterr().err
    assert main(["ncu", good, "--level", "L9"]) == 2
    assert "--level L9: use one of" in capsys.readouterr().err
    assert main(["ncu", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    pytest.importorskip("ncu_report")
    junk = tmp_path / "junk.ncu-rep"
    junk.write_bytes(b"not a report")
    assert main(["ncu", str(junk)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no profiled kernel launch" in err


# --- per-source tensor totals (review 12b, G) ---------------------------------------------

def test_per_source_tensor_metrics_are_counted_at_their_precision():
    # sm__ops_path_tensor_src_fp64 / _src_int8 / _src_fp16 have no _dst_ part (NVIDIA's
    # per-source totals; NERSC's roofline scripts collect src_fp64, src_int8, src_int4):
    # an A100 DGEMM at 15e9 DMMA FLOP in 1 ms is 15 TFLOP/s fp64 tensor, not 8x that as fp16
    base = {"gpu__time_duration.sum": 1e-3, "dram__bytes.sum": 1e8,
            "sm__inst_executed_pipe_tensor.sum": 29_296_875.0}
    c = launch_counts({**base, "sm__ops_path_tensor_src_fp64.sum": 15e9}, (8, 0))
    assert c.flop == {"fp64": 15e9} and c.tensor_flop == 15e9
    c = launch_counts({**base, "sm__ops_path_tensor_src_int8.sum": 4e11}, (8, 0))
    assert c.flop == {"int8": 4e11}
    c = launch_counts({**base, "sm__ops_path_tensor_src_fp16.sum": 6e11}, (9, 0))
    assert c.flop == {"fp16": 6e11}
    assert not any("x 4096" in n or "no factor" in n for n in c.notes)


def test_tensor_total_and_its_splits_are_not_added_together():
    # the per-source total, its per-destination parts and their sparsity splits may all be
    # collected: one MMA must count once (6e11, not 6e11 + 4e11 + 2e11 + 4e11)
    m = {"gpu__time_duration.sum": 1e-3, "dram__bytes.sum": 1e8,
         "sm__ops_path_tensor_src_fp16.sum": 6e11,
         "sm__ops_path_tensor_src_fp16_dst_fp32.sum": 4e11,
         "sm__ops_path_tensor_src_fp16_dst_fp16.sum": 2e11,
         "sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_off.sum": 4e11}
    assert launch_counts(m, (9, 0)).flop == {"fp16": 6e11}
    # without the total: the destinations add up; a sparsity split stands in for a plain one
    m = {"gpu__time_duration.sum": 1e-3, "dram__bytes.sum": 1e8,
         "sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off.sum": 3e11,
         "sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_on.sum": 1e11,
         "sm__ops_path_tensor_src_fp8_dst_fp16.sum": 2e11,
         "sm__ops_path_tensor_src_fp8_dst_fp32.sum": 5e11}
    assert launch_counts(m, (9, 0)).flop == {"bf16": 4e11, "fp8": 7e11}


def test_binary_tensor_ops_are_said_not_counted():
    m = {"gpu__time_duration.sum": 1e-3, "dram__bytes.sum": 1e8,
         "sm__inst_executed_pipe_tensor.sum": 1000.0,
         "sm__ops_path_tensor_src_int1.sum": 8e12}
    c = launch_counts(m, (8, 0))
    assert c.flop == {} and c.tensor_flop == 0.0       # not 4.1e6 "fp16" from the factor
    assert any("int1 tensor ops" in n and "not counted" in n for n in c.notes)


def test_recorded_tensor_peaks_per_source_and_dense():
    clock = 1.5e9
    m = {"sm__cycles_elapsed.avg.per_second": clock,
         "sm__ops_path_tensor_src_fp64.sum.peak_sustained": 1024.0,
         "sm__ops_path_tensor_src_fp16_dst_fp32.sum.peak_sustained": 4096.0,     # sparse
         "sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_off.sum.peak_sustained": 2048.0,
         "sm__ops_path_tensor_src_int8_sparsity_on.sum.peak_sustained": 8192.0}
    compute, _ = recorded_peaks(m)
    assert compute["fp64:tensor"] == 1024.0 * clock
    assert compute["fp16:tensor"] == 2048.0 * clock     # the dense peak, not the sparse one
    assert "int8:tensor" not in compute

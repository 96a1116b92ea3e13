"""Integer throughput is printed in OP/s (TOPS), float throughput in FLOP/s (review 10,
finding 11). NVIDIA's A100 datasheet: int8 tensor 624 TOPS, int4 1248 TOPS, fp16 tensor
312 TFLOP/s. The JSON keys (flop_per_s) stay: integer ops are counted as FLOP are."""

import rooflab
from rooflab.cli.main import main
from rooflab.hardware.profile import MachineProfile
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.diagnose import diagnose
from rooflab.report.tables import profile_rows
from rooflab.units import fmt_rate, rate_unit

N = 4096


def test_rate_unit_by_precision():
    assert [rate_unit(p) for p in ("int8", "int4", "int32")] == ["OP/s"] * 3
    assert [rate_unit(p) for p in ("fp64", "fp16", "bf16", "fp8", None)] == ["FLOP/s"] * 5
    assert fmt_rate(624e12, "int8") == "624 TOP/s"
    assert fmt_rate(1248e12, "int4") == "1.25 POP/s"
    assert fmt_rate(312e12, "fp16") == "312 TFLOP/s"


def _run(capsys, *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_specs_show_a100_int8_in_tops(capsys):
    out = _run(capsys, "specs", "show", "A100")
    assert "624 TOP/s" in out                  # int8 tensor, datasheet 624 TOPS
    assert "1.25 POP/s" in out                 # int4 tensor, 1248 TOPS
    assert "624 TFLOP/s" not in out.split("compute ceilings")[1]
    assert "312 TFLOP/s" in out                # fp16 tensor stays FLOP/s
    assert "19.5 TFLOP/s" in out               # fp32 vector


def test_specs_compare_labels_each_cell_by_its_precision(capsys):
    out = _run(capsys, "specs", "compare", "A100", "H100")
    int8 = next(line for line in out.splitlines() if "int8 tensor" in line)
    assert "624 TOP/s" in int8 and "FLOP/s" not in int8
    fp16 = next(line for line in out.splitlines() if "fp16 tensor" in line)
    assert "312 TFLOP/s" in fp16


def _cpu_profile() -> MachineProfile:
    # Zen 4, 2 cores at 3.69 GHz: fp64 16 FLOP/cycle/core = 118 GFLOP/s; int8 VNNI 4x fp32
    # (2x fp64) = 128 ops/cycle/core = 2 x 3.69e9 x 128 = 944.6 GOP/s.
    ghz, cores = 3.69e9, 2
    nominal = Roof("Zen 4 (derived)", compute=(
        Ceiling(cores * ghz * 16, "fp64", "vector", provenance="derived"),
        Ceiling(cores * ghz * 128, "int8", "vector", provenance="derived")),
        memory=(Ceiling(50e9, level="DRAM"),))
    measured = Roof("probe", kind="measured", compute=(
        Ceiling(112e9, "fp64", "vector", provenance="measured"),
        Ceiling(900e9, "int8", "vector", provenance="measured")),
        memory=(Ceiling(36.2e9, level="DRAM", provenance="measured"),))
    return MachineProfile(host={"name": "zen4"}, nominal=nominal, measured=measured)


def test_cpu_probe_table_int8_row_in_ops():
    rows = {r.quantity: r.cells() for r in profile_rows(_cpu_profile())}
    assert rows["int8 vector peak"][1:4] == ("945 GOP/s", "900 GOP/s", "95 %")
    assert rows["fp64 vector peak"][1:3] == ("118 GFLOP/s", "112 GFLOP/s")


def _gemm(precision: str, unit: str, rate: float) -> rooflab.Kernel:
    flop = 2 * N**3
    size = {"fp16": 2, "int8": 1}[precision]
    return rooflab.Kernel(f"gemm_{precision}", flop={precision: flop},
                          bytes={"DRAM": 3 * size * N * N}, seconds=flop / rate, unit=unit)


def test_report_names_integer_math_in_pops():
    a100 = rooflab.load_roof("A100")
    d = diagnose(rooflab.analyze(a100, [_gemm("fp16", "tensor", 250e12)]))[0]
    roof = next(x for x in d.distances if x.name == "roof")
    assert "Integer math (int4 tensor, 1.25 POP/s) goes higher still" in roof.words
    assert "312 TFLOP/s" in roof.words        # the fp16 kernel's own ceiling stays FLOP/s


def test_int8_kernel_rates_in_ops_float_in_flops():
    a100 = rooflab.load_roof("A100")
    analysis = rooflab.analyze(a100, [_gemm("int8", "tensor", 500e12),
                                      _gemm("fp16", "tensor", 250e12)])
    words = {d.point.kernel: d.evidence for d in diagnose(analysis)}
    # N = 4096 int8: AI 2N/3 = 2731 > ridge 624/2.039 = 306: held at 624 TOP/s
    assert "held by int8 tensor at 624 TOP/s; achieved 500 TOP/s" in words["gemm_int8"]
    assert "held by fp16 tensor at 312 TFLOP/s; achieved 250 TFLOP/s" in words["gemm_fp16"]

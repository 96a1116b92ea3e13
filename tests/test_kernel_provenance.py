"""Audit 10, loose ends: measuring.py split, rooflab.workloads.ops after `import rooflab`,
provenance of hand-built kernels, Skymont E-cores, change_precision's element size and unit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import rooflab
from rooflab.hardware.cpu_arch import INTEL_E_CORES, get_arch
from rooflab.hardware.cpu_detect import detect_microarch, e_core_arch
from rooflab.hardware.cpu_nominal import hybrid_nominal_roof
from rooflab.model import Ceiling, Kernel, Roof
from rooflab.model.schema import kernel_from_dict
from rooflab.model.whatif import change_precision

SRC = Path(rooflab.__file__).resolve().parent
HEAVY = ("torch", "matplotlib", "numba", "plotly")


# --- 1. measuring.py split along its seams --------------------------------------------------

def test_measuring_modules_stay_small_and_keep_their_names():
    for name in ("measuring", "measure_checks", "measure_clocks", "measure_counts",
                 "measure_runs"):
        assert len((SRC / f"{name}.py").read_text().splitlines()) <= 400, name
    import rooflab.measuring as m

    # its own names and the two docs/python.md imports from here (collect, CountWarning);
    # the split-off ones are imported from their modules (review r1 F4)
    for name in ("measure", "timed_kernel", "resolve_plan", "settled_call", "times_warning",
                 "TimingWarning", "Measurement", "warn_number_precision", "PLANS",
                 "SECONDS_STAT", "collect", "CountWarning"):
        assert hasattr(m, name), name
    assert rooflab.measure is m.measure


# --- 2. rooflab.workloads.ops after a plain `import rooflab` --------------------------------

def test_workloads_ops_is_reachable_after_import_rooflab_and_loads_nothing_heavy():
    code = (
        "import sys, rooflab\n"
        f"heavy = {HEAVY!r}\n"
        "loaded = lambda: sorted(m for m in sys.modules if m.split('.')[0] in heavy)\n"
        "assert loaded() == [], loaded()\n"
        "c = rooflab.workloads.ops.matmul(4096, 4096, 4096, 'fp16')\n"
        "assert abs(c.flop / c.bytes - 4096 / 3) < 1e-6\n"
        "assert rooflab.workloads.llm.load_config is not None\n"
        "assert 'ops' in dir(rooflab.workloads) and 'workloads' in dir(rooflab)\n"
        "assert loaded() == [], loaded()\n"
        "print('ok')\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ok"


def test_an_unknown_attribute_is_still_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        rooflab.workloads.nope  # noqa: B018
    with pytest.raises(AttributeError):
        rooflab.nope  # noqa: B018


# --- 3. provenance of hand-built and file kernels -------------------------------------------

def test_a_hand_built_kernel_says_where_its_numbers_came_from():
    k = rooflab.Kernel("x", flop=2e9, bytes=1.2e7, seconds=1e-3)
    # its bare FLOP number is fp32 by default: assumed, not given (review s18 r8 F6)
    assert dict(k.provenance) == {"flop": "given", "bytes": "given", "seconds": "measured",
                                  "precision": "assumed"}
    # as a CSV kernel file's row says
    from rooflab.ingest.kernelfile import kernels_from_csv

    (row,) = kernels_from_csv("name,flop,bytes,seconds\nx,2e9,1.2e7,1e-3\n")
    # ... and the file, having no precision column, says its fp32 was assumed (review r1 F3)
    assert dict(row.provenance) == dict(k.provenance)


def test_only_numbers_present_get_a_default_and_the_callers_words_stay():
    untimed = rooflab.Kernel("copy", bytes={"DRAM": 8e6})
    assert dict(untimed.provenance) == {"bytes": "given"}
    k = rooflab.Kernel("mm", flop={"fp16": 1e9}, bytes=1e6, seconds=1e-3,
                       provenance={"flop": "derived"})
    assert dict(k.provenance) == {"flop": "derived", "bytes": "given", "seconds": "measured"}
    assert dict(k.with_(name="mm2").provenance) == dict(k.provenance)
    assert dict(rooflab.Kernel("empty").provenance) == {}


def test_a_json_kernel_without_provenance_reads_like_a_hand_built_one():
    k = kernel_from_dict({"name": "x", "flop": 2e9, "bytes": 1.2e7, "seconds": 1e-3})
    assert dict(k.provenance) == {"flop": "given", "bytes": "given", "seconds": "measured"}
    k = kernel_from_dict({"name": "x", "flop": 2e9, "bytes": 1.2e7, "seconds": 1e-3,
                          "provenance": {"flop": "counted", "bytes": "counted"}})
    assert dict(k.provenance) == {"flop": "counted", "bytes": "counted", "seconds": "measured"}


def test_report_json_on_saved_kernels_shows_the_same_provenance(tmp_path, capsys):
    from rooflab.cli.main import main

    k = rooflab.Kernel("x", flop=2e9, bytes=1.2e7, seconds=1e-3)
    path = tmp_path / "k.json"
    rooflab.save_kernels(str(path), [k])
    assert main(["report", str(path), "--on", "T4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kernels"][0]["provenance"] == dict(k.provenance)


# --- 4. Skymont E-cores -----------------------------------------------------------------------

@pytest.mark.parametrize("model,name", [(0xBD, "Core Ultra 7 258V"),     # Lunar Lake
                                        (0xC6, "Core Ultra 9 285K")])    # Arrow Lake-S
def test_lunar_and_arrow_lake_e_cores_are_skymont(model, name):
    assert INTEL_E_CORES[model] == "Skymont (E-core)"
    e = e_core_arch("GenuineIntel", 6, model, frozenset({"avx2", "fma", "avx_vnni"}))
    assert e.name == "Skymont (E-core)" and e.vendor == "Intel"
    # 4 x 128-bit FMA pipes (Chips and Cheese, Intel): 2 lanes x 4 x 2 = 16 fp64 FLOP/cycle,
    # twice Crestmont's 8, and as many as a P-core running AVX2 on 2 x 256-bit pipes.
    assert e.fp64_flop_per_cycle == 16 and e.fp32_flop_per_cycle == 32
    assert get_arch("Crestmont (E-core)").fp64_flop_per_cycle == 8
    p = detect_microarch("GenuineIntel", 6, model, frozenset({"avx2", "fma"}),
                         f"Intel(R) {name}")
    assert p.name == "Golden Cove/Raptor Cove (client)"


def test_arrow_lake_nominal_counts_skymont_at_its_own_rate():
    # i9-285K: 8 P (16 fp64 FLOP/cycle) at 5.0 GHz + 16 Skymont (16 FLOP/cycle) at 4.0 GHz
    # = 640 + 1024 = 1664 GFLOP/s fp64.
    p = get_arch("Golden Cove/Raptor Cove (client)")
    roof = hybrid_nominal_roof("285K", 8, 5.0, p, 16, 4.0, get_arch("Skymont (E-core)"), "")
    assert roof.find_compute("fp64").value == pytest.approx(1664e9)


@pytest.mark.parametrize("model", [0xC5, 0xB5, 0xCC, 0xDD])
def test_e_cores_without_a_sourced_design_stay_unknown(model):
    # Arrow Lake-H (SoC-tile low-power E-cores beside Skymont), Arrow Lake-U, Panther Lake and
    # Clearwater Forest (Darkmont: its FP pipes are not in a source found here).
    assert e_core_arch("GenuineIntel", 6, model) is None


# --- 5. change_precision: the element size from meta, the unit of matrix kernels ----------

ROOF = Roof("G", compute=(Ceiling(1e12, precision="fp32", unit="vector"),
                          Ceiling(2e12, precision="fp16", unit="vector"),
                          Ceiling(8e12, precision="fp16", unit="tensor")),
            memory=(Ceiling(1e11, level="DRAM"),))


def test_an_int64_kernel_scales_from_8_byte_elements():
    # int64 data, FLOP counted as int32 (units.flop_precision): to fp32 halves the bytes.
    # The old code took 4 bytes from the FLOP precision and left them unchanged.
    k = Kernel("index_add", {"int32": 1e6}, {"DRAM": 8e6},
               meta={"op": "elementwise", "shape": {"n": 1e6, "dtype": "int64"}})
    new = change_precision(ROOF, [k], "fp32").moves[0][1]
    assert new.bytes["DRAM"] == pytest.approx(4e6)
    assert new.meta["shape"]["dtype"] == "fp32"


def test_a_complex_kernel_stays_complex():
    # bench/zoo's FFT: complex128 (16 B) counted as fp64 FLOP. In single precision it is
    # complex64 (8 B): bytes halve and meta names complex64, not a real fp32.
    k = Kernel("fft", {"fp64": 5e6}, {"DRAM": 3.2e6},
               meta={"op": "fft", "shape": {"n": 1e5, "dtype": "complex128"}})
    new = change_precision(ROOF, [k], "fp32").moves[0][1]
    assert new.bytes["DRAM"] == pytest.approx(1.6e6)
    assert new.meta["shape"]["dtype"] == "complex64"


def test_a_matmul_moved_to_fp16_runs_on_tensor_units_an_elementwise_one_does_not():
    mm = Kernel("gemm", {"fp32": 2e9}, {"DRAM": 1.2e7}, seconds=4e-3, unit="vector",
                meta={"op": "matmul", "shape": {"m": 1000, "n": 1000, "k": 1000,
                                                "dtype": "fp32"}})
    add = Kernel("add", {"fp32": 1e6}, {"DRAM": 1.2e7}, seconds=2e-4, unit="vector",
                 meta={"op": "elementwise"})
    w = change_precision(ROOF, [mm, add], "fp16")
    new_mm, new_add = (new for _, new in w.moves)
    assert new_mm.unit == "tensor" and new_add.unit == "vector"
    units = {p.kernel: p.unit for p in w.after.primary()}
    assert units == {"gemm": "tensor", "add": "vector"}


def test_a_tensor_matmul_moved_where_the_roof_has_no_tensor_units_is_noted_as_train_does():
    # s36 T: the unit stays "tensor" (train and llm write their GEMMs so in every dtype), and
    # the roof stands fp32 vector (1 TFLOP/s) in for the missing fp32 tensor ceiling, saying
    # so, as `train --dtype fp32` does; it had dropped the unit and the note
    mm = Kernel("gemm", {"fp16": 2e9}, {"DRAM": 6e6}, unit="tensor", meta={"op": "matmul"})
    new = change_precision(ROOF, [mm], "fp32").moves[0][1]
    assert new.unit == "tensor"
    (point,) = change_precision(ROOF, [mm], "fp32").after.primary()
    assert point.unit == "vector"
    assert point.note == "roof 'G' has no fp32 tensor ceiling; using fp32 vector"

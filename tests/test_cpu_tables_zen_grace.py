"""Review 11a F-L3, F-L5, F-L6 and a name gap: what the probe table's n counts, the bench
table's best-sample ratio beside the median's, Zen's FADD pipes beside the FMA-only derived
peak, and 'Grace CPU Superchip' finding the two-socket entry."""

from __future__ import annotations

import pytest
from rich.console import Console

from rooflab.bench import table as bench_table
from rooflab.bench.check import check_floors
from rooflab.bench.table import zoo_rows, zoo_table
from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup
from rooflab.hardware.cpu_arch import get_arch
from rooflab.hardware.profile import MachineProfile
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel
from rooflab.model.sanity import check_analysis
from rooflab.report import tables as report_tables
from rooflab.report.tables import derived_note, profile_table


def _printed(table, width: int = 80) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(table)
    return console.export_text()


# --- F-L5: the n column says what it counts ---------------------------------------------
def _probe_profile(samples: bool) -> MachineProfile:
    # a --quick probe: 5 samples of the one DRAM working set, 148 of the fp64 FMA kernel
    dram = (53.1e9, 53.6e9, 52.0e9, 53.0e9, 53.2e9) if samples else ()
    fp64 = tuple(117.9e9 - i * 1e7 for i in range(148)) if samples else ()
    measured = Roof("EPYC measured", "measured",
                    compute=(Ceiling(117.9e9, precision="fp64", unit="vector",
                                     provenance="measured", samples=fp64),),
                    memory=(Ceiling(53.6e9, level="DRAM", provenance="measured",
                                    samples=dram),))
    return MachineProfile(host={"name": "AMD EPYC"}, measured=measured)


def test_probe_table_says_what_n_counts_within_80_columns():
    text = _printed(profile_table(_probe_profile(samples=True)))
    rows = {line.split("│")[1].strip(): line.split("│")[-2].strip()
            for line in text.splitlines() if line.startswith("│")}
    assert rows["DRAM bandwidth"] == "5" and rows["fp64 vector peak"] == "148"
    flat = " ".join(text.split())
    assert ("n: samples behind the measured value, of the chosen point only (one working "
            "set, one kernel), not of the whole sweep") in flat
    assert flat.count(report_tables.SAMPLES_NOTE.split(",")[0]) == 1
    assert max(len(line) for line in text.splitlines()) <= 80


def test_no_samples_no_n_note():
    text = _printed(profile_table(_probe_profile(samples=False)))
    assert "n: samples" not in " ".join(text.split())


# --- F-L6: % of roof is median vs best-sample ceilings; best/floor beside it ---------------
def _gemv_analysis():
    # the demo's gemv_fp64 (review 11a): 4096^2 fp64 matrix, 2 FLOP and 8 B per element;
    # median 8.45 ms, best 7.07 ms, on DRAM 37.5 GB/s and fp64 117 GFLOP/s
    roof = Roof("demo measured", "measured",
                compute=(Ceiling(117e9, precision="fp64", unit="vector", provenance="measured"),),
                memory=(Ceiling(37.5e9, level="DRAM", provenance="measured"),))
    n = 4096
    k = Kernel("gemv_fp64", flop={"fp64": 2 * n * n}, bytes={"DRAM": 8 * n * n},
               seconds=8.45e-3, samples=(7.07e-3, 8.45e-3, 8.6e-3),
               meta={"best_s": 7.07e-3, "iqr_rel": 0.01})
    return analyze(roof, list(check_floors(roof, (k,))))


def test_bench_rows_and_table_give_the_best_sample_ratio():
    analysis = _gemv_analysis()
    floor = 8 * 4096**2 / 37.5e9                      # 134.2 MB / 37.5 GB/s = 3.579 ms
    (row,) = zoo_rows(analysis)
    assert row["floor_ratio"] == pytest.approx(8.45e-3 / floor)          # 2.361
    assert row["best_floor_ratio"] == pytest.approx(7.07e-3 / floor)     # 1.975
    assert row["percent_of_roof"] == pytest.approx(100 * floor / 8.45e-3, rel=1e-3)  # 42 %
    text = _printed(zoo_table(analysis), width=200)
    line = next(ln for ln in text.splitlines() if "gemv_fp64" in ln)
    assert "2.36x" in line and "1.98x" in line and "42 %" in line
    assert "best/floor" in text
    flat = " ".join(text.split())
    assert bench_table.TIME_NOTE in flat
    assert ("% of roof and measured/floor use the kernel's median time, against ceilings "
            "that are each a best sample") in flat
    assert max(len(ln) for ln in text.splitlines()) <= 130   # ~120 before, one column more


def test_an_untimed_kernel_shows_no_best_ratio_and_no_note():
    roof = Roof("r", "nominal", compute=(Ceiling(1e11, precision="fp64"),),
                memory=(Ceiling(1e10, level="DRAM"),))
    k = Kernel("given", flop={"fp64": 1e9}, bytes={"DRAM": 1e9}, seconds=0.2)
    analysis = analyze(roof, list(check_floors(roof, (k,))))
    assert zoo_rows(analysis)[0]["best_floor_ratio"] is None
    text = _printed(zoo_table(analysis), width=200)
    assert "2.00x" in text and "best with best" not in text   # 0.2 s / (1e9 / 1e10)


# --- F-L3: Zen's FADD pipes beside the FMA-only derived peak ---------------------------------
def test_zen_add_pipes_headroom():
    for name in ("Zen 2", "Zen 3", "Zen 4"):
        arch = get_arch(name)
        # 2 x 256-bit FMA = 16 fp64 FLOP/cycle; + 2 x 256-bit FADD = 8 more: 24 / 16
        assert arch.fp64_flop_per_cycle == 16 and arch.add_headroom == pytest.approx(1.5)
    assert get_arch("Ice Lake-SP").add_pipes_note is None


def test_derived_note_mentions_zen_fadd_pipes_only_on_zen():
    epyc = MachineProfile(host={"name": "EPYC"}, nominal=lookup("EPYC 9654").roof)
    flat = " ".join(derived_note(epyc).split())
    assert flat.startswith("* derived, not a datasheet figure: fp64 vector = 96 cores x "
                           "3.55 GHz (all-core boost, AMD) x 4 lanes x 2 FMA pipes x 2 "
                           "(Zen 4)")
    assert flat.endswith("; Zen 4 also has 2 FADD pipes beside its 2 FMA pipes, not "
                         "counted: add-heavy code can reach up to 1.50x this peak")
    xeon = MachineProfile(host={"name": "Xeon"}, nominal=lookup("Xeon Platinum 8380").roof)
    assert "FADD" not in derived_note(xeon)


def _above_roof_causes(device: str) -> tuple[str, ...]:
    roof = lookup(device).roof
    peak = roof.find_compute("fp64").value
    # 1.2x the FMA peak in 1 s, compute side (AI 4400): above the roof by 20 %
    k = Kernel("stencil_adds", flop={"fp64": 1.2 * peak}, bytes={"DRAM": 1e9}, seconds=1.0)
    found = [f for f in check_analysis(analyze(roof, [k])) if f.check == "above_roof"]
    assert len(found) == 1
    return found[0].causes


def test_sanity_above_roof_names_zen_fadd_pipes_as_a_cause():
    assert lookup("EPYC 9654").roof.find_compute("fp64").value == pytest.approx(
        96 * 3.55e9 * 16)                       # 5.45 TFLOP/s at AMD's all-core boost
    causes = _above_roof_causes("EPYC 9654")
    assert any(c.startswith("Zen 4's two FADD pipes beside its two FMA pipes: the fp64 peak "
                            "counts FMA pipes only, so code mixing adds with FMAs can reach "
                            "up to 1.5x it") for c in causes)
    assert not any("FADD" in c for c in _above_roof_causes("Xeon Platinum 8380"))


# --- names: 'Grace CPU Superchip' is the two-socket part ----------------------------------
@pytest.mark.parametrize("typed", ["Grace CPU Superchip", "Grace Superchip",
                                   "NVIDIA Grace CPU Superchip", "grace-superchip"])
def test_grace_superchip_is_the_144_core_entry(typed):
    d = lookup(typed)
    assert d.name == "NVIDIA Grace CPU Superchip 144-core"
    assert d.roof.find_compute("fp64").value == pytest.approx(144 * 3.1e9 * 16)   # 7.14 T


@pytest.mark.parametrize("typed, name", [
    ("Grace", "NVIDIA Grace CPU"), ("NVIDIA Grace CPU", "NVIDIA Grace CPU"),
    ("GH200", "NVIDIA GH200 Grace Hopper"), ("Grace Hopper", "NVIDIA GH200 Grace Hopper"),
    ("Grace Hopper Superchip", "NVIDIA GH200 Grace Hopper"),
    ("NVIDIA GH200 Grace Hopper Superchip", "NVIDIA GH200 Grace Hopper"),
    ("Grace Blackwell Superchip", "NVIDIA GB200 Grace Blackwell"),
    ("Grace-Grace", "NVIDIA Grace CPU Superchip 144-core"),
])
def test_other_grace_names_unchanged(typed, name):
    assert lookup(typed).name == name


def test_specs_show_grace_cpu_superchip(capsys):
    assert main(["specs", "show", "Grace CPU Superchip"]) == 0
    out = capsys.readouterr().out
    assert "NVIDIA Grace CPU Superchip 144-core" in out

"""Review r1_json F6, T3, F2 (choose) and F9, T2 (compare).

F6: `choose -o UNWRITABLE --json` printed the whole ranking, then exited 2: the output is
    checked before any work now, so stdout stays empty on the error.
T3: `choose -o afile/x.csv` (afile a regular file) said "(File exists)"; it says what the
    other verbs say, "is a file, not a directory".
F2: choose ranked on the work floor where every device is launch-bound (GPUs 0.7 % apart
    with launches read 1.67x apart); it ranks on the time with launches (what binds),
    equal times by the work floor, and carries both ratios (`relative_with_launches`).
F9: `compare --fail-if-slower` gated two unrelated single kernels (an fp16 GEMM against
    an fp64 kernel of another GPU) and exited 1, "regression"; it is "no kernel in
    common" (exit 2) unless --map pairs them.
T2: a noise p-value from one sample a run (always 1.0) is null, with the reason.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.model import Kernel
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.choose import choices_to_dict, rank
from rooflab.model.compare import compare_kernels, comparison_to_dict


def _write(path, kernels):
    path.write_text(json.dumps({"schema_version": 1, "kernels": kernels}))
    return path


@pytest.fixture
def mm256(tmp_path):
    # the reviewer's `ai matmul 256 256 256`: 2 x 256^3 = 33,554,432 fp16 tensor FLOP and
    # 3 x 256 x 256 x 2 B = 393,216 DRAM bytes, one call
    return _write(tmp_path / "m256.json", [{"name": "mm", "flop": {"fp16": 33554432},
                                            "bytes": {"DRAM": 393216}, "unit": "tensor"}])


@pytest.fixture
def afile(tmp_path):
    path = tmp_path / "afile"
    path.write_text("not a folder\n")
    return path


# --- F6 / T3: the output path is checked before the ranking is printed --------------------

@pytest.mark.parametrize("name", ["c.json", "c.csv"])
def test_choose_unwritable_output_fails_first_with_empty_stdout(mm256, afile, name, capsys):
    code = main(["choose", str(mm256), "--among", "A100,T4", "--json",
                 "-o", str(afile / name)])
    out, err = capsys.readouterr()
    assert code == 2
    # was 1.8 kB of a complete-looking ranking; now the error document only
    assert list(json.loads(out)) == ["schema_version", "error", "generator"]
    # T3: the words of every other verb (files.check_writable), not "(File exists)"
    assert f"{afile} is a file, not a directory" in err
    assert "File exists" not in err
    assert not (afile / name).exists()


def test_choose_output_into_a_missing_folder_still_writes(mm256, tmp_path, capsys):
    # the check creates nothing: a new folder on the way is made by the write, as before
    path = tmp_path / "new" / "r.json"
    assert main(["choose", str(mm256), "--among", "A100,T4", "-o", str(path)]) == 0
    assert [d["name"] for d in json.loads(path.read_text())["devices"]] == [
        "NVIDIA A100 80GB SXM", "NVIDIA T4"]


# --- F2: the rank is the time with launches; both ratios are carried ----------------------

def _roof(name, flops, bw, launch):
    return Roof(name, compute=(Ceiling(flops, "fp32", "vector"),),
                memory=(Ceiling(bw, level="DRAM"),), overhead_s=launch)


# 100 calls of 1e8 fp32 FLOP and 1e8 DRAM bytes in all:
#   fast: work max(1e8 / 1e13, 1e8 / 1e12) = 100 us; launches 100 x 10 us = 1 ms -> 1 ms
#   slow: work max(1e8 / 1e12, 1e8 / 5e11) = 200 us; launches 100 x 5 us = 500 us -> 500 us
SMALL = Kernel("tiny", flop={"fp32": 1e8}, bytes={"DRAM": 1e8}, calls=100)
FAST = ("fast", _roof("fast", 1e13, 1e12, 10e-6), None)
SLOW = ("slow", _roof("slow", 1e12, 5e11, 5e-6), None)


def test_rank_is_by_the_time_with_launches_not_the_work_floor():
    choices = rank([SMALL], [FAST, SLOW])
    assert [c.name for c in choices] == ["slow", "fast"]   # was fast first (100 < 200 us)
    assert [c.with_launches_s for c in choices] == pytest.approx([500e-6, 1e-3])
    assert [c.seconds for c in choices] == pytest.approx([200e-6, 100e-6])
    slow, fast = choices_to_dict(choices, [SMALL])
    # each ratio against the best device of its own measure
    assert slow["relative_with_launches"] == 1.0 and fast["relative_with_launches"] == 2.0
    assert slow["relative"] == pytest.approx(2.0) and fast["relative"] == 1.0
    assert slow["rank"] == 1 and slow["binding"] == "launch"


def test_equal_times_with_launches_rank_by_the_work_floor():
    # both launch-bound at 100 x 10 us = 1 ms; work 100 us (fast) vs 200 us (slow2)
    slow2 = ("slow2", _roof("slow2", 1e12, 5e11, 10e-6), None)
    choices = rank([SMALL], [slow2, FAST])
    assert [c.name for c in choices] == ["fast", "slow2"]
    assert [c.step_s for c in choices] == pytest.approx([1e-3, 1e-3])


def test_choose_json_carries_relative_with_launches_on_the_reviewers_case(mm256, capsys):
    # T4: max(33554432 / 65e12 = 0.52 us, 393216 / 320e9 = 1.23 us) = 1.23 us of work;
    # A100: max(33554432 / 312e12 = 0.11 us, 393216 / 2.039e12 = 0.19 us) = 0.19 us; both
    # held to one 5 us launch: 6.37x apart on the work floor, 1.00x as the work takes
    assert main(["choose", str(mm256), "--among", "T4,A100", "--json"]) == 0
    a100, t4 = json.loads(capsys.readouterr().out)["devices"]
    assert (a100["name"], t4["name"]) == ("NVIDIA A100 80GB SXM", "NVIDIA T4")
    assert t4["with_launches_s"] == a100["with_launches_s"] == pytest.approx(5e-6)
    assert t4["relative"] == pytest.approx((393216 / 320e9) / (393216 / 2.039e12), rel=1e-6)
    assert t4["relative"] == pytest.approx(6.37, rel=1e-3)
    assert t4["relative_with_launches"] == a100["relative_with_launches"] == 1.0


def test_choose_table_says_which_time_ranks(mm256, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["choose", str(mm256), "--among", "T4,A100"]) == 0
    out = capsys.readouterr().out
    assert "ranked by the time with launches (what binds)" in out
    assert "fastest work floor first" not in out
    # the T4 row: 5 us with launches, 1.00x; 1.23 us work floor, 6.37x
    t4 = next(line for line in out.splitlines() if "NVIDIA T4" in line)
    assert [c.strip() for c in t4.split("│")[3:7]] == ["5 us", "1.00x", "1.23 us", "6.37x"]


def test_choose_csv_has_relative_with_launches(mm256, tmp_path, capsys):
    path = tmp_path / "r.csv"
    assert main(["choose", str(mm256), "--among", "T4,A100", "-o", str(path)]) == 0
    header, a100, t4 = path.read_text().splitlines()[:3]
    col = header.split(",").index("relative_with_launches")
    assert a100.split(",")[col] == t4.split(",")[col] == "1.0"


# --- F9: no gate over two differently named single kernels --------------------------------

@pytest.fixture
def two_runs(tmp_path):
    # an fp16 GEMM (190 GFLOP, 5 ms) and an unrelated fp64 kernel (2.6 TFLOP, 30 s)
    before = _write(tmp_path / "k.json", [{"name": "gemm_ai190", "flop": {"fp16": 1.9e11},
                                           "bytes": {"DRAM": 1e9}, "seconds": 0.005}])
    after = _write(tmp_path / "o.json", [{"name": "sigma", "flop": {"fp64": 2.6e12},
                                          "bytes": {"DRAM": 5e11}, "seconds": 30.0}])
    return str(before), str(after)


def test_gate_on_two_unrelated_single_kernels_is_no_kernel_in_common(two_runs, capsys):
    code = main(["compare", *two_runs, "--fail-if-slower", "5", "--json"])
    out, err = capsys.readouterr()
    assert code == 2   # was 1: "regressions": ["sigma"]
    assert list(json.loads(out)) == ["schema_version", "error", "generator"]
    assert "no kernel of" in err and "nothing to gate" in err
    assert "--map 'gemm_ai190=sigma'" in err


def test_gate_pairs_them_when_map_says_so(two_runs, capsys):
    code = main(["compare", *two_runs, "--fail-if-slower", "5", "--json",
                 "--map", "gemm_ai190=sigma"])
    data = json.loads(capsys.readouterr().out)
    # 30 s / 5 ms - 1 = +599,900 %: slower, as the user asked to compare them
    assert code == 1 and data["regressions"] == ["sigma"]
    assert data["matches"][0]["change_pct"] == pytest.approx(100 * (30 / 0.005 - 1))


def test_without_a_gate_the_single_kernels_are_still_matched(two_runs, capsys):
    assert main(["compare", *two_runs, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["matches"][0]["before_name"] == "gemm_ai190"
    assert "one kernel in each run: matched 'gemm_ai190' with 'sigma'" in data["notes"]


# --- T2: no p-value from samples too few to give one ---------------------------------------

def _pair(before_samples, after_samples):
    b = Kernel("k", flop={"fp32": 1e9}, seconds=sum(before_samples) / len(before_samples),
               samples=tuple(before_samples))
    a = Kernel("k", flop={"fp32": 1e9}, seconds=sum(after_samples) / len(after_samples),
               samples=tuple(after_samples))
    return comparison_to_dict(compare_kernels([b], [a]))["matches"][0]


def test_one_sample_a_run_gives_no_p_value_and_says_why():
    pytest.importorskip("scipy")
    row = _pair([26.3], [12.3])   # nersc-gpp output4 vs output5: one sample each
    assert row["samples_before"] == row["samples_after"] == 1
    assert row["noise_p_value"] is None   # was 1.0
    assert row["within_noise"] is None
    # the smallest two-sided p of 1 vs 1 samples: min(1, 2 / C(2, 1)) = 1
    assert row["noise_not_judged"] == ("1 and 1 samples (the U test's smallest p with so "
                                       "few is 1, not below 0.05)")


def test_enough_samples_keep_their_p_value():
    pytest.importorskip("scipy")
    # 9 vs 9, every after sample above every before one: exact p = 2 / C(18, 9) = 4.1e-5
    row = _pair([1e-3 + i * 1e-6 for i in range(9)], [2e-3 + i * 1e-6 for i in range(9)])
    assert row["noise_p_value"] == pytest.approx(2 / 48620)
    assert row["within_noise"] is False and row["noise_not_judged"] is None


def test_no_samples_say_so():
    b = Kernel("k", flop={"fp32": 1e9}, seconds=1e-3)
    a = Kernel("k", flop={"fp32": 1e9}, seconds=2e-3)
    row = comparison_to_dict(compare_kernels([b], [a]))["matches"][0]
    assert row["noise_p_value"] is None
    assert row["noise_not_judged"] == "no timing samples in either run"


def test_nersc_gpp_one_sample_runs(fixtures_dir, capsys):
    gpp = fixtures_dir / "ncu" / "nersc-gpp"
    pytest.importorskip("scipy")
    assert main(["compare", str(gpp / "output4.csv"), str(gpp / "output5.csv"), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["matches"]
    assert (row["samples_before"], row["samples_after"], row["noise_p_value"]) == (1, 1, None)

"""Review s23 r2 F2: several profiler files are optimisation steps in command-line order,
and the docs' `output*.csv` expands as output1.csv ... output8.csv output.csv under
en_US.UTF-8 (and most locales): the baseline became the last step, the trajectory ending
with a step back, with nothing said. The order stays the command line's (documented); a
numbered series given out of its order is now warned of, with the shell words that list
it in order (cli/step_order.py), and the docs list the files explicitly.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import GPP

from rooflab.cli.main import main

# what bash expands `output*.csv` to in the NERSC GPP folder under each collation
C_ORDER = ["output.csv", *(f"output{i}.csv" for i in range(1, 9))]
EN_US_ORDER = [*(f"output{i}.csv" for i in range(1, 9)), "output.csv"]


def test_the_en_us_glob_order_is_caught_and_the_c_order_is_not():
    from rooflab.cli.step_order import in_order_words, out_of_order

    assert out_of_order(C_ORDER) is None
    assert out_of_order(EN_US_ORDER) == ("output.csv", "output8.csv")
    assert in_order_words(EN_US_ORDER, "output.csv") == "output.csv output?.csv"


def test_numbers_compare_as_numbers_not_as_text():
    from rooflab.cli.step_order import in_order_words, out_of_order

    # output10.csv sorts before output2.csv in every locale's glob
    glob = ["step1.csv", "step10.csv", "step11.csv", "step2.csv", "step3.csv"]
    assert out_of_order(glob) == ("step2.csv", "step11.csv")
    assert in_order_words(glob, "step2.csv") == "step?.csv step??.csv"
    assert out_of_order(["step1.csv", "step2.csv", "step10.csv"]) is None


def test_only_one_series_counts():
    from rooflab.cli.step_order import out_of_order

    # other folders, other stems, other suffixes are other series
    assert out_of_order(["b/run2.csv", "a/run1.csv"]) is None
    assert out_of_order(["v2.csv", "base.csv", "v3.csv"]) is None
    assert out_of_order(["output5.ncu-rep", "output1.csv"]) is None
    # the same file twice is two steps, not an inversion
    assert out_of_order(["output1.csv", "output1.csv"]) is None
    assert out_of_order(["run/k3.json", "run/k1.json"]) == ("run/k1.json", "run/k3.json")


@pytest.fixture
def gpp_steps(tmp_path, monkeypatch):
    """output.csv, output1.csv and output2.csv of the NERSC GPP recordings, in tmp_path."""
    for name in ("output.csv", "output1.csv", "output2.csv"):
        if not (GPP / name).is_file():
            pytest.skip(f"NERSC GPP recording {GPP / name} is absent")
        shutil.copy(GPP / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, [ln for ln in out.err.splitlines() if "steps are taken" in ln]


WARNED = ("warning: output.csv is given after output2.csv: steps are taken in the order the "
          "files are given, output.csv as the later step. A shell's `*` sorts by the locale "
          "(output.csv after output8.csv under en_US.UTF-8, output10.csv before output2.csv "
          "under any): list the files in order, e.g. `output.csv output?.csv`")


def test_ncu_warns_and_keeps_the_command_line_order(gpp_steps, capsys):
    rc, out, said = _run(capsys, "ncu", "output1.csv", "output2.csv", "output.csv",
                         "--on", "L4", "--json")
    assert rc == 0 and said == [WARNED]
    # the documented order is kept: output.csv (the 22.8 s baseline) is step 2
    steps = {k["meta"]["step"]: k["meta"]["step_index"] for k in json.loads(out)["kernels"]}
    assert steps == {"output1": 0, "output2": 1, "output": 2}


def test_files_in_order_say_nothing(gpp_steps, capsys):
    rc, _, said = _run(capsys, "ncu", "output.csv", "output1.csv", "output2.csv", "--on", "L4",
                       "--json")
    assert rc == 0 and said == []


def test_report_and_plot_warn_too(gpp_steps, capsys):
    rc, _, said = _run(capsys, "report", "output1.csv", "output2.csv", "output.csv", "--on",
                       "L4", "--json")
    assert rc == 0 and said == [WARNED]
    rc, _, said = _run(capsys, "plot", "output1.csv", "output2.csv", "output.csv", "--on",
                       "L4", "--trajectory", "--level", "DRAM", "--json")
    assert rc == 0 and said == [WARNED]


def _kernel_file(path, seconds):
    path.write_text(json.dumps({"kernels": [{"name": "k", "flop": {"fp32": 2e9},
                                             "bytes": {"DRAM": 1e8}, "seconds": seconds}]}))


def test_own_kernel_files_are_steps_only_for_a_trajectory(tmp_path, monkeypatch, capsys):
    """rooflab's own kernel files are merged, not steps (report: no warning); plot
    --trajectory joins them in the order given, so there it is said."""
    monkeypatch.chdir(tmp_path)
    _kernel_file(tmp_path / "v2.json", 0.02)
    _kernel_file(tmp_path / "v10.json", 0.01)
    # `v*.json` in any locale: v10.json first
    rc, _, said = _run(capsys, "plot", "v10.json", "v2.json", "--on", "a100", "--json")
    assert rc == 0 and said == []
    rc, _, said = _run(capsys, "plot", "v10.json", "v2.json", "--on", "a100", "--trajectory",
                       "--json")
    assert rc == 0 and len(said) == 1
    assert said[0].startswith("warning: v2.json is given after v10.json:")
    assert said[0].endswith("e.g. `v?.json v??.json`")


def test_an_order_no_shell_gives_is_the_users_and_is_not_said():
    """Review s23 h1 F2: `ncu gemm_fp32.csv gemm_fp16.csv` in that order on purpose was told
    to list `gemm_fp??.csv`, which reverses it. Only an order a shell's `*` gives (byte
    order, or a UTF-8 locale's: letters and digits first) is taken for a glob's."""
    from rooflab.cli.step_order import glob_order

    assert not glob_order(["gemm_fp32.csv", "gemm_fp16.csv"])
    assert glob_order(["output.csv", "output1.csv", "output10.csv", "output2.csv"])   # C
    assert glob_order(["output1.csv", "output2.csv", "output.csv"])                  # en_US
    assert not glob_order(["output2.csv", "output1.csv", "output.csv"])


def test_torch_traces_are_ranks_not_steps(tmp_path):
    """Review s23 h1 F3: rank0.json rank1.json rank10.json rank2.json, torch traces told
    apart by their rank, are no steps to order."""
    from rooflab.cli.step_order import profiler_steps

    trace = '{"traceEvents": []}'
    for name in ("rank1.json", "rank10.json"):
        (tmp_path / name).write_text(trace)
    assert profiler_steps([str(tmp_path / "rank10.json"), str(tmp_path / "rank1.json")]) == []

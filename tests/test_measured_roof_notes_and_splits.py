"""Audit 12: five small leftovers of the day's audits (a GPU roof from a file warns in
bench --run; llm's no-fit hint names a --pp/--tp that fits; choose says the GPUs per row;
ridge/attainable take a Roof; the profiled verbs print a measured roof's notes)."""

from __future__ import annotations

import textwrap

from test_rocprof_roofline import DEV0, DEV1, HEADER

from rooflab.cli.main import main


def _roofline_csv(tmp_path):
    path = tmp_path / "MI300X_A1" / "roofline.csv"
    path.parent.mkdir(parents=True)
    path.write_text(HEADER + "\n" + DEV0 + "\n" + DEV1 + "\n")
    return path


# --- 1. bench --run --on roofline.csv: CPU-timed kernels on a GPU roof, no warning --------

def _cpu_script(tmp_path):
    script = tmp_path / "add.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import rooflab
        a = np.ones(1000)
        rooflab.measure(lambda: a + a, name="add", flop={"fp64": 1000},
                        bytes={"DRAM": 24000}, plan="quick")
    """))
    return script


def test_bench_run_on_a_gpu_roofline_csv_warns(tmp_path, capsys):
    csv = _roofline_csv(tmp_path)
    assert main(["bench", "--run", str(_cpu_script(tmp_path)), "--on", str(csv)]) == 0
    err = capsys.readouterr().err
    assert "warning: the kernels run on this machine's CPU" in err
    assert "rocprof-compute roofline" in err and "a gpu" in err


def test_bench_run_on_a_cpu_catalog_roof_still_says_nothing(tmp_path, capsys):
    assert main(["bench", "--run", str(_cpu_script(tmp_path)), "--on", "EPYC 9654"]) == 0
    assert "warning: the kernels run on" not in capsys.readouterr().err


# --- 2. llm --pp 2 that does not fit named no --pp/--tp that would ------------------------

def test_llm_no_fit_names_the_smallest_pp_and_tp_that_fit(capsys):
    assert main(["llm", "llama-3-70b", "--on", "H200", "--memory", "30GB", "--pp", "2"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines()
                if ln.startswith("memory per device"))
    # 141 GB of fp16 weights: 5 stages of 16 layers (28 GB + KV) fit in 30 GB, 4 do not;
    # --tp 4 at --pp 2 leaves 17.7 GB a device (the heads are 64: --tp 3 does not divide)
    assert "does NOT fit" in line and "batch 1 fits with --pp 5 or --tp 4 (at --pp 2)" in line


def test_the_suggested_split_does_fit(capsys):
    assert main(["llm", "llama-3-70b", "--on", "H200", "--memory", "30GB", "--pp", "5"]) == 0
    out = capsys.readouterr().out
    assert "(fits)" in out and "fits with --pp" not in out
    assert main(["llm", "llama-3-70b", "--on", "H200", "--memory", "30GB", "--pp", "4"]) == 0
    assert "does NOT fit" in capsys.readouterr().out


# --- 3. choose on an llm --tp 8 / --pp 2 document: how many GPUs a row is went unsaid -----

def _llm_doc(tmp_path, capsys, *split):
    path = tmp_path / f"llm{'_'.join(split)}.json"
    assert main(["llm", "llama-3-70b", "--on", "H200", *split, "--json", "-o", str(path)]) == 0
    capsys.readouterr()
    return str(path)


def test_choose_says_the_gpus_each_row_assumes(tmp_path, capsys):
    import json

    tp8 = _llm_doc(tmp_path, capsys, "--tp", "8")
    assert main(["choose", tp8, "--among", "H100,H200"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("each row assumes 8 GPUs of that device (the llm document's "
                            "--tp 8): the time is one GPU's 1/8 shard")
    pp2 = _llm_doc(tmp_path, capsys, "--pp", "2")
    assert main(["choose", pp2, "--among", "H100,H200", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["devices"]
    assert all((d["gpus"], d["tp"], d["pp"]) == (2, 1, 2) for d in rows)


def test_choose_refuses_documents_of_different_splits(tmp_path, capsys):
    tp8, pp2 = _llm_doc(tmp_path, capsys, "--tp", "8"), _llm_doc(tmp_path, capsys, "--pp", "2")
    assert main(["choose", tp8, pp2, "--among", "H100"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the llm documents split the model differently") and \
        "Traceback" not in err


# --- 4. rooflab.ridge(roof) / attainable(roof, ai): a bare TypeError -----------------------

def test_ridge_and_attainable_take_a_roof():
    import numpy as np

    import rooflab

    roof = rooflab.Roof("box", compute=(rooflab.Ceiling(1e11, precision="fp64", unit="vector"),
                                        rooflab.Ceiling(4e11, precision="fp32", unit="vector")),
                        memory=(rooflab.Ceiling(5e10, level="DRAM"),
                                rooflab.Ceiling(2e11, level="L2")))
    assert rooflab.ridge(roof) == 8.0                          # top compute (fp32) / DRAM
    assert rooflab.attainable(roof, 2.0) == 1e11 == rooflab.attainable(2.0, roof)
    assert list(rooflab.attainable(roof, np.array([1.0, 100.0]))) == [5e10, 4e11]
    # plain numbers as before
    assert rooflab.ridge(1e12, 1e11) == 10.0
    assert rooflab.attainable(5, 1e12, 1e11) == 5e11
    assert list(rooflab.attainable([1, 100], 1e12, 1e11)) == [1e11, 1e12]


def test_ridge_and_attainable_wrong_calls_show_the_right_one():
    import pytest

    import rooflab
    from rooflab.errors import InputError

    roof = rooflab.load_roof("H100")
    with pytest.raises(InputError, match=r"ridge\(roof\) or ridge\(peak_flop_per_s"):
        rooflab.ridge(roof, 3e12)
    with pytest.raises(InputError, match=r"got ridge\(1000000000000.0\)"):
        rooflab.ridge(1e12)
    with pytest.raises(InputError, match=r"attainable\(roof, ai\)"):
        rooflab.attainable(roof, 1e12, 1e11)


# --- 5. the profiled verbs never printed the roof's own notes -----------------------------

def test_rocprof_prints_a_measured_roofs_notes_once(tmp_path, capsys):
    from test_rocprof_roofline import _workload

    folder = _workload(tmp_path)
    assert main(["rocprof", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.count("roof note: MALLBw (MI300's Infinity Cache, between L2 and HBM) is the "
                     "L3 ceiling") == 1
    assert "roof note: the file also holds device(s) 1" in out
    assert "LDSBw 57 TB/s" in out


def test_a_catalog_roofs_notes_stay_unprinted(tmp_path, capsys):
    from test_rocprof_roofline import _workload

    assert main(["rocprof", str(_workload(tmp_path)), "--on", "MI300X"]) == 0
    assert "roof note:" not in capsys.readouterr().out

"""Review s23 r4 F1-F9: kernel meta values of the wrong type in a kernel file (inf threads,
calls or batch, a step_index that is no whole number, NaN in meta, a list or dict source /
op / renamed_from, rooflab's own keys of another type) each gave a traceback (exit 70).
Now: one `error:` line naming the file, the kernel and the key, exit 2; or, where the value
is harmless, kept as text (model/meta_check.checked_meta, called by both kernel readers).
"""

from __future__ import annotations

import json
import math

import pytest

from rooflab import Kernel, load_roof
from rooflab.cli.main import main
from rooflab.errors import InputError


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def _errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error:")]


def _kernels(tmp_path, name: str, *metas: dict) -> str:
    """A JSON kernel file of one kernel per meta (gemm, gemm2, ...), 2e9 FLOP, 1e8 bytes."""
    ks = [{"name": f"k{i}", "flop": {"fp32": 2e9}, "bytes": {"DRAM": 1e8},
           "seconds": 0.01 * (i + 1), "meta": m} for i, m in enumerate(metas)]
    p = tmp_path / name
    # json.dumps writes inf as Infinity, which Python's json reads back: as 1e999 would
    p.write_text(json.dumps({"kernels": ks}))
    return str(p)


def _csv(tmp_path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


# F1 ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("cell", ["inf", "-inf"])
def test_threads_inf_in_csv_is_one_error_line(tmp_path, capsys, cell):
    f = _csv(tmp_path, "k.csv", f"name,flop,bytes,seconds,threads\ngemm,2e9,1e8,0.01,{cell}\n")
    rc, _, err = _run(capsys, "report", f, "--on", "H100")
    assert rc == 2, err
    (line,) = _errors(err)
    assert f"{f}:2: kernel 'gemm': 'threads' must be a whole number of threads >= 1" in line
    assert line.endswith(f"got {float(cell)!r}")


@pytest.mark.parametrize("value", ["inf", 1e999])
def test_threads_inf_in_json_is_one_error_line(tmp_path, capsys, value):
    p = tmp_path / "k.json"
    p.write_text(json.dumps({"kernels": [{"name": "gemm", "flop": 2e9, "bytes": 1e8,
                                          "seconds": 0.01, "threads": value}]}))
    rc, _, err = _run(capsys, "report", str(p), "--on", "H100")
    assert rc == 2 and "'threads' must be a whole number of threads >= 1" in err, err


# F9 ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("cell", ["inf", "nan"])
def test_calls_inf_or_nan_in_csv_is_refused_as_json_refuses_it(tmp_path, capsys, cell):
    f = _csv(tmp_path, "k.csv", f"name,flop,bytes,seconds,calls\ngemm,2e9,1e8,0.01,{cell}\n")
    rc, _, err = _run(capsys, "report", f, "--on", "H100")
    assert rc == 2, err
    assert _errors(err) == [f"error: {f}:2: field 'calls' must be a finite number of "
                            f"launches; got {cell}"]


# F2 ---------------------------------------------------------------------------------------
def test_batch_inf_is_refused_naming_file_and_kernel(tmp_path, capsys):
    f = _csv(tmp_path, "k.csv", "name,flop,bytes,seconds,precision,batch,kind\n"
                                "gemm,2e9,1e8,0.01,fp16,inf,linear\n")
    rc, _, err = _run(capsys, "whatif", f, "--on", "H100", "--batch", "8")
    assert rc == 2, err
    (line,) = _errors(err)
    assert line.startswith(f"error: {f}:2: kernel 'gemm': meta.batch must be a whole number")
    assert line.endswith("got inf")


def test_meta_batch_of_a_python_kernel_refuses_inf():
    from rooflab.model.whatif_batch import meta_batch

    with pytest.raises(InputError, match=r"meta.batch must be a whole number >= 1.*got inf"):
        meta_batch(Kernel("gemm", flop=2e9, bytes=1e8, seconds=0.01,
                          meta={"batch": math.inf}))
    assert meta_batch(Kernel("gemm", flop=2e9, bytes=1e8, meta={"batch": 8.0})) == 8


# F3 ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, words", [("first", "'first'"), (1e999, "inf"),
                                          ([1], "a list [1]"), ({"a": 1}, "an object"),
                                          (1.5, "1.5"), (True, "true/false")])
def test_step_index_not_a_whole_number_is_one_error_line(tmp_path, capsys, value, words):
    f = _kernels(tmp_path, "k.json", {"step_index": value}, {"step_index": 1})
    for argv in (["report", f, "--on", "H100"], ["report", f, "--on", "H100", "--json"],
                 ["whatif", f, "--on", "H100", "--precision", "fp16"]):
        rc, out, err = _run(capsys, *argv)
        assert rc == 2, (argv, err)
        if "--json" in argv:
            assert json.loads(out)["error"]["field"] == "kernels[0].meta.step_index"
            continue
        (line,) = _errors(err)
        assert line.startswith(f"error: {f}: kernels[0] 'k0': meta.step_index must be a "
                               f"whole number"), line
        assert f"got {words}" in line and "write 0, 1, 2, ... or remove the key" in line


def test_step_index_null_is_no_step_and_a_whole_float_is_an_int(tmp_path, capsys):
    # null: the key left out, as null is elsewhere; 1.0 (a CSV cell read as a number): 1
    f = _kernels(tmp_path, "k.json", {"step_index": None}, {"step_index": 1.0})
    rc, out, err = _run(capsys, "report", f, "--on", "H100", "--json")
    assert rc == 0, err
    doc = json.loads(out)
    assert [k.get("meta", {}).get("step_index") for k in doc["kernels"]] == [None, 1]
    assert isinstance(doc["kernels"][1]["meta"]["step_index"], int)
    # one step only: both shares are of the summed 0.03 s
    shares = {r["kernel"]: r["time_share"] for r in doc["analysis"]}
    assert shares == pytest.approx({"k0": 0.01 / 0.03, "k1": 0.02 / 0.03})


def test_python_kernels_with_a_list_step_index_are_no_step():
    from rooflab.model.analysis import analyze, share_totals
    from rooflab.report.steps import step_kernels

    ks = [Kernel("a", flop=2e9, bytes=1e8, seconds=0.01, meta={"step_index": [0]}),
          Kernel("b", flop=2e9, bytes=1e8, seconds=0.03, meta={"step_index": "x"})]
    assert share_totals(ks) == (0.04, 0.04)
    assert step_kernels(analyze(load_roof("H100"), ks)) == []


# F4 ---------------------------------------------------------------------------------------
def test_nan_in_a_csv_meta_column_is_kept_as_text_and_json_works(tmp_path, capsys):
    f = _csv(tmp_path, "k.csv", "name,flop,bytes,seconds,precision,occupancy,weird\n"
                                "gemm,2e9,1e8,0.01,fp32,nan,-inf\n")
    rc, out, err = _run(capsys, "report", f, "--on", "H100", "--json")
    assert rc == 0, err
    assert json.loads(out)["kernels"][0]["meta"] == {"occupancy": "nan", "weird": "-inf"}


def test_nan_and_inf_in_json_meta_at_any_depth_are_text(tmp_path, capsys):
    p = tmp_path / "k.json"
    p.write_text('{"kernels": [{"name": "gemm", "flop": {"fp32": 2e9}, "bytes": 1e8, '
                 '"seconds": 0.01, "meta": {"x": NaN, "y": [1e999, 2], "z": {"w": -1e999}}}]}')
    rc, out, err = _run(capsys, "report", str(p), "--on", "H100", "--json")
    assert rc == 0, err
    assert json.loads(out)["kernels"][0]["meta"] == {"x": "nan", "y": ["inf", 2],
                                                     "z": {"w": "-inf"}}


# F5 ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("key, value", [("source", {"file": "gemm.cu", "line": 40}),
                                        ("op", ["matmul"]), ("step", {"a": 1})])
def test_list_or_dict_for_a_text_key_is_one_error_line(tmp_path, capsys, key, value):
    f = _kernels(tmp_path, "k.json", {key: value})
    for verb in (["report"], ["whatif", "--precision", "fp16"]):
        rc, _, err = _run(capsys, verb[0], f, "--on", "H100", *verb[1:])
        assert rc == 2, err
        (line,) = _errors(err)
        assert line.startswith(f"error: {f}: kernels[0] 'k0': meta.{key} must be text ("), line


def test_renamed_from_list_in_compare_is_one_error_line(tmp_path, capsys):
    a = _kernels(tmp_path, "a.json", {"renamed_from": ["k0"]})
    b = _kernels(tmp_path, "b.json", {})
    rc, _, err = _run(capsys, "compare", a, b, "--on", "H100")
    assert rc == 2, err
    assert _errors(err)[0].startswith(f"error: {a}: kernels[0] 'k0': meta.renamed_from must "
                                      f"be text")


def test_a_number_for_a_text_key_is_its_text(tmp_path, capsys):
    f = _kernels(tmp_path, "k.json", {"source": 5, "step": 2.0})
    rc, out, err = _run(capsys, "report", f, "--on", "H100", "--json")
    assert rc == 0, err
    assert json.loads(out)["kernels"][0]["meta"] == {"source": "5", "step": "2"}


def test_python_kernel_with_a_dict_source_is_no_device_time():
    from rooflab.model.gpu_time import gpu_side_time
    from rooflab.model.sample_groups import launch_group

    k = Kernel("g", flop=2e9, bytes=1e8, seconds=0.01, meta={"source": {"a": 1}})
    assert gpu_side_time(k) is False and launch_group(k) is False


# F6 ---------------------------------------------------------------------------------------
def test_rooflabs_own_list_keys_given_a_number_or_text(tmp_path, capsys):
    from rooflab.model.meta_check import checked_meta

    assert checked_meta({"compile_runs_left_out": 2, "flags": "below-floor cache-resident",
                         "slow_runs": 3.0}, "k") == {
        "compile_runs_left_out": [2], "flags": ["below-floor", "cache-resident"],
        "slow_runs": [3]}
    f = _kernels(tmp_path, "k.json", {"compile_runs_left_out": 2, "slow_runs_note": "slow"})
    rc, out, err = _run(capsys, "report", f, "--on", "H100")
    assert rc == 0, err
    f = _kernels(tmp_path, "k2.json", {"flags": 1})
    rc, out, err = _run(capsys, "whatif", f, "--on", "H100", "--precision", "fp16")
    assert rc == 0, err
    f = _kernels(tmp_path, "k3.json", {"flags": {"a": 1}})
    rc, out, err = _run(capsys, "report", f, "--on", "H100")
    assert rc == 2 and "meta.flags must be a list, e.g. [\"below-floor\"]" in err, err


def test_flop_with_level_bytes_null_is_absent_and_text_is_refused(tmp_path, capsys):
    a = _kernels(tmp_path, "a.json", {"flop_with_level_bytes": None})
    b = _kernels(tmp_path, "b.json", {})
    rc, out, err = _run(capsys, "compare", a, b, "--on", "H100", "--json")
    assert rc == 0, err
    c = _kernels(tmp_path, "c.json", {"flop_with_level_bytes": {"L2": "x"}})
    rc, out, err = _run(capsys, "compare", c, b, "--on", "H100")
    assert rc == 2, err
    assert _errors(err) == [f"error: {c}: kernels[0] 'k0': meta.flop_with_level_bytes must be "
                            f"an object of finite numbers, e.g. {{\"L2\": 2.0e9}} (rooflab "
                            f"writes it so); got an object {{'L2': 'x'}}; fix it or remove "
                            f"the key"]


def test_python_kernels_with_odd_own_keys_do_not_crash():
    from rooflab.model.compare_merge import ai, merge_by_name
    from rooflab.model.sanity_timing import slow_runs_finding

    k = Kernel("g", flop=2e9, bytes=1e8, seconds=0.01,
               meta={"flop_with_level_bytes": None, "renamed_from": ["x"],
                     "compile_runs_left_out": 2, "slow_runs_note": "n"})
    assert ai(k, "DRAM") == pytest.approx(20.0)
    assert [m.name for m in merge_by_name([k])] == ["g"]
    assert slow_runs_finding(k) is None

"""Compare two runs: matching by name, renames, speed-ups and the --fail-if-slower gate."""

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.model import Kernel
from rooflab.model.compare import compare_kernels, merge_by_name, parse_rename

NERSC = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"


def k(name, seconds, flop=1e9, nbytes=1e9):
    return Kernel(name, {"fp32": flop}, {"DRAM": nbytes}, seconds=seconds)


def test_matched_speedups_and_regressions():
    before = [k("gemm", 2.0), k("add", 0.10), k("gone", 1.0)]
    after = [k("gemm", 1.0), k("add", 0.12), k("new", 1.0)]
    c = compare_kernels(before, after)
    by = {m.name: m for m in c.matches}
    assert by["gemm"].speedup == pytest.approx(2.0)      # 2.0 / 1.0
    assert by["add"].change_pct == pytest.approx(20.0)   # 0.12 / 0.10 - 1
    assert [x.name for x in c.only_before] == ["gone"]
    assert [x.name for x in c.only_after] == ["new"]
    assert c.speedup == pytest.approx(2.1 / 1.12)        # matched totals only
    assert [m.name for m in c.regressions(10)] == ["add"]
    assert c.regressions(25) == ()


def test_rename_map_and_single_kernel_match():
    c = compare_kernels([k("old", 2.0)], [k("renamed", 1.0), k("other", 1.0)],
                        parse_rename(["old=renamed"]))
    assert c.matches[0].name == "renamed" and c.matches[0].speedup == pytest.approx(2.0)
    # One kernel on each side: matched whatever the names, and said so.
    c = compare_kernels([k("v1", 3.0)], [k("v2", 1.0)])
    assert c.matches[0].speedup == pytest.approx(3.0) and "matched" in c.notes[0]
    with pytest.raises(InputError, match="OLD=NEW"):
        parse_rename(["nope"])
    with pytest.raises(InputError, match="not a kernel of the first run"):
        compare_kernels([k("a", 1.0)], [k("b", 1.0)], {"zz": "b"})


def test_launches_of_one_name_add_up():
    merged = merge_by_name([k("a", 1.0), k("a", 0.5, flop=2e9), k("b", 1.0)])
    a = merged[0]
    assert a.seconds == pytest.approx(1.5) and a.calls == 2
    assert a.flop["fp32"] == pytest.approx(3e9)


def _write(path, kernels):
    path.write_text(json.dumps({"kernels": [
        {"name": x.name, "flop": dict(x.flop), "bytes": dict(x.bytes), "seconds": x.seconds}
        for x in kernels]}))
    return str(path)


def test_cli_fail_if_slower(tmp_path, capsys):
    b = _write(tmp_path / "before.json", [k("gemm", 2.0), k("add", 0.10)])
    a = _write(tmp_path / "after.json", [k("gemm", 1.0), k("add", 0.12)])
    assert main(["compare", b, a]) == 0
    out = capsys.readouterr().out
    assert "2.00x" in out and "+20.0 %" in out
    assert main(["compare", b, a, "--fail-if-slower", "10"]) == 1   # add is 20 % slower
    assert "add" in capsys.readouterr().err
    assert main(["compare", b, a, "--fail-if-slower", "25"]) == 0
    capsys.readouterr()
    assert main(["compare", b, a, "--json", "--fail-if-slower", "10"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["regressions"] == ["add"]
    assert data["matches"][0]["speedup"] == pytest.approx(2.0)


def test_cli_bad_map_is_a_clean_error(tmp_path, capsys):
    b = _write(tmp_path / "b.json", [k("a", 1.0)])
    assert main(["compare", b, b, "--map", "broken"]) == 2
    assert "error: --map takes OLD=NEW" in capsys.readouterr().err


@pytest.mark.skipif(not NERSC.is_dir(), reason="NERSC GPP recordings not in ../shared/fixtures")
def test_nersc_steps_compare(capsys):
    # output4 -> output5 of the GPP kernel: time = sm__cycles_elapsed.avg / .per_second:
    # 42,579,316,766.67 / 1,619,878,324.05 = 26.2855 s -> 19,912,784,220.33 /
    # 1,619,711,726.52 = 12.2940 s: 2.138x faster.
    rc = main(["compare", str(NERSC / "output4.csv"), str(NERSC / "output5.csv"), "--json"])
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    m = data["matches"][0]
    expected = (42579316766.67 / 1619878324.05) / (19912784220.33 / 1619711726.52)
    assert m["kernel"] == "sigma_gpp_gpu_34"
    assert m["speedup"] == pytest.approx(expected, rel=1e-9)
    assert expected == pytest.approx(2.138, abs=1e-3)

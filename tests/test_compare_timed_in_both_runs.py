"""Second fresh-user audit of `rooflab compare`: totals and the CI gate use only kernels
timed in both runs."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main


def _csv(tmp_path, name, rows):
    f = tmp_path / name
    f.write_text("name,flop,bytes,seconds\n" + "".join(f"{r}\n" for r in rows))
    return str(f)


def test_gate_with_nothing_timed_on_both_sides_is_an_error(tmp_path, capsys):
    before = _csv(tmp_path, "b.csv", ["a,1e9,1e8,"])        # no time in the first run
    after = _csv(tmp_path, "a.csv", ["a,1e9,1e8,0.02"])     # 20 ms: a regression, unseen
    assert main(["compare", before, after, "--fail-if-slower", "5"]) == 2
    err = capsys.readouterr().err
    assert "error: --fail-if-slower: no matched kernel has a time in both runs" in err
    assert "a (before)" in err


def test_totals_over_kernels_timed_in_both_runs(tmp_path, capsys):
    # gate_up 200 us -> 150 us; add 40 us -> untimed: the total is 200 -> 150 (1.33x),
    # not 240 -> 150 (1.6x, the untimed add counted as 0 s)
    before = _csv(tmp_path, "b.csv", ["gate_up,2e8,2e8,2e-4", "add,1e6,6e6,4e-5"])
    after = _csv(tmp_path, "a.csv", ["gate_up,2e8,1e8,1.5e-4", "add,1e6,6e6,"])
    assert main(["compare", before, after, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["total_before_s"] == pytest.approx(2e-4)
    assert d["total_after_s"] == pytest.approx(1.5e-4)
    assert d["speedup"] == pytest.approx(4 / 3)
    add = next(m for m in d["matches"] if m["kernel"] == "add")
    assert add["speedup"] is None and add["after_s"] is None

"""`compare --map OLD=NEW` where NEW is also a kernel of the first run (review s19 r2 F23):
the second run's NEW was matched twice (to OLD by the map and to itself by name), so
total_after_s counted it twice (0.04 s where the second run's kernels sum to 0.03 s) and the
gate named it twice. Both runs: a 10 ms, b 20 ms; --map a=b pairs a -> b (10 ms -> 20 ms)."""

from __future__ import annotations

import json

import pytest
from cli_inproc import run_cli

RUN = {"kernels": [{"name": "a", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e8},
                    "seconds": 0.01},
                   {"name": "b", "flop": {"fp32": 2e9}, "bytes": {"DRAM": 2e8},
                    "seconds": 0.02}]}


@pytest.fixture()
def runs(tmp_path):
    paths = []
    for name in ("m1.json", "m2.json"):
        p = tmp_path / name
        p.write_text(json.dumps(RUN))
        paths.append(str(p))
    return paths


def test_a_map_target_is_matched_once(runs):
    r = run_cli("compare", *runs, "--map", "a=b", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [(m["before_name"], m["kernel"]) for m in doc["matches"]] == [("a", "b")]
    assert doc["total_before_s"] == pytest.approx(0.01)
    assert doc["total_after_s"] == pytest.approx(0.02)      # b once, not 0.04
    assert doc["speedup"] == pytest.approx(0.5)
    assert doc["only_before"] == ["b"] and doc["only_after"] == ["a"]
    assert any("not matched by name" in n and "--map a=b" in n for n in doc["notes"])


def test_the_gate_names_the_mapped_pair_once(runs):
    r = run_cli("compare", *runs, "--map", "a=b", "--fail-if-slower", "5")
    assert r.returncode == 1                                  # a -> b: 10 ms -> 20 ms
    assert "slower by more than 5 %: b\n" in r.stderr        # not "b, b"


def test_two_olds_on_one_new_are_refused(runs):
    r = run_cli("compare", *runs, "--map", "a=b", "--map", "b=b", "--json")
    assert r.returncode == 2
    assert "'a' and 'b'" in json.loads(r.stdout)["error"]["message"]


def test_a_swap_still_pairs_both(runs):
    r = run_cli("compare", *runs, "--map", "a=b", "--map", "b=a", "--json")
    doc = json.loads(r.stdout)
    assert sorted((m["before_name"], m["kernel"]) for m in doc["matches"]) == [
        ("a", "b"), ("b", "a")]
    assert doc["total_after_s"] == pytest.approx(0.03)

"""Rules kept once, docs that say what changed, and the comm probe's env (review s19 x1
F4, F7, F11; the g7 leftover in compare_trust)."""

from __future__ import annotations

import re

import pytest

from rooflab.errors import MissingDependency


def test_report_steps_uses_compares_mostly_rule():
    from rooflab.model import compare_notes
    from rooflab.report import steps

    assert steps.mostly is compare_notes.mostly
    # FLOP x0.42, DRAM x0.32: |0.58| > |0.68| / 4 and FLOP fell -> less work
    assert compare_notes.mostly(0.42, 0.32) == "less work (FLOP)"
    # FLOP x0.98, DRAM x0.50: |0.02| < 0.125 -> the bytes
    assert compare_notes.mostly(0.98, 0.50) == "fewer DRAM bytes"
    assert compare_notes.mostly(1.0, 1.0) == "a faster kernel"


def test_compare_notes_derived_is_provenances():
    from rooflab.model import compare_notes, provenance

    assert compare_notes.DERIVED is provenance.DERIVED
    assert "DERIVED = " not in open(compare_notes.__file__).read()


@pytest.mark.parametrize("module", ["rooflab.hardware.profile", "rooflab.model.schema"])
def test_schema_history_names_what_version_2_added_to_profiles(module):
    import importlib

    doc = " ".join(importlib.import_module(module).__doc__.split())
    assert 'unit "scalar"' in doc
    assert "extras.scalar_fma" in doc
    assert re.search(r"scalar\W.{0,40}by_threads|by_threads.{0,40}scalar", doc)


def test_what_to_do_names_the_bench_flag():
    from rooflab.model.compare_trust import WHAT_TO_DO

    assert WHAT_TO_DO.startswith("re-run both with `rooflab bench --samples 9` (or "
                                 "rooflab.measure(..., samples=9))")


def test_a_backend_forced_in_the_ranks_env_decides_the_numba_check(monkeypatch):
    pytest.importorskip("torch", reason="ranks_on_cpu asks torch which backend the ranks get")
    # a GPU host (a device node, torch would pick NCCL) without numba: probe_comm(env=
    # {"ROOFLAB_COMM_BACKEND": "gloo"}) starts CPU ranks, which need numba for their roofs
    from rooflab.probe.comm import cluster, needs

    monkeypatch.delenv("ROOFLAB_COMM_BACKEND", raising=False)
    monkeypatch.setattr(needs.glob, "glob", lambda pattern: ["/dev/nvidia0"])
    monkeypatch.setattr(cluster, "pick_backend", lambda torch, n: ("nccl", "2 GPUs"))
    monkeypatch.setattr(needs, "_installed", lambda m: m != "numba")
    needs.check_needs("quick", 2)                       # NCCL ranks: no numba needed
    assert needs.ranks_on_cpu(2, {"ROOFLAB_COMM_BACKEND": "gloo"}) is True
    with pytest.raises(MissingDependency) as got:
        needs.check_needs("quick", 2, {"ROOFLAB_COMM_BACKEND": "gloo"})
    assert got.value.module == "numba"
    assert "each CPU rank's own roof" in str(got.value)
    # forced to nccl in the env: GPU ranks, whatever this process's environment says
    monkeypatch.setenv("ROOFLAB_COMM_BACKEND", "gloo")
    assert needs.ranks_on_cpu(2, {"ROOFLAB_COMM_BACKEND": "nccl"}) is False

"""cli/inputs.py was at 450 lines, the module budget: its roofs' half (resolving --on, the
files' and the profiler's roofs, their notes) is cli/inputs_roofs.py now (s31 hd). Callers
import the moved names from cli.inputs_roofs (no re-exports), and a test that patches
cli.inputs.resolve_on still reaches the roofs' half."""

from __future__ import annotations

from pathlib import Path

import rooflab.cli.inputs as inputs

MOVED = ("_on_roofs", "_profile_at", "_threads_roofs", "_thread_words", "_file_roofs",
         "_profiler_roof", "_roof_notes", "_profile_of", "_profile_in")


def test_inputs_is_well_under_the_budget():
    assert len(Path(inputs.__file__).read_text(encoding="utf-8").splitlines()) <= 400


def test_the_moved_names_live_in_the_roofs_half():
    from rooflab.cli import inputs_roofs

    for name in MOVED:
        assert getattr(inputs_roofs, name).__module__ == "rooflab.cli.inputs_roofs", name
    for name in ("Inputs", "load_inputs", "resolve_on", "NO_ROOF", "SHARED_NAMES_NOTE",
                 "shared_names", "refuse_repeated"):
        assert hasattr(inputs, name), name


def test_a_patched_resolve_on_is_the_one_the_roofs_half_calls(monkeypatch):
    calls = []
    real = inputs.resolve_on
    monkeypatch.setattr(inputs, "resolve_on", lambda spec: calls.append(spec) or real(spec))
    roofs, _, source, _ = inputs._on_roofs(["H100 SXM", "A100 SXM 80GB"])
    assert calls == ["H100 SXM", "A100 SXM 80GB"]
    assert roofs[0].name == "NVIDIA H100 SXM"
    assert source.startswith("roof: NVIDIA H100 SXM")

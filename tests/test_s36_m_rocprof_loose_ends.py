"""Session 36 M: rocprof's occupancy notes by the one rule ncu's use, and the HBM notes
spelled as the recording GPU spells its counters.

- A kernel's launches whose achieved occupancy differs are noted by aggregate's one rule
  (_Group.occupancy_note: more than 5 points apart). It read ncu's metric names only, so
  rocprof dispatches at 50.0 % and 12.5 % (tests/data/rocprof_launches, its README has the
  hand numbers) were summed under the first's figure without a word.
- rocprof's occupancy notes print by model/occupancy_words.occupancy_pct, the one rule.
- "TCC_EA_RDREQ_32B not collected" asked an MI300 (gfx942) or MI350 (gfx950) user for a
  counter their rocprofv3 does not know: they spell it TCC_EA0_RDREQ_32B (rocprofiler-sdk's
  counter_defs.yaml; rocprof-compute's gfx942 pmc sets).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rooflab.ingest.rocprof import load_rocprof

LAUNCHES = Path(__file__).parent / "data" / "rocprof_launches" / "run_counter_collection.csv"


def _notes(imp, kernel: str) -> list[str]:
    return [n for k in imp.kernels if k.name == kernel for n in k.meta.get("notes", [])]


def test_rocprof_launches_apart_in_achieved_occupancy_are_noted():
    """triad: 4864 and 1216 waves of 9728 slots = 50.0 and 12.5 % (README): 37.5 points
    apart, over the 5-point rule, so noted as ncu's launches are; the kernel keeps its
    first dispatch's 50.0 %. Old: no note (the rule read ncu's metric names only)."""
    imp = load_rocprof(str(LAUNCHES), device="mi300x")
    triad = next(k for k in imp.kernels if k.name == "triad")
    assert triad.meta["occupancy_achieved"] == pytest.approx(50.0)
    (note,) = [n for n in _notes(imp, "triad") if "differs between" in n]
    assert note.startswith("occupancy differs between its 2 launches (achieved 12.5-50.0 %): "
                           "its occupancy and limiter are launch 1's")
    assert any(n == f"triad: {note}" for n in imp.notes)   # it reaches the import notes


def test_rocprof_launches_alike_are_not_noted():
    """copy: 50.0 and 52.5 % (README), 2.5 points apart, under the 5-point rule: no note,
    as ncu's two sigma_gpp launches 41.6576 and 41.6575 % get none (a guard on the
    5-point rule: it passes on the code before this change, which read no dispatch's)."""
    imp = load_rocprof(str(LAUNCHES), device="mi300x")
    assert not [n for n in _notes(imp, "copy") if "differs between" in n]
    copy = next(k for k in imp.kernels if k.name == "copy")
    assert copy.meta["occupancy_achieved"] == pytest.approx(50.0)


def test_the_rocprof_note_does_not_send_the_user_to_an_option_rocprof_refuses():
    """`rooflab rocprof --per-launch` exits 2 ("no per-launch view; it is rooflab ncu's"):
    the rocprof note says where each dispatch is instead, ncu's keeps --per-launch."""
    from rooflab.cli.main import main

    imp = load_rocprof(str(LAUNCHES), device="mi300x")
    (note,) = [n for n in _notes(imp, "triad") if "differs between" in n]
    assert "--per-launch" not in note.replace("no per-launch view", "")
    assert note.endswith("each dispatch's counters are in the file (`rooflab rocprof` has no "
                         "per-launch view)")
    assert main(["-q", "rocprof", str(LAUNCHES), "--per-launch"]) == 2


def test_no_gpu_named_no_achieved_figures_no_note():
    """Without --on the GPU's XCDs and CUs are unknown, so no dispatch has an achieved %
    (rocprof_achieved.achieved_meta) and none can differ: no note, no stray key (a guard:
    the raw waves the groups hold must not leak out as a figure)."""
    imp = load_rocprof(str(LAUNCHES))
    assert not [n for n in imp.notes if "differs between" in n]
    assert all("occupancy_achieved" not in k.meta for k in imp.kernels)


def test_rocprof_occupancy_notes_print_by_the_one_rule(monkeypatch):
    """occupancy_note and achieved_note format through occupancy_words.occupancy_pct (a
    stand-in '<x>' shows it), not sides.share_text directly: one rule to change. The real
    output is unchanged (test_s30_hc_rocprof_occupancy, test_s36_l_achieved_occupancy)."""
    from rooflab.model import occupancy_words

    monkeypatch.setattr(occupancy_words, "occupancy_pct", lambda pct, high=None: f"<{pct:g}>")
    imp = load_rocprof(str(LAUNCHES), device="mi300x")
    (theo,) = [n for n in imp.notes if n.startswith("theoretical occupancy")]
    (got,) = [n for n in imp.notes if n.startswith("achieved occupancy")]
    assert "triad <100> (" in theo
    assert "triad <50>, copy <50>" in got


HEAD = "Index,KernelName,gpu-id,queue-id,BeginNs,EndNs,SQ_INSTS_VALU_FMA_F32,"


def _dram_notes(tmp_path, counts: dict, on: str | None) -> list[str]:
    """The notes of one hand-made dispatch (rocprof v1 results.csv layout)."""
    p = tmp_path / "results.csv"
    p.write_text(HEAD + ",".join(counts) + "\n0,k,2,0,1000,11000,1000,"
                 + ",".join(str(v) for v in counts.values()) + "\n")
    return list(load_rocprof(str(p), device=on).notes)


@pytest.mark.parametrize("on", [None, "mi300x", "mi355x"])
def test_mi300_split_counter_notes_use_its_tcc_ea0_spelling(tmp_path, on):
    """A TCC_EA0_ file (MI300 gfx942, MI350 gfx950) without the split counters: the notes
    ask for TCC_EA0_RDREQ_32B and TCC_EA0_WRREQ_64B. Old: TCC_EA_RDREQ_32B, gfx90a's name.
    DRAM is unchanged: 64 x 100 reads + 32 x 100 writes = 9,600 B (every read 64 B, every
    write 32 B, as the notes say)."""
    notes = _dram_notes(tmp_path, {"TCC_EA0_RDREQ_sum": 100, "TCC_EA0_WRREQ_sum": 100,
                                   "TCC_BUBBLE_sum": 0}, on)
    text = "\n".join(notes)
    assert "TCC_EA0_RDREQ_32B not collected: every DRAM read assumed 64 B" in text
    assert "TCC_EA0_WRREQ_64B not collected: every DRAM write assumed 32 B" in text
    assert "TCC_EA_RDREQ_32B" not in text and "TCC_EA_WRREQ_64B" not in text
    p = tmp_path / "results.csv"
    assert load_rocprof(str(p), device=on).kernels[0].bytes["DRAM"] == 9_600


def test_mi300_one_direction_note_uses_its_spelling(tmp_path):
    """TCC_EA0_RDREQ alone on an MI300X: 'DRAM = reads only: TCC_EA0_RDREQ without
    TCC_EA0_WRREQ' (old: the TCC_EA_ names)."""
    notes = _dram_notes(tmp_path, {"TCC_EA0_RDREQ_sum": 100, "TCC_EA0_RDREQ_32B_sum": 0,
                                   "TCC_BUBBLE_sum": 0}, "mi300x")
    assert any("DRAM = reads only: TCC_EA0_RDREQ without TCC_EA0_WRREQ (" in n for n in notes)


@pytest.mark.parametrize("on", [None, "mi250x", "mi300x"])
def test_mi200_notes_keep_tcc_ea_spelling(tmp_path, on):
    """A TCC_EA_ file is an MI100/MI200's (rocprof_arch.read_as: whatever --on names): its
    notes keep TCC_EA_RDREQ_32B and TCC_EA_WRREQ_64B (a guard against spelling by --on;
    it passes on the old code too)."""
    said = [n for n in _dram_notes(tmp_path, {"TCC_EA_RDREQ_sum": 100,
                                              "TCC_EA_WRREQ_sum": 100}, on)
            if "B not collected" in n]   # (under --on mi300x read_as's note names TCC_EA0_)
    assert len(said) == 2
    assert said[0].startswith("k: TCC_EA_RDREQ_32B not collected")
    assert said[1].startswith("k: TCC_EA_WRREQ_64B not collected")
    assert not any("TCC_EA0_" in n for n in said)

"""Audit 8: a what-if's predicted kernel carries no measured-timing meta; compare says when it
added up same-named kernels of one run."""

import json

import pytest

from rooflab.bench.check import check_floors
from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.measuring import resolve_plan, timed_kernel
from rooflab.model import Kernel
from rooflab.model.compare import compare_kernels
from rooflab.model.retime import MEASURED_META
from rooflab.model.schema import kernel_to_dict
from rooflab.model.whatif import change_precision, fuse

# What `rooflab bench` writes about a measured time (measuring.timed_kernel + check_floors).
TIMING_KEYS = {"median_s", "best_s", "spread", "iqr_rel", "samples_n", "calls_per_sample",
               "floor_s", "floor_ratio", "flags"}


def bench_kernel(name: str = "triad") -> Kernel:
    """A kernel as `rooflab bench` makes it: timed by the probe's timer, floors checked."""
    roof = load_roof("T4")
    k = timed_kernel(lambda: None, name=name, flop={"fp32": 2e6}, bytes={"DRAM": 12e6},
                     provenance={"flop": "counted", "bytes": "counted"}, plan=resolve_plan("quick"),
                     meta={"op": "elementwise", "shape": {"n": 1_000_000}})
    return check_floors(roof, (k,))[0]


def test_bench_kernel_whatif_json_has_no_measured_timing(tmp_path, capsys):
    k = bench_kernel()
    assert TIMING_KEYS <= set(k.meta)            # the input really is a bench kernel
    assert TIMING_KEYS <= set(MEASURED_META)
    path = tmp_path / "bench.json"
    path.write_text(json.dumps({"kernels": [kernel_to_dict(k)]}))
    out = tmp_path / "w.json"
    assert main(["whatif", str(path), "--on", "T4", "--precision", "fp16",
                 "-o", str(out)]) == 0
    capsys.readouterr()
    d = json.loads(out.read_text())
    new = d["after"]["kernels"][0]
    assert not TIMING_KEYS & set(new["meta"]), new["meta"]
    assert new["meta"]["op"] == "elementwise" and new["meta"]["shape"] == {"n": 1_000_000}
    assert new["meta"]["whatif"] == "precision -> fp16"
    assert new["provenance"]["seconds"] == "derived"
    # a no-op "kernel" runs far below its floor: it keeps its measured-to-floor ratio
    # (review r8 F1), so half the bytes halve its time, not the old median's fp16 work floor
    # 6 MB / 320 GB/s = 18.75 us (T4); its measured time is under the 5 us launch floor, so
    # that floor is left out of both times, as report leaves it out (review r1 F6)
    assert new["seconds"] == pytest.approx(k.seconds / 2)
    # after_floor_s is the "with launches" floor (review 11b #7): max(5 us, 18.75 us)
    assert d["moves"][0]["after_floor_s"] == pytest.approx(6e6 / 320e9)


def test_untimed_whatif_kernel_says_no_measured_seconds():
    k = bench_kernel().with_(seconds=None, samples=())
    new = change_precision(load_roof("T4"), [k], "fp16").after.kernels[0]
    assert new.seconds is None
    assert "seconds" not in new.provenance
    assert not TIMING_KEYS & set(new.meta)


def test_fused_kernel_has_no_member_timing():
    roof = load_roof("T4")
    w = fuse(roof, [bench_kernel("add"), bench_kernel("relu")], ["add", "relu"])
    new = w.after.kernels[0]
    assert new.name == "add+relu" and new.meta["fused"] == ["add", "relu"]
    assert not TIMING_KEYS & set(new.meta)
    assert new.provenance["seconds"] == "derived"


def k(name, seconds, flop=1e9, nbytes=1e9):
    return Kernel(name, {"fp32": flop}, {"DRAM": nbytes}, seconds=seconds)


def test_compare_notes_same_named_kernels_it_added_up():
    before = [k("gemm", 1.0), k("gemm", 0.5), k("add", 0.1)]
    after = [k("gemm", 1.0), k("add", 0.1), k("add", 0.1), k("add", 0.1)]
    c = compare_kernels(before, after)
    by = {m.name: m for m in c.matches}
    assert by["gemm"].speedup == pytest.approx(1.5)     # (1.0 + 0.5) / 1.0
    assert by["add"].speedup == pytest.approx(1 / 3)    # 0.1 / (3 x 0.1)
    summed = [n for n in c.notes if "added up" in n]
    assert summed == ["gemm: 2 entries of this name in the first run, added up (FLOP, "
                      "bytes, seconds, calls)",
                      "add: 3 entries of this name in the second run, added up (FLOP, "
                      "bytes, seconds, calls)"]
    # a time on one entry only: the sum has none, and the note says why
    c = compare_kernels([k("mm", 1.0), k("mm", None)], [k("mm", 1.0)])
    assert c.matches[0].before.seconds is None and c.matches[0].speedup is None
    assert c.notes == ("mm: 2 entries of this name in the first run, added up (FLOP, bytes, "
                       "seconds, calls); 1 without a time, so the sum has none",)
    # one entry per name on both sides: no such note
    assert not [n for n in compare_kernels([k("a", 1.0)], [k("a", 2.0)]).notes
                if "added up" in n]


def test_compare_cli_prints_and_emits_the_summed_note(tmp_path, capsys):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("name,flop,bytes,seconds\nconv,1e9,1e8,0.002\nconv,1e9,1e8,0.003\n")
    b.write_text("name,flop,bytes,seconds\nconv,2e9,2e8,0.004\n")
    assert main(["compare", str(a), str(b)]) == 0
    text = " ".join(capsys.readouterr().err.split())
    assert "note: conv: 2 entries of this name in the first run, added up" in text
    assert main(["compare", str(a), str(b), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["matches"][0]["before_s"] == pytest.approx(0.005)
    assert d["speedup"] == pytest.approx(0.005 / 0.004)
    assert any(n.startswith("conv: 2 entries of this name in the first run")
               for n in d["notes"])

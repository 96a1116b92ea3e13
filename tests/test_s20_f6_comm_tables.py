"""Review s20 r3 F4/F6/F8: `probe --comm` prints the time per call by size (nccl-tests'
`time (us)`), each note once, and the fits' "miss their own samples" note is in the
profile's measured.notes and on stderr under --json. No rank is started."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from rooflab.cli import probe_comm
from rooflab.hardware.profile import MachineProfile, profile_to_dict
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.probe.comm.cluster import merge
from rooflab.probe.comm.collectives import CollectiveResult, SizeResult

KiB, MiB = 1 << 10, 1 << 20
# an all-reduce whose fit misses: 1.0 ms at 1 KiB, 0.5 ms at 64 KiB, 4 ms at 1 MiB, 20 ms
# at 16 MiB: t = 556 us + S / 0.769 GB/s misses the 64 KiB point by 52 %
TIMES = {KiB: 1.0e-3, 64 * KiB: 0.5e-3, MiB: 4.0e-3, 16 * MiB: 20e-3}


def _result() -> CollectiveResult:
    rows = tuple(SizeResult(n, 3, (t, t, t)) for n, t in TIMES.items())
    return CollectiveResult("all_reduce", 2, rows)


def _rank(rank: int, warning: str = "") -> dict:
    warns = (warning,) if warning else ()
    roof = Roof("cpu", kind="measured",
                compute=(Ceiling(5e10, precision="fp64", unit="vector",
                                 provenance="measured"),),
                memory=(Ceiling(1.8e10, level="DRAM", provenance="measured", warnings=warns),))
    prof = MachineProfile(host={"name": "cpu"}, measured=roof)
    return {"rank": rank, "hostname": "h", "local_rank": rank, "device": "cpu",
            "profile": profile_to_dict(prof)}


def _merged():
    return merge([_rank(0), _rank(1)], [_result()], backend="gloo", backend_why="no GPU",
                 mode="quick", levels={"world": "loopback", "intra-node": "loopback",
                                       "inter-node": "network"}, wall_s=1.0)


def test_fit_note_is_in_the_profiles_notes():
    prof = _merged()
    worst = prof.extras["comm"]["collectives"][0]["fit"]["max_rel_residual"]
    assert worst == pytest.approx(0.52, abs=0.005)
    said = [n for n in prof.measured.notes if n.startswith("alpha/beta fits")]
    assert len(said) == 1 and "(resid !): all-reduce 52 %;" in said[0]


def test_json_run_says_the_fit_note_on_stderr(monkeypatch, tmp_path, capsys):
    pytest.importorskip("torch", reason="`probe --comm` checks that torch is installed first")
    prof = _merged()
    monkeypatch.setattr("rooflab.probe.comm.run.probe_comm", lambda *a, **k: prof)
    monkeypatch.setattr("rooflab.cli.probe.warn_if_busy", lambda *a, **k: None)
    for key in ("TORCHELASTIC_RUN_ID", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(key, raising=False)
    assert probe_comm.run(2, "quick", str(tmp_path / "c.json"), json_out=True) == 0
    captured = capsys.readouterr()
    assert "warning: alpha/beta fits that miss their own median times by more than 25 % " \
           "at some size (resid !): all-reduce 52 %" in " ".join(captured.err.split())
    written = json.loads((tmp_path / "c.json").read_text())
    assert sum("all-reduce 52 %" in n for n in written["measured"]["notes"]) == 1


def test_time_per_call_table_by_size():
    prof = _merged()
    header, body = probe_comm.time_rows(prof)
    assert header == ["size", "AR"]
    # medians of the samples, in us as nccl-tests prints them
    assert body == [["1K", "1000"], ["64K", "500"], ["1M", "4000"], ["16M", "20000"]]
    assert probe_comm._us(45.2e-6) == "45.2" and probe_comm._us(0.2134567) == "213457"
    titles = [t.title for t in probe_comm.tables(prof)]
    assert titles[-1] == "time per call, us, by message size (median of samples)"


def test_each_note_printed_once(capsys):
    # DRAM (real traffic) carries a copy of DRAM's warning: the 2-rank run printed it twice
    warn = ("DRAM bandwidth: samples vary (interquartile range 18.6% of the median, median "
            "3.0% below the best); other load on the machine or clock changes; rerun on a "
            "quiet machine or use --full")
    roof = Roof("2 x cpu", kind="measured", memory=(
        Ceiling(1.8e10, level="DRAM", provenance="measured", warnings=(warn,)),
        Ceiling(1.7e10, level="DRAM (real traffic)", provenance="measured",
                warnings=(warn,)),
        Ceiling(1.2e9, level="loopback", provenance="measured", method="broadcast")))
    prof = SimpleNamespace(measured=roof, extras={"comm": {"collectives": []}})
    said = probe_comm.notes(prof)
    assert said.count(warn) == 1
    assert said[0] == "loopback ceiling: 1.2 GB/s (broadcast)"


def test_table_header_says_what_size_means():
    prof = _merged()
    title = probe_comm.tables(prof)[1].title
    assert re.search(r"; size = the whole buffer, as nccl-tests$", title)

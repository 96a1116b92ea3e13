"""Other work on the machine during the CPU probe (probe/cpu/load.py): /proc/stat busy
time minus the probe's own CPU time, steal, the load average before, the notes, the
fallback without /proc/stat, and the CLI's early warning. Fakes only: no real probe."""

from __future__ import annotations

import json
from dataclasses import replace
from types import SimpleNamespace

import pytest
from cpu_probe_fakes import assembled_profile

from rooflab.cli import probe as probe_cli
from rooflab.cli.main import main
from rooflab.hardware.profile import MachineProfile
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.probe.cpu import load
from rooflab.probe.cpu.flags import busy_start_warning, machine_load_notes


def stat(cpu0: tuple[int, ...], cpu1: tuple[int, ...]) -> str:
    """A /proc/stat with two CPUs: user nice system idle iowait irq softirq steal guest
    guest_nice; the aggregate line is their sum, as the kernel writes it."""
    total = tuple(a + b for a, b in zip(cpu0, cpu1, strict=True))
    line = " ".join
    return (f"cpu  {line(map(str, total))}\ncpu0 {line(map(str, cpu0))}\n"
            f"cpu1 {line(map(str, cpu1))}\nintr 12345 0 0\nctxt 999\nbtime 1700000000\n"
            f"processes 4242\nprocs_running 3\n")


def times(user: float, system: float, cuser: float = 0.0, csys: float = 0.0):
    return SimpleNamespace(user=user, system=system, children_user=cuser,
                           children_system=csys, elapsed=0.0)


class Feed:
    """Hands out the next of a list of values on each call."""

    def __init__(self, *values):
        self.values = list(values)

    def __call__(self):
        return self.values.pop(0)


REAL_SOURCES = load.LoadSources   # the tests below patch the module's name


def sources(stats, own, walls, loadavg=(3.1, 2.0, 1.0), cpus=frozenset({0, 1}),
            machine_cpus=2, platform="linux") -> load.LoadSources:
    return REAL_SOURCES(
        read_stat=Feed(*stats), times=Feed(*own), clock=Feed(*walls),
        loadavg=None if loadavg is None else (lambda: loadavg), ticks_per_s=100.0,
        affinity=lambda: cpus, machine_cpus=machine_cpus, platform=platform)


# Before: both CPUs with some history. After 10 s: cpu0 +1000 busy jiffies (user 700,
# system 200, irq 20, softirq 40, steal 40), cpu1 +500 (user 400, nice 50, system 50);
# idle and iowait (not busy) and guest (already inside user) grow too and must not count.
BEFORE = stat((1000, 10, 300, 5000, 50, 5, 7, 3, 100, 0), (2000, 0, 400, 4000, 20, 0, 1, 2, 0, 0))
AFTER = stat((1700, 10, 500, 5050, 90, 25, 47, 43, 600, 0),
             (2400, 50, 450, 4500, 20, 0, 1, 2, 0, 0))


def measure(stats=(BEFORE, AFTER), own=(times(1.0, 0.5), times(7.0, 2.0, 0.3, 0.2)),
            walls=(100.0, 110.0), threads=2, **kw) -> load.MachineLoad:
    src = sources(stats, own, walls, **kw)
    avg = load.loadavg_1m(src)
    before = load.snapshot(src)
    return load.machine_load(before, load.snapshot(src), threads, avg, src)


# --- the arithmetic, by hand ------------------------------------------------------------
def test_share_by_hand_two_cpus_ten_seconds():
    m = measure()
    # busy delta 1000 + 500 = 1500 jiffies at 100 Hz = 15 CPU-s; own CPU (7 + 2 + 0.3 +
    # 0.2) - (1 + 0.5) = 8 s (children included) -> other 7 s over 10 s x 2 CPUs = 35 %.
    assert m.window_s == 10.0 and m.own_cpu_s == pytest.approx(8.0)
    assert m.other_cpu_s == pytest.approx(7.0)
    assert m.other_cpu_share == pytest.approx(0.35)
    # steal 40 jiffies = 0.4 s of 20 CPU-s = 2 %.
    assert m.steal_share == pytest.approx(0.02)
    assert m.loadavg_1m_before == 3.1 and m.cpus == 2 and m.threads == 2
    assert m.contended_share == pytest.approx(0.35)   # no spare CPU: the same
    d = m.to_dict()
    assert d["other_cpu_share"] == pytest.approx(0.35) and d["cpus"] == 2
    assert "/proc/stat" in d["method"] and "CPUs 0-1" in d["method"]
    json.dumps(d)


def test_own_time_above_busy_time_is_no_negative_share():
    # tick accounting is coarser than the process's own: a quiet machine may show less
    # busy time than the probe's CPU time; that is 0 other work, not -5 %.
    m = measure(own=(times(0, 0), times(16.0, 0.0)))
    assert m.other_cpu_s == 0.0 and m.other_cpu_share == 0.0


def test_only_the_probes_cpus_are_counted():
    # The probe may run on CPU 1 only (taskset): cpu0's 1000 jiffies are not its concern.
    m = measure(cpus=frozenset({1}), own=(times(0, 0), times(4.0, 0.0)))
    # cpu1: +500 jiffies = 5 s busy - 4 s own = 1 s over 10 s x 1 CPU = 10 %.
    assert m.cpus == 1 and m.other_cpu_share == pytest.approx(0.10)
    assert m.steal_share == 0.0


def test_parse_falls_back_to_the_aggregate_line():
    t = load.parse_proc_stat(AFTER, cpus={0, 5})   # CPU 5 has no line (a container)
    assert t.which == "all CPUs" and t.cpus == 2
    assert t.busy == (1700 + 10 + 500 + 25 + 47 + 43) + (2400 + 50 + 450 + 0 + 1 + 2)
    old = load.parse_proc_stat("cpu  10 0 5 100\ncpu0 10 0 5 100\n")   # no steal field
    assert old.busy == 15 and old.steal == 0
    assert load.parse_proc_stat("intr 1 2\n") is None


# --- the notes ----------------------------------------------------------------------------
def test_busy_machine_note():
    notes = machine_load_notes(measure())
    assert notes == ["other processes used 35 % of the CPUs while the probe ran (and the load "
                     "average was 3.1 on 2 CPUs before it started): measured ceilings read "
                     "low; rerun on a quiet machine"]


def test_quiet_machine_no_note():
    # other 1.5 s of 20 CPU-s = 7.5 %: below the 10 % threshold.
    m = measure(own=(times(0, 0), times(13.5, 0.0)), loadavg=(0.2, 0.3, 0.4))
    assert m.other_cpu_share == pytest.approx(0.075)
    assert machine_load_notes(m) == []


def test_steal_note():
    m = replace(measure(own=(times(0, 0), times(14.0, 0.0))), steal_share=0.08)
    notes = machine_load_notes(m)   # other 5 % (no busy note), steal 8 %
    assert len(notes) == 1 and notes[0].startswith("the VM's host took 8 % of the CPU time")


def test_spare_cpus_absorb_other_work():
    # --threads 1 on 2 CPUs: 7 s of other work over 10 s is 0.7 CPUs, which fit on the CPU
    # the probe left free; at 1.3 CPUs, 0.3 of them competed with the probe's one thread.
    m = measure(threads=1)
    assert m.contended_share == 0.0 and machine_load_notes(m) == []
    m = replace(m, other_cpu_s=13.0, other_cpu_share=0.65)
    assert m.contended_share == pytest.approx(0.3)
    assert machine_load_notes(m)[0].startswith(
        "other processes used 1.3 CPUs on average while the probe ran 1 thread on 2 CPUs, "
        "30 % of the CPUs its threads needed")


# --- without /proc/stat -------------------------------------------------------------------
def test_no_proc_stat_keeps_the_load_average_and_says_so():
    m = measure(stats=(None, None), platform="darwin")
    assert m.other_cpu_share is None and m.steal_share is None and m.other_cpu_s is None
    assert m.loadavg_1m_before == 3.1
    assert m.method.startswith("no /proc/stat on this system (darwin): other work during "
                               "the probe is not measured; 1-minute load average")
    notes = machine_load_notes(m)   # 3.1 >= 2 CPUs: the only evidence, said as such
    assert len(notes) == 1 and "the load average was 3.1 on 2 CPUs before the probe" in notes[0]
    assert "no /proc/stat" in notes[0]
    assert machine_load_notes(replace(m, loadavg_1m_before=0.5)) == []


def test_no_proc_stat_and_no_load_average_records_nothing_invented():
    m = measure(stats=(None, None), loadavg=None, platform="win32")
    assert m.loadavg_1m_before is None and m.other_cpu_share is None
    assert m.method.endswith("no load average on this system")
    assert machine_load_notes(m) == []


# --- the early warning --------------------------------------------------------------------
def test_busy_start_warning_threshold():
    assert busy_start_warning(1.9, 2) is None and busy_start_warning(None, 2) is None
    w = busy_start_warning(3.1, 2)
    assert w.startswith("the machine is busy: the 1-minute load average is 3.1 on 2 CPUs")
    assert "Ctrl-C" in w


def _busy_profile() -> MachineProfile:
    note = machine_load_notes(measure())[0]
    roof = Roof(name="fake measured", kind="measured", notes=(note,),
                compute=(Ceiling(1e11, precision="fp64", unit="vector", provenance="measured"),),
                memory=(Ceiling(2e10, level="DRAM", provenance="measured"),))
    return MachineProfile(host={"name": "fake"}, measured=roof,
                          extras={"machine_load": measure().to_dict() | {"notes": [note]}})


def test_cli_warns_before_the_probe_and_repeats_the_note_with_json(monkeypatch, capsys):
    pytest.importorskip("numba", reason="the CPU probe needs numba (the [cpu] extra)")
    fake = sources((None, None), (times(0, 0),) * 2, (0.0, 0.0), machine_cpus=2)
    monkeypatch.setattr(load, "LoadSources", lambda: fake)
    seen = {}

    def fake_run_probe(device, mode, threads, progress):
        seen["stderr"] = capsys.readouterr().err   # what was said before the long work
        return _busy_profile()

    monkeypatch.setattr(probe_cli, "run_probe", fake_run_probe)
    assert main(["probe", "--quick", "--json"]) == 0
    assert "warning: the machine is busy: the 1-minute load average is 3.1 on 2" in seen["stderr"]
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert data["extras"]["machine_load"]["other_cpu_share"] == pytest.approx(0.35)
    assert "warning: other processes used 35 % of the CPUs" in out.err


def test_cli_quiet_start_no_warning_and_table_prints_the_note(monkeypatch, capsys):
    pytest.importorskip("numba", reason="the CPU probe needs numba (the [cpu] extra)")
    fake = sources((None, None), (times(0, 0),) * 2, (0.0, 0.0), loadavg=(0.3, 0, 0),
                   machine_cpus=2)
    monkeypatch.setattr(load, "LoadSources", lambda: fake)
    monkeypatch.setattr(probe_cli, "run_probe", lambda *a: _busy_profile())
    assert main(["probe", "--quick", "-q"]) == 0
    out = capsys.readouterr()
    assert "warning" not in out.err
    assert "note: other processes used 35 % of the CPUs while the probe ran" in out.out


# --- in the profile -----------------------------------------------------------------------
def test_assembled_profile_carries_the_figures_and_the_note_first():
    profile = assembled_profile(50e9, 1e11, notes=["an earlier note"], load=measure())
    ml = profile.extras["machine_load"]
    assert ml["other_cpu_share"] == pytest.approx(0.35) and ml["steal_share"] == 0.02
    assert ml["loadavg_1m_before"] == 3.1 and ml["notes"][0].startswith("other processes")
    assert profile.measured.notes[0].startswith("other processes used 35 %")
    assert profile.measured.notes[1] == "an earlier note"
    # one core is "1 core", not "1 cores"
    assert "1 core @" in profile.nominal.name and "1 cores" not in profile.nominal.name


def test_demo_warns_before_the_probe(monkeypatch, capsys, tmp_path):
    from rooflab.cli import demo as demo_cli

    fake = sources((None, None), (times(0, 0),) * 2, (0.0, 0.0), loadavg=(2.0, 0, 0),
                   machine_cpus=2)
    monkeypatch.setattr(load, "LoadSources", lambda: fake)

    def fake_run_demo(progress=None):
        assert "warning: the machine is busy" in capsys.readouterr().err
        raise KeyboardInterrupt   # stop here: the rest is test_demo.py's

    monkeypatch.setattr(demo_cli, "run_demo", fake_run_demo)
    assert main(["demo", "-o", str(tmp_path / "d")]) == 130

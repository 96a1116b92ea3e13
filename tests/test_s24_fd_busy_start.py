"""Review s24 r2 F10: the start-of-probe "machine is busy" warning compared the host-wide
1-minute load average with every host CPU (os.cpu_count()), so a Kubernetes pod with
exclusive idle CPUs on a loaded node was told to stop, and a 4-CPU cpuset shared with 10
runnable tasks on a 64-CPU host was not warned. Now a short /proc/stat sample over the
CPUs this process may run on (load.start_sample) decides (flags.busy_start_note), counting
only work beyond the CPUs the probe's threads leave free, as the end-of-probe note does.
Fake /proc/stat text and load averages only: nothing is slept or measured."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rooflab.probe.cpu import load
from rooflab.probe.cpu.flags import busy_start_note, busy_start_warning

TICKS = 100.0      # USER_HZ
WINDOW = 0.25      # load.START_SAMPLE_S: 25 ticks per CPU


def stat(busy: dict[int, int], cpus: int) -> str:
    """/proc/stat for `cpus` CPUs: CPU i has busy[i] user ticks, the rest of 1000 idle
    (user nice system idle iowait irq softirq steal guest guest_nice)."""
    rows = [(busy.get(i, 0), 0, 0, 1000 - busy.get(i, 0), 0, 0, 0, 0, 0, 0)
            for i in range(cpus)]
    total = [sum(col) for col in zip(*rows, strict=True)]
    lines = [f"cpu  {' '.join(map(str, total))}"]
    lines += [f"cpu{i} {' '.join(map(str, r))}" for i, r in enumerate(rows)]
    return "\n".join(lines + ["intr 1 0", "ctxt 9", "procs_running 3", ""])


class Feed:
    def __init__(self, *values):
        self.values = list(values)

    def __call__(self):
        return self.values.pop(0)


def sample(before: str | None, after: str | None, *, mask, machine_cpus, loadavg,
           threads):
    slept = []
    own = SimpleNamespace(user=1.0, system=0.2)    # the sleeping CLI used no CPU meanwhile
    src = load.LoadSources(read_stat=Feed(before, after), times=lambda: own,
                           loadavg=lambda: (loadavg, 0.0, 0.0), clock=Feed(10.0, 10.0 + WINDOW),
                           ticks_per_s=TICKS, affinity=lambda: frozenset(mask),
                           machine_cpus=machine_cpus, platform="linux")
    got = load.start_sample(src, threads=threads, sleep=slept.append)
    return got, slept


def test_exclusive_idle_cpus_on_a_loaded_node_are_not_busy():
    # a Guaranteed pod with CPUs 4-7 of an 8-CPU node whose CPUs 0-3 run flat out
    # (load average 12): the old rule warned (12 >= 8); the pod's own CPUs are idle
    assert busy_start_warning(12.0, 8) is not None
    before = stat({0: 100, 1: 100, 2: 100, 3: 100}, 8)
    after = stat({0: 125, 1: 125, 2: 125, 3: 125}, 8)       # +25 ticks = 100 % each
    got, slept = sample(before, after, mask=range(4, 8), machine_cpus=8, loadavg=12.0,
                        threads=4)
    assert slept == [WINDOW] and got.cpus == 4 and got.other_cpu_s == 0.0
    assert busy_start_note(got) is None


def test_a_shared_cpuset_on_a_big_quiet_host_is_busy():
    # a 4-CPU cpuset (0-3) of a 64-CPU host shared with 10 runnable tasks: load average 10
    # < 64 said nothing; CPUs 0-3 are all taken
    assert busy_start_warning(10.0, 64) is None
    before = stat({}, 64)
    after = stat({0: 25, 1: 25, 2: 25, 3: 25}, 64)
    got, _ = sample(before, after, mask=range(4), machine_cpus=64, loadavg=10.0, threads=4)
    assert got.other_cpu_s == 1.0                           # 100 ticks / 100 per s
    w = busy_start_note(got)
    assert w.startswith("the machine is busy: other processes kept 4.0 of the 4 CPUs this "
                        "process may run on busy (/proc/stat over 0.25 s; the host-wide "
                        "1-minute load average is 10.0 on 64 CPUs); other work will lower")
    assert "Ctrl-C" in w


def test_a_quota_counts_only_the_threads_it_can_keep_busy():
    # a 2-CPU quota on an 8-CPU mask: the probe runs 2 threads, 6 CPUs are left free
    before = stat({}, 8)
    five = stat({i: 25 for i in range(5)}, 8)              # 5 busy CPUs: 3 still free
    got, _ = sample(before, five, mask=range(8), machine_cpus=8, loadavg=5.0, threads=2)
    assert got.contended_share == 0.0 and busy_start_note(got) is None
    # 7 busy CPUs and 13 ticks on the 8th: 1.88 CPU-s over 0.25 s = 7.52 CPUs, 1.52 beyond
    # the 6 free, 76 % of the 2 the threads need
    most = stat({i: 25 for i in range(7)} | {7: 13}, 8)
    got, _ = sample(before, most, mask=range(8), machine_cpus=8, loadavg=7.5, threads=2)
    assert got.contended_share == pytest.approx(0.76)
    w = busy_start_note(got)
    assert "kept 7.5 of the 8 CPUs" in w and "more than the 6 the probe's 2 threads leave free" in w


def test_half_the_cpus_taken_is_left_to_the_end_note():
    # one of two CPUs busy: 50 %, below START_BUSY; the old rule (load 1 < 2) was silent too
    got, _ = sample(stat({}, 2), stat({0: 25}, 2), mask=(0, 1), machine_cpus=2, loadavg=1.0,
                    threads=2)
    assert got.contended_share == 0.5 and busy_start_note(got) is None


def test_no_proc_stat_keeps_the_load_average_rule_and_does_not_sleep():
    got, slept = sample(None, None, mask=(), machine_cpus=2, loadavg=3.1, threads=2)
    assert slept == [] and got.other_cpu_s is None
    assert busy_start_note(got).startswith(
        "the machine is busy: the 1-minute load average is 3.1 on 2 CPUs")

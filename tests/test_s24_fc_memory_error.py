"""A MemoryError in a measuring verb says what ran out and how to fix it (review s24 r2 F2,
F8's wording half): it said "the input is too large to analyse ... split it (fewer kernels
or files a run)" for `probe` (no input at all) under `ulimit -v`, and for `bench --kernel
load --size 1000GiB` named the --on profile read before the kernel ran.

The MemoryError is raised here by a function whose module is the probe's (or the bench
kernels'), as numpy's allocation raises it inside rooflab.probe.cpu.bandwidth; no real
probe runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from rooflab.cli.main import main

SEEDS = Path(__file__).resolve().parents[1] / "examples" / "seeds"


# imported before any test patches bench_roofs.timed_with_load: these bind it at import, and
# a first import under the patch kept the stand-in for every later test of the worker
import rooflab.cli.bench_run  # noqa: E402, F401
import rooflab.cli.bench_zoo  # noqa: E402, F401


def raising_in(module: str):
    """A function that raises MemoryError from a frame of `module` (its globals' name)."""
    space = {"__name__": module}
    exec("def allocate(*args, **kwargs):\n    raise MemoryError\n", space)
    return space["allocate"]


@pytest.fixture
def no_cap(monkeypatch):
    import resource  # no `ulimit -v` here, whatever the test machine's

    monkeypatch.setattr(resource, "getrlimit",
                        lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


RAISE = ("raise `ulimit -v` or the container's memory limit (docker --memory, a pod's "
         "limits.memory, a job's --mem), free memory, or run on a machine with more memory")


def test_probe_out_of_memory_is_the_probes_working_set(monkeypatch, capsys, tmp_path, no_cap):
    # an earlier command in this process read a kernel file: not this command's input
    assert main(["report", str(SEEDS / "k.json"), "--on", "T4", "-q"]) == 0
    capsys.readouterr()
    monkeypatch.setattr("rooflab.cli.probe.run_probe",
                        raising_in("rooflab.probe.cpu.bandwidth"))
    monkeypatch.setattr("rooflab.cli.probe.warn_if_busy", lambda *a, **kw: None)
    assert main(["probe", "--quick", "-o", str(tmp_path / "p.json")]) == 2
    err = capsys.readouterr().err
    # old: "error: out of memory (the input read last: .../k.json): the input is too large
    # to analyse in this machine's memory; split it (fewer kernels or files a run) ..."
    assert err == ("error: out of memory measuring this machine: the probe's working set "
                   "(its DRAM arrays, several times the last-level cache) does not fit in "
                   f"the memory this process may use; {RAISE}\n")
    assert not (tmp_path / "p.json").exists()


def test_the_address_space_cap_is_named(monkeypatch, capsys, tmp_path):
    import resource

    monkeypatch.setattr(resource, "getrlimit",
                        lambda which: (1200 * 2**20, resource.RLIM_INFINITY))
    monkeypatch.setattr("rooflab.cli.probe.run_probe",
                        raising_in("rooflab.probe.cpu.bandwidth"))
    monkeypatch.setattr("rooflab.cli.probe.warn_if_busy", lambda *a, **kw: None)
    assert main(["probe", "--full", "-o", str(tmp_path / "p.json")]) == 2
    err = capsys.readouterr().err
    # 1200 MiB = 1.17 GiB; --full's working set is 16x the LLC, the others' 12x
    assert ("does not fit in the memory this process may use (`ulimit -v`: 1.17 GiB of "
            "address space); leave out --full (its working set is a third larger), or "
            "raise `ulimit -v`") in err


def test_bench_kernel_names_its_size_not_the_profile(monkeypatch, capsys, no_cap):
    monkeypatch.setattr("rooflab.bench.kernel_runner.run_kernel",
                        raising_in("rooflab.bench.kernel_runner"))
    monkeypatch.setattr("rooflab.cli.bench_roofs.timed_with_load",
                        lambda fn, *a, **kw: fn())
    rc = main(["bench", "--kernel", "load", "--size", "64MiB", "--threads", "1",
               "--on", str(SEEDS / "t4p.json")])
    err = capsys.readouterr().err
    assert rc == 2
    # old: "out of memory (the input read last: .../t4p.json): the input is too large ..."
    assert err.splitlines()[-1] == (
        "error: out of memory running the kernel: its working set (--size 64MiB per thread x "
        "1 thread) does not fit in the memory this process may use; give a smaller --size "
        f"(half: --size 32MiB), or {RAISE}")
    assert "t4p.json" not in err


@pytest.mark.parametrize("options, working_set, advice", [
    # the default: 4xLLC per thread on bench's 1 thread (old: "x its threads ...; give a
    # smaller --size (e.g. 4xLLC) or fewer --threads": the size that had just failed, and
    # fewer than one thread; review s24 h2 F3)
    ([], "the default --size, 4x the last-level cache, per thread x 1 thread",
     "give a smaller --size (half: --size 2xLLC), or"),
    (["--size", "1MiB", "--threads", "2"], "--size 1MiB per thread x 2 threads",
     "give a smaller --size (half: --size 512KiB) or fewer --threads, or"),
    (["--size=3MB", "--threads=2"], "--size 3MB per thread x 2 threads",
     "give a smaller --size (half: --size 1.5MB) or fewer --threads, or"),
])
def test_bench_kernel_advice_is_really_smaller(monkeypatch, capsys, no_cap, options,
                                               working_set, advice):
    monkeypatch.setattr("rooflab.bench.kernel_runner.run_kernel",
                        raising_in("rooflab.bench.kernel_runner"))
    monkeypatch.setattr("rooflab.cli.bench_roofs.timed_with_load",
                        lambda fn, *a, **kw: fn())
    assert main(["bench", "--kernel", "load", *options, "--on", str(SEEDS / "t4p.json")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: out of memory running the kernel: its working set ({working_set}) does not "
        f"fit in the memory this process may use; {advice} {RAISE}")


def test_demo_out_of_memory_names_no_input(monkeypatch, capsys, tmp_path, no_cap):
    from rooflab.cli import demo as demo_cli

    monkeypatch.setattr(demo_cli, "run_demo", raising_in("rooflab.bench.zoo"))
    monkeypatch.setattr("rooflab.cli.probe.warn_if_busy", lambda *a, **kw: None)
    assert main(["demo", "-o", str(tmp_path / "d")]) == 2
    assert capsys.readouterr().err == (
        "error: out of memory timing the reference kernels: their arrays do not fit in the "
        f"memory this process may use; {RAISE}\n")


def test_an_input_being_read_is_still_named(monkeypatch, capsys):
    # reading an input stays the input's trouble, in a measuring verb too (s22 h1 H3)
    space = {"__name__": "rooflab.files_decode"}
    exec("def read(*args, **kwargs):\n"
         "    from rooflab.files_decode import LAST_READ\n"
         "    LAST_READ[0] = 'big.json'\n"
         "    raise MemoryError\n", space)
    monkeypatch.setattr("rooflab.cli.inputs.resolve_on", space["read"])
    assert main(["bench", "--kernel", "load", "--size", "1MiB", "--on", "big.json"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "error: out of memory (the input read last: big.json): the input is too large to "
        "analyse in this machine's memory; split it (fewer kernels or files a run) or run on "
        "a machine with more memory")


@pytest.mark.parametrize("argv, verb", [(["-q", "bench", "--kernel", "x"], "bench"),
                                        (["probe"], "probe"), ([], None)])
def test_the_verb_of_a_command_line(argv, verb):
    from rooflab.cli import memory_error

    assert memory_error._verb(argv) == verb

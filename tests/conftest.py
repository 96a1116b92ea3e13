"""Shared test helpers: the fixtures folder beside the clone, small roofs, the session's one
real quick CPU probe, and the collector frozen after collection (speed; review s18 r1)."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO.parent / "shared" / "fixtures"


# The collector's thresholds while pytest collects: rewriting the asserts of ~750 test files
# makes millions of short-lived AST nodes, and at the default 700 every 10th young collection
# escalated until ~55 full ones walked the whole heap (torch, numpy, ...): ~11 of a worker's
# ~40 CPU-s of collection, paid by each xdist worker (session 33). Restored after collection.
COLLECTION_GC_THRESHOLD = (100_000, 50, 100)
_gc_threshold_before: list[tuple[int, ...]] = []


def pytest_sessionstart(session):
    _gc_threshold_before.append(gc.get_threshold())
    gc.set_threshold(*COLLECTION_GC_THRESHOLD)


def pytest_collection_finish(session):
    """Move everything alive after collection (torch, numpy, every test module) out of the
    collector's sight: the bench zoo's gc.collect() after each kernel then walks only the
    tests' own objects, not the whole startup heap (~0.1-0.4 s a call in this process;
    review s18 r1 F6). Hypothesis is imported first: its plugins (trio's) register a
    Random that they check with gc.get_referrers, which cannot see frozen objects. The
    collector's thresholds go back to what they were before collection."""
    with contextlib.suppress(ImportError):
        import hypothesis  # noqa: F401
    if _gc_threshold_before:
        gc.set_threshold(*_gc_threshold_before.pop())
    gc.collect()
    gc.freeze()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After a test file's last test (its module fixtures finalized), collect what it left
    and freeze the survivors, as after collection: each explicit gc.collect() (the bench
    zoo's after every kernel, measure's before a counted call) walked every object the
    worker's earlier files had left alive, ~0.2-0.8 s a call by its ~2000th test (~300k
    objects), ~4x test_demo's time there (session 35). Garbage is still collected first;
    only cycles formed later among frozen objects would stay."""
    try:
        return (yield)
    finally:
        if nextitem is None or nextitem.path != item.path:
            gc.collect()
            gc.freeze()


@pytest.fixture(scope="session", autouse=True)
def _no_inherited_terminal_size():
    """The tables' width is the CLI's own choice (PIPE_WIDTH with no terminal), not the
    runner's: an xdist worker has COLUMNS=80 LINES=24 in its environment (GNU readline,
    imported there with no terminal, exports its 80x24 default), and every table folded at
    80 columns there, 26 tests failing under `-n 2` that pass serially. Tests that are
    about COLUMNS set it themselves."""
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)


@pytest.fixture(scope="session", autouse=True)
def _ctrl_c_as_from_a_terminal():
    """Ctrl-C reaches the CLI the way it does from a terminal, whatever launched pytest: a
    non-interactive shell's background job (`cmd &`, nohup in a script, some CI runners)
    starts with SIGINT ignored, and an ignored signal stays ignored in every child, so the
    interrupt tests' subprocesses never saw their SIGINT (7 failed that way, exit 0 instead
    of 130). Python installs default_int_handler only when SIGINT was not ignored."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)

@pytest.fixture(scope="session")
def quick_cpu_probe(tmp_path_factory):
    """(profile, progress stages): one real quick CPU probe for the whole session, and for
    every xdist worker of it (CI runs `-n 2`): the first worker to need it probes under a
    file lock and leaves it pickled beside the workers' temp folders, the other loads it
    (a second probe cost ~15 s and each disturbed the other's)."""
    pytest.importorskip("numba", reason="the CPU probe needs numba (pip install 'rooflab[cpu]')")
    from quick_probe import probe_once

    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return probe_once()
    import pickle

    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp().parent / "quick_cpu_probe.pickle"
    with FileLock(f"{shared}.lock"):
        if shared.is_file():
            return pickle.loads(shared.read_bytes())
        found = probe_once()
        shared.write_bytes(pickle.dumps(found))
        return found


@pytest.fixture
def quick_cpu_profile(quick_cpu_probe, monkeypatch):
    """The session's real quick profile, answered by `rooflab.probe.cpu.probe_cpu` (bench
    and demo import it by that name when they run): their end-to-end tests drive the verb
    on a real measured roof without probing a second and third time. The recorded
    progress stages are replayed to the verb's callback, as the real probe reports them."""
    profile, stages = quick_cpu_probe

    def recorded(mode="quick", progress=None, **_kw):
        assert mode == "quick", mode
        for stage, fraction in stages:
            if progress is not None:
                progress(stage, fraction)
        return profile

    monkeypatch.setattr("rooflab.probe.cpu.probe_cpu", recorded)
    return profile


GPP = FIXTURES / "ncu" / "nersc-gpp"


def gpp_recording(name: str) -> Path:
    """A NERSC GPP recording (ncu) by file name; the test skips with a reason where the
    shared fixtures are absent, or where an .ncu-rep's reader (ncu_report) is."""
    path = GPP / name
    if not path.is_file():
        pytest.skip(f"NERSC GPP recording {path} is absent (CI lays ../shared beside the clone)")
    if path.suffix == ".ncu-rep":
        pytest.importorskip("ncu_report")
    return path


@pytest.fixture
def fixtures_dir() -> Path:
    if not FIXTURES.is_dir():
        pytest.skip(f"recordings folder {FIXTURES} is absent (CI lays ../shared beside the clone)")
    return FIXTURES


@pytest.fixture
def gpp(fixtures_dir):
    """The NERSC GPP recordings' folder (ncu), skipped where they are absent."""
    path = fixtures_dir / "ncu" / "nersc-gpp"
    if not (path / "output1.csv").is_file():
        pytest.skip(f"NERSC GPP recordings {path} are absent")
    return path


@pytest.fixture
def output4(fixtures_dir) -> str:
    """The NERSC GPP step-4 Nsight Compute CSV (one launch, compute capability 8.9)."""
    path = fixtures_dir / "ncu" / "nersc-gpp" / "output4.csv"
    if not path.is_file():
        pytest.skip(f"NERSC GPP recording {path} is absent")
    return str(path)


@pytest.fixture
def rocprofv3_folder(tmp_path) -> str:
    """rocprofv3's output folder, two passes of one dispatch: 64 x 1000 MUL_F64 FLOP over
    64 x 500 + 32 x 500 B in 2 us (the first pass's timestamps)."""
    head = ("Correlation_Id,Dispatch_Id,Agent_Id,Queue_Id,Kernel_Name,Counter_Name,"
            "Counter_Value,Start_Timestamp,End_Timestamp\n")
    for n, rows in ((1, "1,1,2,0,scale,SQ_INSTS_VALU_MUL_F64,1000,0,2000\n"),
                    (2, "1,1,2,0,scale,TCC_EA0_RDREQ,500,10,2010\n"
                        "1,1,2,0,scale,TCC_EA0_WRREQ,500,10,2010\n")):
        d = tmp_path / "out" / "host" / f"pass_{n}"
        d.mkdir(parents=True)
        (d / "123_counter_collection.csv").write_text(head + rows)
    return str(tmp_path / "out")


@pytest.fixture()
def roof_file(tmp_path):
    """A small measured CPU roof as a JSON file (fp64 200 / fp32 400 GFLOP/s, DRAM 40 GB/s,
    a 0.5 us launch floor): bench and compare tests judge their kernels by it."""
    from rooflab.files import write_json
    from rooflab.model.ceiling import Ceiling, Roof
    from rooflab.model.roof_schema import roof_to_dict

    roof = Roof(name="test roof", kind="measured",
                compute=(Ceiling(2e11, precision="fp64", unit="vector", provenance="measured"),
                         Ceiling(4e11, precision="fp32", unit="vector", provenance="measured")),
                memory=(Ceiling(4e10, level="DRAM", provenance="measured"),),
                overhead_s=5e-7)
    path = tmp_path / "roof.json"
    write_json(path, {"roof": roof_to_dict(roof)})
    return str(path)

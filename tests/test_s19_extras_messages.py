"""Review s19 r3 (a minimal install): what a missing extra says, and when.

Missing modules are simulated with sys.modules[name] = None (import raises ImportError), as
tests/test_missing_extras_and_platforms.py does; "this CPU is in no catalog entry" by
replacing the catalog's name matcher (the CI runner's CPU may be named there).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import gpp_recording

from rooflab.cli.main import main

CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def _missing(monkeypatch, *names):
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def _no_catalog_cpu(monkeypatch):
    from rooflab.hardware import catalog

    monkeypatch.setattr(catalog, "match_device_name", lambda name: None)


def _pastes(line: str) -> bool:
    """The text from "pip install" to the end of `line` is valid bash (what a user copies)."""
    command = line[line.index("pip install"):]
    return subprocess.run(["bash", "-n", "-c", command], capture_output=True).returncode == 0


def _error_line(err: str) -> str:
    lines = [x for x in err.splitlines() if x.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# --- F1: probe --comm names every extra its ranks need, before any rank starts --------------
def _no_ranks(monkeypatch):
    from rooflab.probe.comm import launch

    def started(*a, **k):
        raise AssertionError("the ranks were started")

    monkeypatch.setattr(launch, "launch", started)
    try:   # CPU ranks (gloo), as on the CI runner
        from rooflab.probe.comm import needs

        monkeypatch.setattr(needs, "GPU_NODES", ())
    except ImportError:   # the code before the fix: no check, the ranks start
        pass


def test_comm_probe_without_numba_stops_before_the_ranks(monkeypatch, capsys, tmp_path):
    pytest.importorskip("torch", reason="torch installed, numba not: the [torch]-only venv")
    _missing(monkeypatch, "numba")
    _no_ranks(monkeypatch)
    out = tmp_path / "comm.json"
    assert main(["probe", "--comm", "--nproc", "2", "--quick", "-o", str(out)]) == 2
    line = _error_line(capsys.readouterr().err)
    assert "'numba' is not installed" in line and "CPU rank's own roof" in line
    assert line.endswith("install it with: pip install 'rooflab[cpu]'") and _pastes(line)
    assert not out.exists()


def test_comm_probe_without_torch_or_numba_names_both_in_one_command(monkeypatch, capsys,
                                                                       tmp_path):
    _missing(monkeypatch, "numba", "torch")
    _no_ranks(monkeypatch)
    out = tmp_path / "comm.json"
    assert main(["probe", "--comm", "--nproc", "2", "--quick", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    line = _error_line(err)
    assert "packages 'torch' and 'numba' are not installed" in line
    assert line.endswith(f"install them with: pip install torch==2.13.0 --index-url "
                         f"{CPU_INDEX} && pip install 'rooflab[torch,cpu]'")
    assert _pastes(line) and "the CPU build of PyTorch first" in err and not out.exists()


def test_install_command_takes_several_extras():
    from rooflab.errors import install_command

    assert install_command("html,ncu") == "pip install 'rooflab[html,ncu]'"
    assert install_command("torch,cpu") == (f"pip install torch==2.13.0 --index-url "
                                            f"{CPU_INDEX} && pip install 'rooflab[torch,cpu]'")


# --- F2/F6: bench without --on and without numba: the command ends the line -----------------
def test_bench_without_numba_or_catalog_cpu_ends_with_the_command(monkeypatch, capsys):
    _missing(monkeypatch, "numba")
    _no_catalog_cpu(monkeypatch)
    assert main(["bench", "--only", "copy", "--quick"]) == 2
    line = _error_line(capsys.readouterr().err)
    assert "or pass --on PROFILE.json or --on HARDWARE" in line
    assert line.endswith("install it with: pip install 'rooflab[cpu]'") and _pastes(line)


def test_bench_catalog_fallback_warning_ends_with_the_command(monkeypatch, capsys):
    from rooflab.hardware import catalog

    _missing(monkeypatch, "numba")
    # this CPU named as the catalog's Xeon Platinum 8480+: its nominal roof judges
    xeon = catalog.lookup("xeon-8480")
    monkeypatch.setattr(catalog, "match_device_name", lambda name: xeon)
    assert main(["bench", "--only", "copy", "--quick", "--json"]) == 0
    warning = [x for x in capsys.readouterr().err.splitlines() if "nominal roof" in x]
    assert len(warning) == 1 and f"nominal roof of {xeon.name}" in warning[0]
    assert warning[0].endswith("pip install 'rooflab[cpu]'") and _pastes(warning[0])


def test_bench_torch_cpu_without_numba_names_the_torch_cpu_probe(monkeypatch, capsys):
    pytest.importorskip("torch")
    _missing(monkeypatch, "numba")
    _no_catalog_cpu(monkeypatch)
    assert main(["bench", "--device", "torch-cpu", "--only", "copy", "--quick"]) == 2
    line = _error_line(capsys.readouterr().err)
    assert "`rooflab probe --device torch-cpu -o tc.json`, then pass --on tc.json" in line
    assert line.endswith("install it with: pip install 'rooflab[cpu]'") and _pastes(line)


# --- F3: bench --run checks the roof before running the script ------------------------------
def test_bench_run_without_a_roof_stops_before_the_script(monkeypatch, capsys, tmp_path):
    from rooflab.cli import bench_roofs

    _missing(monkeypatch, "numba")
    _no_catalog_cpu(monkeypatch)
    monkeypatch.setattr(bench_roofs, "_cuda_visible", lambda: False, raising=False)
    ran = tmp_path / "ran.txt"
    script = tmp_path / "kernels.py"
    script.write_text(f"open({str(ran)!r}, 'w').write('ran')\n")
    assert main(["bench", "--run", str(script)]) == 2
    line = _error_line(capsys.readouterr().err)
    assert "'numba' is not installed" in line and _pastes(line)
    assert not ran.exists()   # the script did not run


# --- F4: measure() on numpy without torch asks for flop=/bytes= first -----------------------
def test_measure_without_counts_or_torch_asks_for_flop_and_bytes(monkeypatch):
    import numpy as np

    import rooflab
    from rooflab.errors import MissingDependency

    _missing(monkeypatch, "torch")
    x = np.ones(1000)
    for call in (lambda: rooflab.measure(np.add, x, x),
                 lambda: rooflab.measure().__enter__()):
        with pytest.raises(MissingDependency) as info:
            call()
        first = str(info.value).splitlines()[0]
        assert first.startswith("measure(): pass flop= and bytes=: rooflab counts them only "
                                "from the PyTorch ops")
        assert first.endswith(f"for PyTorch code, install it with: pip install torch==2.13.0 "
                              f"--index-url {CPU_INDEX} && pip install 'rooflab[torch]'")
        assert _pastes(first)


# --- F9: specs show reads an .ncu-rep's recorded peaks, as --on does ------------------------
def test_specs_show_reads_an_ncu_rep_roof(capsys):
    rep = gpp_recording("output5.ncu-rep")
    assert main(["specs", "show", str(rep)]) == 0
    out = capsys.readouterr().out
    # the RTX 4060 Laptop's peaks ncu recorded (as `ncu --on output5.ncu-rep` judges by)
    assert "RTX 4060 Laptop GPU (profiler peaks)" in out
    assert "256 GB/s" in out and "156 GFLOP/s" in out and "1.66 TB/s" in out

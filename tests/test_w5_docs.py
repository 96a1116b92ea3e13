"""docs/python.md runs with rooflab's own dependencies (review r1_docs F2: its first cell
imported IPython, which rooflab does not depend on, and five later cells then failed on
`show`), and bench's note for a thread count a profile has no row for is one whole
sentence (F8: it stopped at "so its measured roof judges: probe this count ...")."""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from pathlib import Path

import pytest

from rooflab.hardware.profile import MachineProfile, profile_to_dict

DOC = Path(__file__).resolve().parents[1] / "docs" / "python.md"


def _cells(text: str) -> list[tuple[str, str | None]]:
    """Each python cell of the page and the plain output block right after it (or None)."""
    found = re.finditer(r"```python\n(.*?)```\n(?:```\n(.*?)```)?", text, re.S)
    return [(m.group(1), m.group(2)) for m in found]


def test_every_python_cell_of_python_md_runs_without_ipython(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    from cpu_probe_fakes import assembled_profile

    import rooflab.probe.cpu as cpu

    monkeypatch.setitem(sys.modules, "IPython", None)     # `import IPython` now fails
    monkeypatch.setitem(sys.modules, "IPython.lib.pretty", None)
    # the page's probe cell takes 10-40 s; a made-up quick probe stands in for it
    monkeypatch.setattr(cpu, "probe_cpu", lambda *a, **k: assembled_profile(1e11, 2e11))
    monkeypatch.chdir(tmp_path)
    cells = _cells(DOC.read_text())
    assert len(cells) >= 20
    namespace: dict = {}
    first_output = None
    for i, (code, shown) in enumerate(cells):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"docs/python.md cell {i}", "exec"), namespace)
        if i == 0:
            first_output = (out.getvalue(), shown)
    # the first cell's show(t4) prints what the page shows: the catalog's T4, line for line
    printed, shown = first_output
    assert printed.strip() == shown.strip()
    assert printed.splitlines()[0] == "Roof 'NVIDIA T4' (nominal)"
    assert "  fp16 tensor    65 TFLOP/s" in printed.splitlines()


SCALING = {"counts": [2, 4], "reference_threads": 4, "method": "m",
           "by_threads": {str(n): {"threads": n,
                                   "DRAM": {"bytes_per_s": 1e10 * n, "samples": [1e10 * n]},
                                   "fp64": {"flop_per_s": 5e10 * n, "samples": [5e10 * n]}}
                          for n in (2, 4)}}


def test_no_row_for_the_run_s_threads_is_one_whole_sentence(tmp_path):
    from cpu_probe_fakes import assembled_profile

    from rooflab.hardware.thread_rows import RUN, roofs_for_kernel_threads

    p = assembled_profile(1e11, 2e11)
    p = MachineProfile(host=p.host, nominal=p.nominal, measured=p.measured,
                       extras=dict(p.extras) | {"scaling": SCALING, "threads": 4})
    path = tmp_path / "t.json"
    path.write_text(json.dumps(profile_to_dict(p)))
    picked, said, warn = roofs_for_kernel_threads(str(path), 1, RUN)
    assert picked is None and warn
    assert said.endswith(
        f"the profile {path} was measured at 4 threads and has no 1-thread row (rows: 2, 4), "
        f"so its 4-thread roof judges this 1-thread run; to judge it at its own count, "
        f"probe that count: `rooflab probe --threads 1,all -o {path}`")

"""The core dependency floors are the oldest versions the CLI tests were run and passed on
(review s22 r5 F1/F2/F4): typer 0.27.0/0.27.1 turn `rooflab ai matmul 4096 4096` into an
internal error (no typer.exceptions for cli/main.py's usage-error mapping), 0.24 reflows
the verbs' help, 0.12-0.15 with today's click print the version for every verb; rich 14.2
prints a blank line before an error and widens the help's command column, 14.3.0 passes."""

from __future__ import annotations

import re
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10: the tomli backport rooflab depends on there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _floors() -> dict[str, tuple[int, ...]]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    out = {}
    for dep in deps:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)(;.*)?", dep.replace(" ", ""))
        assert m, f"a core dependency without a floor: {dep}"
        out[m[1].lower()] = tuple(int(p) for p in m[2].split("."))
    return out


def test_typer_and_rich_floors_are_the_oldest_that_pass_the_cli_tests():
    floors = _floors()
    assert floors["typer"] == (0, 27, 2)
    assert floors["rich"] == (14, 3)
    # typer 0.27.2 itself asks for rich >= 13.8: rooflab's own floor is the higher one
    assert floors["rich"] >= (13, 8)


def test_numpy_floor_stays_1x_with_numbas_range():
    # numba 0.59 (the cpu extra's floor) takes numpy 1.22-1.26; the fft kernel runs on 1.x
    assert _floors()["numpy"] == (1, 24)

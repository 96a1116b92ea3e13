"""Review r4 F2: `compare` of an unchanged re-run on a loaded machine.

The reviewer's samples (the same numba matmul, two runs minutes apart): before
[0.652 0.614 0.602 0.576 0.593] s (flagged noisy by the timer), before2
[0.382 0.374 0.394 0.391 0.392] s. Medians 602 vs 391 ms (1.54x); the sets do not overlap,
so the exact U test gives its smallest p for 5 vs 5: 2 / C(10, 5) = 2 / 252 = 0.0079. That is
"no overlap", which a whole run shifted by load gives. It was "cannot tell" and passed the
gate, while one overlapping pair (p twice as large) failed it (review s19 r5 F1): now fewer
than 9 samples a side judge nothing, and the change is gated as measured, as without
samples (tests/test_s19_compare_gate.py). With 12 a side a noisy flag still makes "cannot
tell"; a real 2x slowdown with 12 clean samples a side (p = 2 / C(24, 12) = 7.4e-7) stays a
regression.
"""

from __future__ import annotations

import json
import math
import statistics

import pytest

from rooflab.cli.main import main
from rooflab.model.compare import compare_kernels
from rooflab.model.kernel import Kernel

BEFORE = [0.6519, 0.6137, 0.6022, 0.5761, 0.5926]
BEFORE2 = [0.3824, 0.3737, 0.3936, 0.3911, 0.3925]


def _k(samples, flags=()) -> Kernel:
    return Kernel("mm_512", flop={"fp64": 2 * 512 ** 3}, seconds=statistics.median(samples),
                  samples=tuple(samples), meta={"flags": list(flags)})


def test_five_against_five_without_overlap_is_gated_as_measured():
    from rooflab.model.compare_gate import noise_reason

    c = compare_kernels([_k(BEFORE2)], [_k(BEFORE)])
    (m,) = c.matches
    assert m.noise.p_value == pytest.approx(2 / math.comb(10, 5), rel=1e-3)   # 0.0079
    assert m.change_pct == pytest.approx(100 * (0.6022 / 0.3911 - 1), rel=1e-6)  # +54.0 %
    assert m.cannot_tell is None and m.within_noise is None
    assert "5 and 5 samples, fewer than 9 a side" in noise_reason(m)
    assert c.regressions(5) == (m,)      # as a run without samples (review s19 r5 F1)


def test_a_run_flagged_noisy_cannot_tell_even_with_many_samples():
    quiet = [1.0 + 0.001 * i for i in range(12)]
    slow = [2.0 + 0.001 * i for i in range(12)]
    c = compare_kernels([_k(quiet)], [_k(slow, flags=["noisy"])])
    assert "second run is flagged noisy" in c.matches[0].cannot_tell
    assert c.regressions(5) == ()


def test_a_clean_two_x_slowdown_with_many_samples_stays_a_regression():
    quiet = [1.0 + 0.001 * i for i in range(12)]
    slow = [2.0 + 0.001 * i for i in range(12)]
    c = compare_kernels([_k(quiet)], [_k(slow)])
    (m,) = c.matches
    assert m.noise.p_value == pytest.approx(2 / math.comb(24, 12), rel=1e-3)
    assert m.cannot_tell is None and m.within_noise is False
    assert c.regressions(5) == (m,)


def test_cli_gate_takes_a_five_sample_rerun_as_measured(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")

    def write(name, samples, flags=()):
        p = tmp_path / name
        p.write_text(json.dumps({"schema_version": 1, "kernels": [
            {"name": "mm_512", "flop": {"fp64": 2 * 512 ** 3},
             "seconds": statistics.median(samples), "samples": samples,
             "meta": {"flags": list(flags)}}]}))
        return str(p)

    first = write("before.json", BEFORE, ["noisy"])
    second = write("before2.json", BEFORE2)
    assert main(["compare", second, first, "--fail-if-slower", "5"]) == 1
    cap = capsys.readouterr()
    assert "too few" in cap.out and "outside noise" not in cap.out
    assert "fewer than 9 a side (p 0.0079)" in cap.err
    assert "slower by more than 5 %: mm_512" in cap.err


def test_the_notebook_display_says_cannot_tell_too():
    """model/display_results' compare row follows the CLI: a significant change of a run
    flagged noisy reads 'cannot tell', not 'outside noise'."""
    from rooflab.model.display_results import comparison_text

    quiet = [1.0 + 0.001 * i for i in range(12)]
    slow = [1.5 + 0.001 * i for i in range(12)]
    c = compare_kernels([_k(quiet)], [_k(slow, flags=["noisy"])])
    (m,) = c.matches
    assert m.cannot_tell and m.within_noise is False
    text = comparison_text(c)
    assert "cannot tell" in text and "outside noise" not in text

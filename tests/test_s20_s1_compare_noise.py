"""Review s20 r2 F2: a run flagged noisy made any significant change under 2x 'cannot
tell', so a +50 % regression, 40 samples a side at p 1.4e-14, passed --fail-if-slower 10
(exit 0) with the advice to re-run with 9 samples; and only bench's meta flag made a run
noisy, so the same samples saved by rooflab.measure were gated. The rule now
(compare_trust, at TINY_P): far apart, or p <= 1e-8 and the medians' ratio beyond the
noisier run's IQR / median compounded 5 times; noise read from the samples and the meta."""

from __future__ import annotations

import json
import random
import statistics

import pytest

from rooflab.cli.main import main
from rooflab.model.compare import compare_kernels
from rooflab.model.compare_trust import trust_notes
from rooflab.model.kernel import Kernel


def _runs(seed=2):
    # the reviewer's s6.py: 40 samples a side, 4 % Gaussian noise, after +50 %
    rnd = random.Random(seed)
    b = [rnd.gauss(1e-3, 4e-5) for _ in range(40)]
    a = [rnd.gauss(1.5e-3, 6e-5) for _ in range(40)]
    return b, a


def _k(samples, meta=None) -> Kernel:
    return Kernel("k", flop={"fp32": 1e9}, bytes={"DRAM": 1e6},
                  seconds=statistics.median(samples), samples=tuple(samples),
                  provenance={"seconds": "measured"}, meta=meta or {})


def test_a_large_change_at_a_tiny_p_between_noisy_runs_fails_the_gate(tmp_path, capsys,
                                                                       monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    b, a = _runs()
    files = []
    for name, s in (("b40.json", b), ("a40.json", a)):
        p = tmp_path / name
        p.write_text(json.dumps({"schema_version": 2, "kernels": [
            {"name": "k", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e6},
             "seconds": statistics.median(s), "samples": s,
             "meta": {"flags": ["noisy"]}}]}))
        files.append(str(p))
    assert main(["compare", *files, "--fail-if-slower", "10"]) == 1     # was 0
    got = capsys.readouterr()
    out = got.out + got.err
    assert "outside noise (p 1.4e-14)" in out and "cannot tell" not in out
    assert "counted as a change" in out and "beyond the 1.30x" in out.replace("\n", " ")
    assert "slower by more than 10 %: k" in out


def test_the_verdict_does_not_depend_on_the_tool_that_wrote_the_file():
    # 9 vs 9, 6 % noise, +10 %: significant, but within drift of such runs. A bench file
    # (meta flags), a rooflab.measure one (meta iqr_rel) and bare samples get one verdict;
    # before, only the bench file read "cannot tell", the others failed the gate.
    rnd = random.Random(5)
    b = [rnd.gauss(1.0, 0.06) for _ in range(9)]
    a = [rnd.gauss(1.1, 0.066) for _ in range(9)]
    verdicts = set()
    for meta in ({"flags": ["noisy"]}, {"iqr_rel": 0.07}, {}):
        c = compare_kernels([_k(b, meta)], [_k(a, meta)])
        (m,) = c.matches
        assert m.noise.significant
        verdicts.add((m.cannot_tell is not None, bool(c.regressions(5))))
    assert verdicts == {(True, False)}


def test_the_advice_for_many_samples_is_not_more_samples():
    rnd = random.Random(5)
    b = [rnd.gauss(1.0, 0.06) for _ in range(12)]
    a = [rnd.gauss(1.1, 0.066) for _ in range(12)]
    c = compare_kernels([_k(b)], [_k(a)])
    (note,) = trust_notes(c.matches)
    assert "cannot tell from these samples" in note
    assert "--samples" not in note and "interleaved in one process" in note


def test_a_tiny_p_alone_does_not_count_a_change_within_drift():
    # 40 a side, 5 % noise, +12 %: p far below 1e-8, but 1.12x is within what load
    # moving between such runs makes ((1 + IQR/median)^5, about 1.4x): cannot tell
    rnd = random.Random(9)
    b = [rnd.gauss(1.0, 0.05) for _ in range(40)]
    a = [rnd.gauss(1.12, 0.056) for _ in range(40)]
    c = compare_kernels([_k(b)], [_k(a)])
    (m,) = c.matches
    assert m.noise.p_value < 1e-8
    assert m.cannot_tell is not None and c.regressions(5) == ()


@pytest.mark.parametrize("sd", [0.01, 0.02])
def test_quiet_runs_are_judged_by_the_u_test_as_before(sd):
    rnd = random.Random(3)
    b = [rnd.gauss(1.0, sd) for _ in range(9)]
    a = [rnd.gauss(1.1, sd) for _ in range(9)]
    c = compare_kernels([_k(b)], [_k(a)])
    assert c.matches[0].cannot_tell is None and len(c.regressions(5)) == 1

"""One die of an MI250X saved to a file and given back as --on, and the Python API on the
catalog package, judge and say what the CLI's `--on MI250X` does (s35 O); ncu's "metric
twice" warning names both values' lines.

Hand figures (catalog MI250X: DRAM 3276.8 GB/s for the package, 2 dies):
  one die's DRAM 3276.8 / 2 = 1638.4 GB/s.
  k.csv's scale: 64,000 FLOP over 48,000 B in 2 us: AI 4/3, 32 GFLOP/s; attainable on the
    die min(23.95e12, 1638.4e9 x 4/3) = 2.1845 TFLOP/s, so 1.4648 % of roof.
  docs/python.md's decode step: 2.2e9 B of DRAM in 15 ms = 146.67 GB/s: on the die
    146.67 / 1638.4 = 8.95 % (4.48 % of the package's 3276.8, what analyze said before).
    Moved from the T4 (320 GB/s: 45.83 %) onto the die: 2.2e9 / 1638.4e9 = 1.343 ms of
    floor / 0.4583 = 2.93 ms (1.47 ms on the package's figures, half the CLI's answer).
  nersc-gpp output1.csv: launch 0's rows are lines 9-21; lts__t_bytes.sum is line 11
    (640,889,913,632 B); a copy at 1,000 B inserted after line 13 is line 14."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

DIE = "AMD Instinct MI250X, one die"
DIE_WORDS = "judged against one die's roof (the package's figures / 2)"


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """k.csv and the report document `report k.csv --on MI250X --json` wrote."""
    d = tmp_path_factory.mktemp("o35")
    k = d / "k.csv"
    k.write_text("name,flop,bytes,seconds,precision\nscale,64000,48000,2e-6,fp64\n")
    rep = d / "rep.json"
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["report", str(k), "--on", "MI250X", "--json"]) == 0
    rep.write_text(out.getvalue())
    return str(k), str(rep)


def test_a_die_roof_given_back_as_on_is_noted_once(saved, capsys):
    k, rep = saved
    capsys.readouterr()
    assert main(["report", k, "--on", rep, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["roof"]["name"] == DIE and doc["roof"]["kind"] == "derived"
    (row,) = doc["analysis"]
    assert row["percent_of_roof"] == pytest.approx(100 * 32e9 / (1638.4e9 * 4 / 3))
    # the same note as `--on MI250X` gives, once
    said = [n for n in doc["notes"] if DIE_WORDS in n]
    first = json.loads(open(rep).read())
    assert said == [n for n in first["notes"] if DIE_WORDS in n]
    assert len(said) == 1


def test_the_inputs_say_it_once_for_plot_and_whatif(saved, capsys):
    from rooflab.cli.inputs import load_inputs

    k, rep = saved
    inputs = load_inputs([k], [rep])
    assert inputs.roof.find_memory("DRAM").value == pytest.approx(1638.4e9)
    inputs.print_notes()
    assert " ".join(capsys.readouterr().err.split()).count(DIE_WORDS) == 1


def _step():
    import rooflab

    return rooflab.Kernel("decode b=1", flop={"fp16": 2.2e9}, bytes={"DRAM": 2.2e9},
                          seconds=0.015)


def test_analyze_takes_one_die_of_the_catalog_package():
    import rooflab

    a = rooflab.analyze(rooflab.load_roof("MI250X"), [_step()])
    assert a.roof.name == DIE
    assert a.points[0].percent_of_roof == pytest.approx(100 * 2.2e9 / 0.015 / 1638.4e9)
    assert DIE_WORDS in a.notes[0]
    assert [n for n in a.notes if DIE_WORDS in n] == [a.notes[0]]
    # any other roof as given: the T4's 45.83 %
    t4 = rooflab.analyze(rooflab.load_roof("T4"), [_step()])
    assert t4.points[0].percent_of_roof == pytest.approx(100 * 2.2e9 / 0.015 / 320e9)


def test_move_hardware_onto_the_package_is_onto_one_die():
    import rooflab
    from rooflab.model.dies import kernel_roof
    from rooflab.model.whatif import move_hardware

    t4, mi = rooflab.load_roof("T4"), rooflab.load_roof("MI250X")
    w = move_hardware(t4, [_step()], mi)
    assert w.after.roof.name == DIE
    assert w.total_after_s == pytest.approx(2.2e9 / 1638.4e9 / (2.2e9 / 0.015 / 320e9),
                                            rel=5e-3)   # 2.93 ms
    assert w.total_after_s == move_hardware(t4, [_step()], kernel_roof(mi)[0]).total_after_s
    assert [n for n in w.after.notes if DIE_WORDS in n] == [w.after.notes[0]]
    assert not [n for n in w.before.notes if DIE_WORDS in n]


def test_ncu_metric_twice_names_the_first_values_line(fixtures_dir, tmp_path):
    from rooflab.ingest.ncu_files import load_ncu

    lines = (fixtures_dir / "ncu" / "nersc-gpp" / "output1.csv").read_text().splitlines(True)
    i = next(n for n, line in enumerate(lines) if "lts__t_bytes.sum" in line)
    assert i + 1 == 11
    lines.insert(i + 3, lines[i].replace('"640,889,913,632"', '"1,000"'))
    p = tmp_path / "twice.csv"
    p.write_text("".join(lines))
    (skip,) = [s for s in load_ncu([str(p)]).skips if "twice" in s.reason]
    assert skip.line == 14
    assert ("has metric 'lts__t_bytes.sum' twice with different values: 6.4089e+11 on "
            "line 11, then 1000 on line 14; the last is kept" in skip.reason)

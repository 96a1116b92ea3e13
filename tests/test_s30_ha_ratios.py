"""One rule for printed ratios (speed-ups, headrooms, 'x' factors): units.fmt_times prints
two decimals from 0.1 to 10 and fmt_factor's 3 significant figures from 10, so a report
table's '33.50x (>2x)' no longer sits beside its gain line's '33.5x faster', nor '1428.57x'
beside '1430x'. Under 0.1, 3 significant figures ('0.0123x', not '0.01x'). A percent of
roof from 10000 % (a miscount) prints in 3 figures: '1.49e+06 %', not '1492537 %'."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.sides import factor_text, times_text
from rooflab.units import fmt_pct, fmt_times


@pytest.mark.parametrize(("x", "text"), [
    (0.0, "0.00x"),            # no ratio at all keeps its two decimals
    (0.005, "0.00500x"),         # two decimals would read '0.01x' (or '0.00x'): 3 figures
    (0.0123, "0.0123x"),       # two decimals would read '0.01x', 19 % off
    (0.0995, "0.0995x"),       # 3 figures round to 0.0995 < 0.1: still 3 figures
    (0.09996, "0.10x"),        # 3 figures round to 0.1: two decimals, decided after rounding
    (6.7e-05, "6.70e-05x"),     # 1 / 6.7e-05 = 14925x too fast: the size says the miscount
    (0.5, "0.50x"),
    (1.835, "1.83x"),          # the double 1.835 is 1.83499999...: rounds down
    (9.994, "9.99x"),
    (9.996, "10.0x"),          # two decimals give '10.00': past 10, so 3 figures, '10.0'
    (10.0, "10.0x"),
    (33.5, "33.5x"),           # was '33.50x' beside the gain line's '33.5x faster'
    (999.6, "1000x"),          # 3 figures: 1.00e3, a whole number, not '1e+03x'
    (1428.57, "1430x"),        # 3 figures 1.43e3 (was '1428.57x')
    (1e4, "10000x"),           # was '1e+04x': whole numbers below 1e9, as fmt_factor
    (2.5e6, "2500000x"),
    (3.35e18, "3.35e+18x"),    # exponent form from 1e9: no 19-digit headroom
    (-1.5, "-1.50x"),          # a sign is kept (a difference of ratios); the rule is |x|'s
    (-33.5, "-33.5x"),
    (-0.005, "-0.00500x"),
])
def test_fmt_times_boundaries(x, text):
    assert fmt_times(x) == text


def test_fmt_times_says_no_value_as_fmt_factor_does():
    assert fmt_times(None) == "-" and fmt_times(float("nan")) == "-"


@pytest.mark.parametrize("x", [9.996, 10.0, 14.04, 33.5, 347.22, 999.6, 1428.57, 1e4, 3.35e18])
def test_from_ten_a_ratio_prints_as_every_factor(x):
    # the gain and distance lines (sides.factor_text, units.fmt_factor's 3 figures) and the
    # tables (fmt_times) print one ratio alike
    assert fmt_times(x) == factor_text(x)


def test_a_line_keeps_its_side_under_ten_and_the_rule_holds_past_it():
    # the >2x flag's line: 2.002 is not '2.00x (>2x)' (review s22 r4 F3), 33.5 is '33.5x'
    assert times_text(2.002, 2.0) == "2.002x"
    assert times_text(1.998, 2.0) == "1.998x"
    assert times_text(2.5, 2.0) == "2.50x"
    assert times_text(33.5, 2.0) == "33.5x" == fmt_times(33.5)
    assert times_text(9.996, 2.0) == "10.0x"


@pytest.mark.parametrize(("pct", "text"), [
    (1492537.0, "1.49e+06 %"),  # a point 14925x above its roof: 3 figures of a miscount
    (-20000.0, "-2e+04 %"),
    (9999.4, "9999 %"),         # whole percents up to 10000 (after rounding)
    (9999.6, "1e+04 %"),        # rounds to 10000: 3 figures
    (2000.0, "2000 %"),         # a point 20x above its roof keeps its whole percent
    (1208.0, "1208 %"),
    (49.4999, "49 %"),
    (9.996, "9.996 %"),         # the latency line's digits are kept, as before
    (0.07, "0.07 %"),
])
def test_huge_percents_print_three_figures(pct, text):
    assert fmt_pct(pct) == text
    assert fmt_pct(pct, space=False) == text[:-2] + "%"    # the bare form, on request


def _report(tmp_path, capsys, monkeypatch, *extra: str) -> str:
    # on the T4 datasheet roof (320 GB/s): 3.2e8 B is a 1 ms floor, above the 5 us launch
    # and 1e8 FLOP / 8.1 TFLOP/s fp32; 33.5 ms is 33.5x it, 1.42857 s 1428.57x
    ks = tmp_path / "k.json"
    ks.write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": "copy", "flop": {"fp32": 1e8}, "bytes": {"DRAM": 3.2e8}, "seconds": 0.0335},
        {"name": "slow", "flop": {"fp32": 1e8}, "bytes": {"DRAM": 3.2e8},
         "seconds": 1.42857}]}))
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["report", str(ks), "--on", "T4", *extra]) == 0
    return capsys.readouterr().out


def test_report_table_and_its_lines_print_one_ratio_alike(tmp_path, capsys, monkeypatch):
    out = _report(tmp_path, capsys, monkeypatch)
    cells = {c[1]: c for c in ([x.strip() for x in ln.strip("│").split("│")]
                                for ln in out.splitlines() if ln.startswith("│"))}
    copy, slow = cells["copy"], cells["slow"]
    # headroom 33.5 ms / 1 ms; the lead lever: 80 % of the roof plus the launch,
    # 33.5 ms / (1 ms / 0.8 + 5 us) = 26.69, 1428.57 ms / 1.255 ms = 1138.3
    assert (copy[4], copy[-1]) == ("33.5x (>2x)", "26.7x")
    assert (slow[4], slow[-1]) == ("1430x (>2x)", "1140x")
    # the gain line, the distance and the advice line say the same figures
    assert "if it reached its roof (33.5x faster)" in out
    assert "below roof (33.5x): 33.5x below the roof" in out
    assert "fewer synchronisations: 26.7x predicted" in out
    assert "if it reached its roof (1430x faster)" in out
    assert "fewer synchronisations: 1140x predicted" in out
    for old in ("33.50x", "26.69x", "1428.57x", "1138.30x"):
        assert old not in out


def test_markdown_report_advice_rows_print_as_its_table(tmp_path, capsys, monkeypatch):
    md = tmp_path / "r.md"
    _report(tmp_path, capsys, monkeypatch, "-o", str(md))
    text = md.read_text()
    # the top table's 'predicted' cell and the kernel's advice row (was f"{x:.2f}x": 26.69x)
    assert "| 33.5x (>2x) |" in text and text.count("| 26.7x |") == 2
    assert text.count("| 1140x |") == 2 and "26.69x" not in text

"""One rule for printed ratios, leftovers (session 31 hc): fmt_factor and the 3-figure half
of fmt_times keep their trailing zeros ('14.0x' beside '14.7x', '1.00x', not '14x' and
'1x'), and the llm per-kernel table and the statistics/probe notes print ratios through
fmt_times instead of their own '{:.2g}x' / '{:.2f}x'."""

from __future__ import annotations

import pytest

from rooflab.sides import factor_text, times_text
from rooflab.units import fmt_factor, fmt_times


@pytest.mark.parametrize("x,want", [
    (14.0, "14.0x"), (14.7, "14.7x"), (1.0, "1.00x"), (2.0, "2.00x"), (0.5, "0.500x"),
    (185.0, "185x"), (1030.0, "1030x"), (1428.57, "1430x"), (3.35e18, "3.35e+18x"),
    (0.0156, "0.0156x"), (0.05, "0.0500x"), (9.996, "10.0x"), (999.6, "1000x"),
    (0.0, "0.00x"), (None, "-"),
])
def test_fmt_factor_keeps_its_three_figures(x, want):
    assert fmt_factor(x) == want


@pytest.mark.parametrize("x,want", [
    # two decimals from 0.1 to under 10, as before
    (1.834, "1.83x"), (0.5, "0.50x"), (1.0, "1.00x"),
    # 3 significant figures from 10 up, trailing zeros kept (old: '14x', '10x', '20x')
    (14.0, "14.0x"), (10.0, "10.0x"), (20.0, "20.0x"), (9.996, "10.0x"), (33.5, "33.5x"),
    (1428.57, "1430x"),
    # 3 significant figures under 0.1 (old: '0.005x', '0.00098x')
    (0.005, "0.00500x"), (0.00098, "0.000980x"), (0.0123, "0.0123x"), (6.7e-05, "6.70e-05x"),
])
def test_fmt_times_keeps_its_three_figures(x, want):
    assert fmt_times(x) == want


def test_a_column_reads_alike():
    """The case the rule was written for: two rows of one column."""
    assert [fmt_factor(v) for v in (14.0, 14.7)] == ["14.0x", "14.7x"]
    assert [fmt_times(v) for v in (14.0, 14.7)] == ["14.0x", "14.7x"]


def test_the_side_of_a_line_still_gets_its_digits():
    # 1.0004x from its line is not '1.00x' left of it; 10.03x the floor is not '10.0x'
    assert factor_text(1.0004, 1.0) == "1.0004x"
    assert times_text(10.03, 10.0) == "10.03x"
    assert times_text(9.996, 10.0) == "9.996x"
    from rooflab.sides import figures

    assert figures(123.4) == "123" and figures(100.0) == "100" and figures(1.5) == "1.50"


def _last_cells(text: str) -> dict[str, str]:
    """The first and last cell of each table row (rich's box lines)."""
    rows = [line.split("│") for line in text.splitlines() if line.count("│") > 3]
    return {r[1].strip(): r[-2].strip() for r in rows}


def test_llm_floor_per_launch_column_is_fmt_times(monkeypatch):
    """`rooflab llm`'s floor/launch column printed '2x', '0.5x', '0.00098x' (fmt_factor
    from 1, '{:.2g}x' under it): now '2.00x', '0.50x', '0.000979x', as every ratio."""
    from cli_inproc import run_cli

    monkeypatch.setenv("COLUMNS", "250")
    r = run_cli("llm", "llama-3-8b", "--on", "H100")
    assert r.returncode == 0, r.stderr
    decode = r.stdout.split("prefill:")[0]
    cells = _last_cells(decode)
    assert cells["q_proj"] == "2.00x"
    assert cells["k_proj"] == "0.50x"
    assert cells["embedding"] == "0.000979x"
    assert cells["lm_head"] == "62.7x"
    assert not any(c.endswith("x") and c[:-1].isdigit() for c in cells.values())


def test_statistics_and_probe_notes_print_ratios_by_the_rule():
    """They kept '{:.0f}x' and '{:.2f}x' of their own: a 45x vector/scalar ratio read
    '45x', the samples of two groups '(2x apart)' beside '1.84x' elsewhere."""
    from rooflab.model.sample_groups import Groups
    from rooflab.probe.cpu.flops import simd_ratio_note

    note = simd_ratio_note("fp64", 45.0)
    assert "the vector FMA peak is 45.0x the scalar one" in note
    assert "only 0.80x the scalar one" in simd_ratio_note("fp64", 0.8)
    groups = Groups(fast=(1e-3, 1e-3, 1e-3), slow=(0.02, 0.02, 0.02))
    assert groups.words().endswith("(20.0x apart)")

"""s36 G: docs/ingest.md quotes the error `rooflab rocprof results.stats.csv` gives; the
quote is checked against what the command prints, so the page follows COLLECT_HINT when it
changes (it had kept the older counter names, TCC_EA_RDREQ without `_sum`, after the hint
moved to TCC_EA_RDREQ_sum and MI300's TCC_EA0_ spelling)."""

from __future__ import annotations

from pathlib import Path

from cli_inproc import one_line_error

PAGE = Path(__file__).resolve().parents[1] / "docs" / "ingest.md"


def _quoted_error() -> str:
    """The `error:` line the page shows under `$ rooflab rocprof results.stats.csv`."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    at = lines.index("$ rooflab rocprof results.stats.csv")
    return lines[at + 1]


def test_the_pages_stats_error_is_the_one_printed(tmp_path, capsys, monkeypatch):
    """A rocprof --stats summary (Name, Calls, TotalDurationNs, AverageNs, Percentage: times,
    no counters) is refused at line 1 with STATS_HINT + COLLECT_HINT; the page quotes that
    line word for word (the file named as the page names it, run from its folder)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results.stats.csv").write_text(
        '"Name","Calls","TotalDurationNs","AverageNs","Percentage"\n'
        '"saxpy",2,20000,10000,100.0\n')
    err = one_line_error(capsys, ["rocprof", "results.stats.csv"])
    quoted = _quoted_error()
    assert "TCC_EA_RDREQ_sum TCC_EA_RDREQ_32B_sum" in quoted
    assert quoted == err

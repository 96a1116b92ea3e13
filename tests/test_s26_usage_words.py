"""Usage lines name arguments as click does (FILES..., M N K, [TRACE]): typer 0.29 wrote a
required one in braces, `{files}...`, which reads as a set of choices (review s26 v3 F5)."""

from __future__ import annotations

import pytest
from cli_inproc import run_cli

USAGE = {("report",): "rooflab report [OPTIONS] FILES...",
         ("ai", "matmul"): "rooflab ai matmul [OPTIONS] M N K",
         ("torch",): "rooflab torch [OPTIONS] [TRACE]",
         ("compare",): "rooflab compare [OPTIONS] BEFORE AFTER",
         ("plot",): "rooflab plot [OPTIONS] [KERNELS]..."}


@pytest.mark.parametrize("verb", list(USAGE))
def test_usage_line_names_arguments_without_braces(monkeypatch, verb):
    monkeypatch.setenv("COLUMNS", "120")
    out = run_cli(*verb, "--help").stdout
    (line,) = [ln for ln in out.splitlines() if "Usage:" in ln]
    assert USAGE[verb] in line and "{" not in line

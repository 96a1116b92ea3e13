"""The HTML report on the envelope roof (no --on) says what the terminal and markdown
reports say (review s18 r4 F4, the HTML leftover of g1): no class decided by a tie."""

import pytest
from conftest import FIXTURES

from rooflab.cli.main import main

GPP = FIXTURES / "ncu" / "nersc-gpp"


def test_html_report_of_output3_csv_says_no_roof(tmp_path):
    pytest.importorskip("plotly")
    if not (GPP / "output3.csv").is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP}")
    out = tmp_path / "o3.html"
    assert main(["report", str(GPP / "output3.csv"), "-o", str(out)]) == 0
    page = out.read_text()
    assert "<td>no roof (give --on)</td>" in page                     # the priority table
    assert "sigma_gpp_gpu_34 — no roof to judge against; give --on</h3>" in page
    assert "sigma_gpp_gpu_34 (no roof to judge against; give --on," in page   # alt text
    assert "— compute-bound" not in page and "(compute-bound," not in page


"""A kernel file (or a profiler's output) given as the roof: the error says what it is and
where it goes, not only that it is no roofline.csv."""

from __future__ import annotations

from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.hardware.resolve import load_roofs

NCU_CSV = Path("/work/shared/fixtures/ncu/nersc-gpp/output1.csv")
WHERE = "kernel files are the verb's positional arguments (`rooflab report FILE --on h100`)"


@pytest.fixture
def files(tmp_path):
    csv = tmp_path / "good.csv"
    csv.write_text("name,flop,bytes,seconds\nx,1e9,1e9,1e-3\n")
    js = tmp_path / "k.json"
    js.write_text('[{"name": "x", "flop": 1e9, "bytes": 1e9, "seconds": 1e-3}]')
    nested = tmp_path / "k2.json"
    nested.write_text('{"kernels": [{"name": "x", "flop": 1e9, "bytes": 1e9}]}')
    return csv, js, nested


def test_a_kernel_csv_as_the_roof_is_called_a_kernel_file(files, capsys):
    csv = str(files[0])
    assert main(["report", csv, "--on", csv]) == 2
    err = capsys.readouterr().err
    assert f"not rocprof-compute's roofline.csv: it is a kernel file, and {WHERE}" in err
    assert "HBMBw" not in err   # not told to fix a roofline.csv header


def test_a_kernel_json_as_the_roof_is_called_a_kernel_file(files):
    for path in files[1:]:
        with pytest.raises(ParseError, match=r"not a profile or roof file: it is a kernel "
                                             r"file, and kernel files are the verb's"):
            load_roofs(str(path))


def test_a_ranking_csv_is_no_kernel_file(tmp_path):
    ranking = tmp_path / "ranking.csv"   # choose's output: a name and seconds, no counts
    ranking.write_text("rank,name,seconds\n1,H100,1e-3\n")
    with pytest.raises(ParseError, match=r"roofline.csv \(its header names none of HBMBw"):
        load_roofs(str(ranking))


@pytest.mark.skipif(not NCU_CSV.is_file(), reason="ncu fixture not present")
def test_an_ncu_csv_as_the_roof_names_its_verb(capsys, files):
    assert main(["report", str(files[0]), "--on", str(NCU_CSV)]) == 2
    assert "it is an Nsight Compute file; put its kernels on a roof with `rooflab ncu FILE " \
           "--on h100`" in capsys.readouterr().err

"""An ncu CSV cut short (a copy from a node that ran out of disk, a `head -c`): the launch it
cuts loses metrics, and a last line cut inside a value ('"687,' of '"687,938,432,432"')
must not read as a number, nor be blamed on a decimal-comma locale.

Before: the GPP recording cut inside its dmul row was refused as "a decimal-comma locale's
number"; cut one row earlier it was read without dmul, 1.63 TFLOP instead of 2.32, with
only a row warning.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.test_ncu_csv import BASIC, DETAILS_HEAD, IDENT, INST, details_rows, ident

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.ingest.ncu_files import load_ncu

GPP = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"


def _cut_after(text: str, marker: str, keep: int) -> str:
    """The text up to `keep` characters into `marker` (no line ending: the file stops)."""
    return text[:text.index(marker) + keep]


@pytest.fixture
def output4() -> str:
    path = GPP / "output4.csv"
    if not path.is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP} (CI lays ../shared beside the clone)")
    return path.read_text()


def test_real_recording_cut_inside_a_value_is_reported_cut_short(output4, tmp_path, capsys):
    # output4.csv's one launch; the file now stops at '"687,' of the dmul count (line 17)
    cut = tmp_path / "cut.csv"
    cut.write_text(_cut_after(output4, '"687,938,432,432"', 5))
    with pytest.raises(ParseError) as err:
        load_ncu([str(cut)])
    text = str(err.value)
    assert "line 17" in text and "file cut short" in text and "decimal-comma" not in text
    assert main(["ncu", str(cut)]) == 2
    out = capsys.readouterr()
    assert out.err.startswith("error: ") and "Traceback" not in out.err


def test_the_whole_recording_still_reads_its_hand_checked_numbers(output4, tmp_path):
    # dadd + dmul + 2 x dfma = 111,274,472,492 + 687,938,432,432 + 2 x 760,774,694,320
    # = 2,320,762,293,564 FLOP; DRAM 149,562,986,752 B -> AI 15.52;
    # time 42,579,316,766.67 cycles / 1,619,878,324.05 Hz = 26.285 s
    whole = tmp_path / "whole.csv"
    whole.write_text(output4)
    (k,) = load_ncu([str(whole)]).kernels
    assert k.flop["fp64"] == pytest.approx(2_320_762_293_564)
    assert k.flop["fp64"] / k.bytes["DRAM"] == pytest.approx(15.517, abs=1e-3)
    assert k.seconds == pytest.approx(26.285, abs=1e-3)


def test_cut_last_launch_is_dropped_and_the_whole_one_kept(tmp_path):
    # launch 0 whole; launch 1 stops inside its third row ('"50,3' of '"50,331,648"')
    rows = details_rows(0, BASIC) + details_rows(1, BASIC)
    text = "\n".join([DETAILS_HEAD] + rows) + "\n"
    cut = tmp_path / "cut.csv"
    cut.write_text(_cut_after(text, rows[len(BASIC) + 2], len(rows[len(BASIC) + 2]) - 8))
    imp = load_ncu([str(cut)])
    (k,) = imp.kernels
    assert k.calls == 1 and k.flop == {"fp32": pytest.approx(2 * 1_048_576)}
    text = "\n".join(str(s) for s in imp.skips)
    line = 1 + len(BASIC) + 3     # header, launch 0's rows, launch 1's third row
    assert f"cut.csv:{line}: the file ends inside this row" in text
    assert "launch 1 of 'saxpy' skipped: a row of it was cut short" in text


def test_raw_page_last_row_cut_inside_a_value_is_skipped(tmp_path):
    metrics = ["dram__bytes.sum", "gpu__time_duration.sum", INST.format("ffma")]
    head = IDENT + "," + ",".join(f'"{m}"' for m in metrics)
    units = ",".join(['""'] * 11) + ',"byte","nsecond","inst"'
    whole = ident(0) + ',"8,000,000","1,000","1,000,000"'
    cut = ident(1) + ',"8,000,000","1,000","1,0'        # stops inside the ffma count
    path = tmp_path / "raw.csv"
    path.write_text("\n".join([head, units, whole, cut]))
    imp = load_ncu([str(path)])
    (k,) = imp.kernels
    assert k.calls == 1 and k.flop == {"fp32": pytest.approx(2e6)}
    assert any(s.line == 4 and "file cut short" in s.reason for s in imp.skips)

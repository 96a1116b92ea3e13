"""Shared test helpers: the fixtures folder beside the clone, and small roofs."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO.parent / "shared" / "fixtures"


@pytest.fixture
def fixtures_dir() -> Path:
    if not FIXTURES.is_dir():
        pytest.skip(f"recordings folder {FIXTURES} is absent (CI lays ../shared beside the clone)")
    return FIXTURES


@pytest.fixture
def output4(fixtures_dir) -> str:
    """The NERSC GPP step-4 Nsight Compute CSV (one launch, compute capability 8.9)."""
    path = fixtures_dir / "ncu" / "nersc-gpp" / "output4.csv"
    if not path.is_file():
        pytest.skip(f"NERSC GPP recording {path} is absent")
    return str(path)


@pytest.fixture
def rocprofv3_folder(tmp_path) -> str:
    """rocprofv3's output folder, two passes of one dispatch: 64 x 1000 MUL_F64 FLOP over
    64 x 500 + 32 x 500 B in 2 us (the first pass's timestamps)."""
    head = ("Correlation_Id,Dispatch_Id,Agent_Id,Queue_Id,Kernel_Name,Counter_Name,"
            "Counter_Value,Start_Timestamp,End_Timestamp\n")
    for n, rows in ((1, "1,1,2,0,scale,SQ_INSTS_VALU_MUL_F64,1000,0,2000\n"),
                    (2, "1,1,2,0,scale,TCC_EA0_RDREQ,500,10,2010\n"
                        "1,1,2,0,scale,TCC_EA0_WRREQ,500,10,2010\n")):
        d = tmp_path / "out" / "host" / f"pass_{n}"
        d.mkdir(parents=True)
        (d / "123_counter_collection.csv").write_text(head + rows)
    return str(tmp_path / "out")

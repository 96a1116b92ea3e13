"""docs/json.md documents the CDNA occupancy keys `rooflab rocprof ... --json` writes
(session 32, helper E item 5), from the real output: every occupancy key of a rocprof
kernel's meta is named in the `rocprof --json` entry, and its worked example is what the
command prints (tests/data/rocprof_occupancy/results.csv on gfx942: gemm_mfma_bf16 256
VGPRs -> 512 // 256 = 2 waves per SIMD x 4 SIMDs = 8 of 32 = 25 %, 2 workgroups)."""

import json
from pathlib import Path

from rooflab.cli.main import main

ROOT = Path(__file__).parent.parent
RESULTS = Path(__file__).parent / "data" / "rocprof_occupancy" / "results.csv"
OCCUPANCY_KEYS = ("occupancy_theoretical", "occupancy_limiter", "occupancy_limit_blocks",
                  "workgroup_size", "wave_size", "occupancy_from")


def _entry() -> str:
    text = (ROOT / "docs" / "json.md").read_text()
    start = text.index("- **`rocprof --json`**")
    return " ".join(text[start:text.index("\n- **", start + 1)].split())


def test_every_occupancy_key_rocprof_writes_is_documented(capsys):
    assert main(["-q", "rocprof", str(RESULTS), "--on", "mi300x", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    meta = next(k["meta"] for k in doc["kernels"] if k["name"] == "gemm_mfma_bf16")
    written = {k for k in meta if k.startswith("occupancy") or k in OCCUPANCY_KEYS}
    assert written == set(OCCUPANCY_KEYS)
    entry = _entry()
    for key in written:
        assert f"`{key}`" in entry, key
    # the worked example and the provenance quoted are the command's own
    assert (meta["occupancy_theoretical"], meta["occupancy_limiter"],
            meta["occupancy_limit_blocks"]) == (25.0, "VGPRs", 2)
    assert ('gemm_mfma_bf16 `occupancy_theoretical` 25.0, `occupancy_limiter` "VGPRs", '
            '`occupancy_limit_blocks` 2') in entry
    assert f'"{meta["occupancy_from"]}' in entry
    (note,) = [n for n in doc["import_notes"] if "theoretical occupancy" in n]
    assert note.split(": ", 1)[1].split(";")[0] in entry

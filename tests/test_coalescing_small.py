"""`rooflab ai elementwise --stride` (session 16 review G1) on arrays of a few sectors: the
loss is the rounding up to whole 32-byte sectors, which no layout recovers, and the byte
model says what it assumes."""

from __future__ import annotations

import json

from cli_inproc import run_cli


def _ew(*args: str) -> dict:
    r = run_cli("ai", "elementwise", *args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_stride_on_a_few_sectors_blames_the_rounding_not_the_layout():
    # fp16 n = 3: 6 B per array; stride 1 and stride 2 (10 B span) both touch 1 sector
    for stride in ("1", "2"):
        d = _ew("3", "--stride", stride)
        assert d["coalescing"]["sectors_per_array"] == 1 and d["bytes"] == 64
        note = d["notes"][-1]
        assert "same 1 sector(s) per array as stride 1" in note
        assert "neighbouring threads" not in note
    # n = 3 at stride 8 (16 B apart, 34 B span) is 2 sectors: the layout is at fault, 2x
    note = _ew("3", "--stride", "8")["notes"][-1]
    assert "2.00x the sectors of stride 1" in note and "neighbouring threads" in note
    assert "no reuse of the skipped bytes from L2" in _ew("1e6", "--stride", "2")["byte_model"]

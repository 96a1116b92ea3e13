"""JSON documents written as they are made (s32 D): `rooflab whatif --json` at 100,000
kernels peaked at 2.2 GB (the document's dicts, the encoder's ~10 million pieces, the
240 MB text and its bytes), 4x the terminal report. json_stream.iter_json writes the text
json.dumps(indent=2) gave, in pieces, and a Streamed array makes its rows one at a time;
files.write_json streams into its temporary file, cli.common.emit_json onto stdout once a
document passes HELD characters. The what-if's values by hand on three kernels, stdout and
-o the same bytes, an interrupted write leaving no file, and the memory a write holds."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from tests.cli_inproc import run_cli

from rooflab import json_stream
from rooflab.cli import common
from rooflab.files import dumps_json, write_json
from rooflab.json_stream import Streamed, iter_json

A100 = "NVIDIA A100 80GB SXM"   # catalog: fp32 vector 19.5, fp16 vector 78, fp16 tensor
P32, P16, B, LAUNCH = 19.5e12, 312e12, 2.039e12, 5e-6   # 312 TFLOP/s; DRAM 2.039 TB/s


def _three(tmp_path: Path) -> str:
    path = tmp_path / "three.csv"
    path.write_text("name,flop,bytes,seconds,precision\n"
                    "matmul,1e12,1e9,0.1,fp32\n"     # compute-bound
                    "copy,1e6,4e9,0.004,fp32\n"      # memory-bound
                    "tiny,1e3,1e3,2e-6,fp16\n")      # already fp16: under its launch
    return str(path)


# Hand calculation (work floor = max(FLOP / P, bytes / B); with launches = max(work floor,
# calls x 5 us); fp32 -> fp16 halves the bytes, matmul (AI 1000) moves to the tensor ceiling)
HAND = {
    # 1e12 / 19.5e12 = 51.28 ms over 1e9 / 2.039e12 = 0.49 ms -> 1e12 / 312e12 = 3.205 ms
    "matmul": (1e12 / P32, 1e12 / P16, 1e12 / P32, 1e12 / P16),
    # 4e9 / 2.039e12 = 1.962 ms -> 2e9 / 2.039e12 = 0.981 ms (1e6 FLOP: 51 ns)
    "copy": (4e9 / B, 2e9 / B, 4e9 / B, 2e9 / B),
    # 1e3 / 2.039e12 = 0.49 ns, both sides; with its one launch, 5 us
    "tiny": (1e3 / B, 1e3 / B, LAUNCH, LAUNCH),
}
KEYS = ("before_work_floor_s", "after_work_floor_s", "before_with_launches_s",
        "after_with_launches_s")


def _whatif(tmp_path: Path):
    from rooflab import load_kernels
    from rooflab.hardware.resolve import load_roofs
    from rooflab.model.whatif_precision import change_precision

    roof = load_roofs(A100)[0]
    return change_precision(roof, load_kernels(_three(tmp_path)), "fp16")


def test_describe_streamed_is_the_lists_document_with_hand_floors(tmp_path):
    from rooflab.model.whatif_floors import describe

    w = _whatif(tmp_path)
    streamed = describe(w, streamed=True)
    assert isinstance(streamed["moves"], Streamed)
    assert isinstance(streamed["after"]["kernels"], Streamed)
    assert isinstance(streamed["after"]["analysis"], Streamed)
    plain = describe(w)
    assert isinstance(plain["moves"], list) and len(plain["moves"]) == 3
    # the same text either way, key for key in the same order
    assert dumps_json(streamed) == dumps_json(plain)
    doc = json.loads(dumps_json(streamed))
    assert list(doc)[:11] == ["schema_version", "label", "assumption", "total_before_s",
                              "total_after_s", "speedup", "total_before_floor_s",
                              "total_after_floor_s", "moves", "after",
                              "total_before_work_floor_s"]
    for row in doc["moves"]:
        assert tuple(row[k] for k in KEYS) == pytest.approx(HAND[row["kernel"]], rel=1e-12)
        assert row["before_floor_s"] == row["before_with_launches_s"]
    sums = [sum(h[i] for h in HAND.values()) for i in range(4)]
    # work 53.24 ms -> 4.186 ms; with launches 53.25 ms -> 4.191 ms
    assert (doc["total_before_work_floor_s"], doc["total_after_work_floor_s"],
            doc["total_before_with_launches_s"],
            doc["total_after_with_launches_s"]) == pytest.approx(sums, rel=1e-12)
    # measured 0.1 + 0.004 + 2e-6 s before
    assert doc["total_before_s"] == pytest.approx(0.104002, rel=1e-12)
    assert [k["name"] for k in doc["after"]["kernels"]] == ["matmul", "copy", "tiny"]
    assert [k["bytes"]["DRAM"] for k in doc["after"]["kernels"]] == [5e8, 2e9, 1e3]
    assert [p["kernel_index"] for p in doc["after"]["analysis"]] == [0, 1, 2]


def test_stdout_and_o_are_the_same_document_streamed(tmp_path, monkeypatch):
    # HELD at 100 characters: stdout takes the document as it is made, as at 100k kernels
    monkeypatch.setattr(common, "HELD", 100)
    monkeypatch.setattr(json_stream, "PIECE", 64)   # many pieces, not one
    out = tmp_path / "w.json"
    done = run_cli("whatif", _three(tmp_path), "--on", A100, "--precision", "fp16",
                   "--json", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout == out.read_text(encoding="utf-8")
    doc = json.loads(done.stdout)
    assert {r["kernel"]: tuple(r[k] for k in KEYS) for r in doc["moves"]} == {
        name: pytest.approx(h, rel=1e-12) for name, h in HAND.items()}
    assert doc["generator"]["command"][:2] == ["rooflab", "whatif"]
    assert doc["notes"] == [] and len(doc["warnings"]) == 1   # tiny's launch-floor line


def test_interrupted_o_leaves_no_half_file(tmp_path, monkeypatch):
    """Ctrl-C while the rows are written: exit 130, the old file as it was, no temporary."""
    from rooflab.model import whatif_floors

    out = tmp_path / "w.json"
    out.write_text("old\n")
    monkeypatch.setattr(json_stream, "PIECE", 1)   # each piece to the file as made
    real = whatif_floors._rows
    seen = []

    def interrupted(w, exposures):
        rows = real(w, exposures)
        yield next(rows)
        # the write is under way: the first row went to a temporary beside w.json
        seen.extend(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp"))
        raise KeyboardInterrupt

    monkeypatch.setattr(whatif_floors, "_rows", interrupted)
    done = run_cli("whatif", _three(tmp_path), "--on", A100, "--precision", "fp16",
                   "-o", str(out))
    assert done.returncode == 130
    assert len(seen) == 1 and seen[0].startswith(".w.json.")
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["three.csv", "w.json"]


def test_write_json_interrupted_mid_array_removes_the_temporary(tmp_path):
    def rows():
        yield {"i": 0}
        yield {"i": 1}
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_json(tmp_path / "new.json", {"rows": Streamed(rows)})
    assert list(tmp_path.iterdir()) == []


DOC = {"a": 1, "s": "\u00e9\n\"", "rows": None, "empty": None, "nested": {"deep": None,
       "plain": [1, {"x": 2.5}], 3: "int key"}, "plain_list": [], "set": {"b", "a"},
       "in_list": [None], "after": {"x": {}}}


def _doc(streamed: bool) -> dict:
    """DOC with its arrays Streamed or lists (the same items)."""
    def arr(items):
        return Streamed(lambda: iter(items)) if streamed else list(items)

    return {**DOC, "rows": arr([{"k": [1, 2, {"y": "a\nb"}]}, {}, [], "z", None]),
            "empty": arr([]), "nested": {**DOC["nested"], "deep": arr([[], {"q": 1}])},
            "in_list": [arr([1, 2])]}


@pytest.mark.parametrize("piece", [1, 7, 1 << 20])
def test_iter_json_is_json_dumps_text(monkeypatch, piece):
    monkeypatch.setattr(json_stream, "PIECE", piece)
    want = json.dumps(_doc(False), indent=2, allow_nan=False,
                      default=lambda o: sorted(o))   # the set, as json_default sorts it
    got = list(iter_json(_doc(True)))
    assert "".join(got) == want
    if piece == 7:   # pieces of at least PIECE characters, the last one shorter
        assert len(got) > 10 and all(len(p) >= 7 for p in got[:-1])


def test_iter_json_refuses_nan_as_dumps_does():
    with pytest.raises(ValueError, match="Out of range float"):
        "".join(iter_json({"rows": Streamed(lambda: iter([1.0, float("nan")]))}))


def _peak_writing(path: Path, obj) -> int:
    tracemalloc.start()
    try:
        write_json(path, obj)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_write_json_holds_a_piece_not_the_text(tmp_path, monkeypatch):
    """20,000 rows (1.4 MB of text): the old write held the encoder's pieces and the
    joined text (>= 1x the text); now a piece at a time (16 KiB here) and a batch of the
    encoder's small strings (512 here): 94 kB."""
    monkeypatch.setattr(json_stream, "PIECE", 1 << 14)
    monkeypatch.setattr(json_stream, "_BATCH", 512)
    rows = [{"i": i, "name": f"k{i}", "x": i * 0.5} for i in range(20_000)]
    path = tmp_path / "rows.json"
    peak = _peak_writing(path, {"rows": rows})
    size = path.stat().st_size
    assert size > 1.4e6
    assert peak < 0.2 * size, (peak, size)
    # Streamed rows: not even the dicts are held
    streamed = Streamed(lambda: ({"i": i, "name": f"k{i}", "x": i * 0.5}
                                 for i in range(20_000)))
    peak = _peak_writing(tmp_path / "streamed.json", {"rows": streamed})
    assert (tmp_path / "streamed.json").read_bytes() == path.read_bytes()
    assert peak < 0.2 * size, (peak, size)


def test_emit_json_prints_nothing_of_a_small_document_that_fails(capsys):
    """Under HELD characters a document goes out whole or not at all (json_errors then
    prints its error document on an empty stdout); past HELD it streams."""
    def rows():
        yield {"i": 0}
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        common.emit_json({"rows": Streamed(rows)})
    assert capsys.readouterr().out == ""


def test_emit_json_streams_past_held(capsys, monkeypatch):
    monkeypatch.setattr(common, "HELD", 10)
    monkeypatch.setattr(json_stream, "PIECE", 10)

    def rows():
        yield {"i": 0}
        yield {"i": 1}
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        common.emit_json({"rows": Streamed(rows)})
    # what was made before the failure went out
    assert capsys.readouterr().out.startswith('{\n  "rows": [\n    {\n      "i": 0')

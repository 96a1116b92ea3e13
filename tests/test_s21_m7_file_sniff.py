"""s21 review x2 (reread of r5's file variants). F6: a small gzipped torch trace whose
"traceEvents" key follows a long deviceProperties block was not told a trace (the gzip head
was decompressed only as far as its own compressed length). F8: a cp1252 kernel CSV with an
accented letter in every name was refused as "binary data" (more than one byte in fifty not
UTF-8), and a UTF-16 file with its byte-order mark whose start is mostly Chinese was read as
UTF-8 and refused the same way. Numbers: the kernel CSV and trace of test_s21_f5."""

from __future__ import annotations

import gzip
import io
import json
import random
import sys

from test_s21_f5_file_variants import FIX, TRACE, _kernels, _put, _run, _trace_mm

from rooflab.files_decode import looks_binary
from rooflab.files_kind import file_kind

# 200 devices of an 8-GPU box's size, padded as a long deviceProperties block is: the
# "traceEvents" key then starts past 50 KB of JSON, while the gzipped file is a few KB
H100 = {"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85_000_000_000,
        "computeMajor": 9, "computeMinor": 0, "numSms": 132, "pad": "x" * 128}


def _big_props_trace() -> bytes:
    doc = {"schemaVersion": 1, "deviceProperties": [dict(H100, id=i) for i in range(200)],
           **TRACE}
    return json.dumps(doc).encode()


def test_small_gzipped_trace_with_a_long_device_block_is_a_trace(tmp_path, capsys):
    raw = _big_props_trace()
    gz = gzip.compress(raw)
    assert len(gz) < 8192 < 50_000 < raw.index(b'"traceEvents"') < 65_536   # the case
    plain = _put(tmp_path, "t.json", raw)
    path = _put(tmp_path, "t.json.gz", gz)
    # before: "rooflab" (a kernel file), so `report t.json.gz` found no roof in it
    assert file_kind(plain) == file_kind(path) == "torch"
    rc, out, err = _run(capsys, ["report", path, "--json"])
    assert rc == 0, err
    doc = json.loads(out)
    assert "H100" in json.dumps(doc["roof"])   # the trace's own device, as the plain file
    _trace_mm({k["name"]: k for k in doc["kernels"]})


# 40 names with one accented letter each, as Excel's plain CSV saves them (cp1252): one
# stray byte in 37 characters, over the old one-in-fifty limit
CP1252 = ("name,flop,bytes,seconds,precision\n" + "".join(
    f"kernel_\u00e4_{i},1e9,1e9,0.001,fp32\n" for i in range(40))).encode("cp1252")


def test_cp1252_csv_with_an_accent_per_line_is_read_with_the_hint(tmp_path, capsys):
    # before: "error: k.csv: not a UTF-8 text file (binary data); is it the right file?"
    p = _put(tmp_path, "k.csv", CP1252)
    ks, err = _kernels(capsys, ["report", p, "--on", "A100 80GB SXM"])
    assert len(ks) == 40
    assert ks["kernel_\ufffd_3"]["flop"] == {"fp32": 1e9}
    assert ks["kernel_\ufffd_39"]["bytes"] == {"DRAM": 1e9}
    assert (f"warning: {p}:2: holds 40 bytes that are not UTF-8 (the first, 0xE4, is 'ä' in "
            f"cp1252/Latin-1), read as '\ufffd'; to keep the names, {FIX}") in err


def test_cp1252_csv_on_standard_input_is_read_too(capsys, monkeypatch):
    # before: "standard input holds binary data (an .ncu-rep report?)"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(CP1252)))
    ks, err = _kernels(capsys, ["report", "-", "--on", "A100 80GB SXM"])
    assert len(ks) == 40 and ks["kernel_\ufffd_0"]["seconds"] == 0.001
    assert "0xE4, is 'ä' in cp1252/Latin-1" in err


def test_binary_without_nuls_is_still_binary(tmp_path, capsys):
    # random bytes with no NUL: the stray bytes come among control characters
    data = bytes(b for b in random.Random(7).randbytes(4096) if b)
    text = data.decode("utf-8", errors="replace")
    assert looks_binary(text, text.count("\ufffd"))
    # all stray bytes, no control character and no text around them: binary too
    assert looks_binary("\ufffd" * 400, 400)
    # the cp1252 file: text
    text = CP1252.decode("utf-8", errors="replace")
    assert not looks_binary(text, 40)
    p = _put(tmp_path, "k.csv", b"ab,cd\n" + data)
    rc, _, err = _run(capsys, ["report", p, "--on", "A100 80GB SXM"])
    assert rc == 2 and "not a UTF-8 text file (binary data)" in err and "warning" not in err


def test_utf16_with_its_mark_and_chinese_names_is_read(tmp_path, capsys):
    # a kernel CSV whose names are Chinese, as in the seeds, saved by PowerShell's `>`:
    # most of its first 256 characters are CJK, encoded with no zero byte
    names = [f"矩阵乘法注意力卷积归约{i}" * 3 for i in range(12)]
    text = "name,flop,bytes,seconds,precision\n" + "".join(
        f"{n},2e9,1e7,1e-3,fp32\n" for n in names)
    data = text.encode("utf-16")
    high = data[3:514:2]
    assert high.count(0) * 2 < len(high)   # the old test's "mostly ASCII" fails here
    # before: "error: k.csv:2: not a UTF-8 text file (binary data)"
    ks, _ = _kernels(capsys, ["report", _put(tmp_path, "k.csv", data), "--on",
                              "A100 80GB SXM"])
    assert set(ks) == set(names)
    assert ks[names[5]]["flop"] == {"fp32": 2e9} and ks[names[5]]["seconds"] == 1e-3
    # big-endian too, with its mark
    ks, _ = _kernels(capsys, ["report", _put(tmp_path, "be.csv", b"\xfe\xff" + text.encode(
        "utf-16-be")), "--on", "A100 80GB SXM"])
    assert ks[names[11]]["bytes"] == {"DRAM": 1e7}


def test_a_mark_before_binary_data_is_still_binary(tmp_path, capsys):
    # FF FE and then small integers (int16 samples) decode as UTF-16 control characters;
    # FF FE and random bytes hold a lone surrogate: both refused as binary data
    ints = b"\xff\xfe" + b"".join(i.to_bytes(2, "little") for i in range(1, 600))
    rng = b"\xff\xfe" + random.Random(3).randbytes(2048)
    for name, data in (("ints.csv", ints), ("rand.csv", rng)):
        rc, _, err = _run(capsys, ["report", _put(tmp_path, name, data), "--on",
                                   "A100 80GB SXM"])
        assert rc == 2 and "not a UTF-8 text file (binary data)" in err, (name, err)

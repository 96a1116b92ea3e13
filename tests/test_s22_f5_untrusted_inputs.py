"""Review s22 r1 F4, F8 and r3 F3: inputs from strangers and from Chinese Excel.
- a gzip file expanded without bound (a 4 MB bomb reached 2.9 GB, then an internal error):
  files_decode.GUNZIP_LIMIT stops it with an error naming the file, the limit and the fix;
- a 400-digit integer in config.json was an OverflowError (exit 70);
- a torch op past the FLOP range gave an error without the trace's name;
- a roof's overhead_s of 1e308 was taken;
- a CSV saved as GBK lost every Chinese name to U+FFFD, with a cp1252 hint."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rooflab import files_decode, files_gzip
from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.files import read_text

QWEN = Path(__file__).parent / "data" / "llm_configs" / "qwen3-8b.json"
CSV = "name,flop,bytes,seconds,precision\n"


def _bomb(path: Path, spaces: int) -> bytes:
    data = b'{"traceEvents": [' + b" " * spaces + b"]}"
    path.write_bytes(gzip.compress(data, 9))
    return path.read_bytes()


def test_gzip_expansion_stops_at_the_limit(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(files_gzip, "GUNZIP_LIMIT", 1 << 20)   # split out (s22 m3)
    bomb = tmp_path / "bomb.json.gz"
    packed = _bomb(bomb, 3 << 20)     # 3 MiB of text in about 3 kB
    assert main(["torch", str(bomb)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bomb}: cannot read trace: it expands past 1 MiB when "
                          f"gunzipped")
    assert "gunzip -k FILE" in err and "Traceback" not in err
    with pytest.raises(ParseError, match="expands past 1 MiB"):   # standard input too
        files_decode.decode_bytes(packed, "<stdin>")
    small = tmp_path / "k.csv.gz"     # under the limit: read as before
    small.write_bytes(gzip.compress((CSV + "k,1e9,1e8,1e-3,fp32\n").encode()))
    assert read_text(small).startswith("name,flop")
    assert files_decode.decode_bytes(small.read_bytes(), "-").endswith("fp32\n")


def test_huge_integer_in_config_is_an_input_error(tmp_path, capsys):
    cfg = json.loads(QWEN.read_text())
    cfg["num_hidden_layers"] = 10 ** 400
    f = tmp_path / "cfg.json"
    f.write_text(json.dumps(cfg))
    assert main(["llm", str(f), "--on", "h100-sxm"]) == 2          # was 70 (OverflowError)
    assert capsys.readouterr().err == (
        f"error: {f}:1: field 'num_hidden_layers' is an integer of about 401 digits, larger "
        f"than rooflab takes (at most 2**63 - 1 = 9.22e+18); is the field right?\n")


def test_torch_range_error_names_the_trace(tmp_path, capsys):
    dims = [[10 ** 12, 10 ** 12], [10 ** 12, 10 ** 12]]
    ev = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0,
           "dur": 100, "args": {"External id": 1, "Input Dims": dims,
                                "Input type": ["float", "float"]}},
          {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 10,
           "dur": 50, "args": {"External id": 1}}]
    f = tmp_path / "t_huge.json"
    f.write_text(json.dumps({"traceEvents": ev}))
    assert main(["torch", str(f)]) == 2
    err = capsys.readouterr().err
    # 2 * 1e12^3 = 2e36 FLOP, past the 1e30 the range allows
    assert err.startswith(f"error: {f}: kernel 'aten::mm [") and "2e+36 is outside" in err


def test_overhead_has_an_upper_bound(tmp_path, capsys):
    roof = {"schema_version": 2, "name": "r", "kind": "nominal", "overhead_s": 1e308,
            "compute": [{"precision": "fp32", "unit": "vector", "flop_per_s": 1e13}],
            "memory": [{"level": "DRAM", "bytes_per_s": 1e12}]}
    f, k = tmp_path / "roof.json", tmp_path / "k.csv"
    f.write_text(json.dumps(roof))
    k.write_text(CSV + "k1,1e9,1e8,1e-3,fp32\n")
    assert main(["report", str(k), "--on", str(f)]) == 2
    assert "field 'overhead_s' is 1e+308 s, past the 1 s" in capsys.readouterr().err
    roof["overhead_s"] = 5e-6           # a launch's microseconds: taken
    f.write_text(json.dumps(roof))
    assert main(["report", str(k), "--on", str(f)]) == 0
    assert "launch floor 5 us" in capsys.readouterr().out


NAMES = ("矩阵乘法_gemm", "卷积", "矩阵", "排序")


def test_gbk_csv_keeps_its_chinese_names(tmp_path, capsys):
    f = tmp_path / "zh_gbk.csv"
    f.write_bytes((CSV + "".join(f"{n},1e9,1e8,{i + 1}e-3,fp32\n"
                                 for i, n in enumerate(NAMES))).encode("gbk"))
    with pytest.warns(Warning, match="not UTF-8 but GBK/GB18030.*iconv -f gb18030"):
        text = read_text(f)
    assert [line.split(",")[0] for line in text.splitlines()[1:]] == list(NAMES)
    assert main(["-q", "report", str(f), "--on", "t4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(k["name"] for k in doc["kernels"]) == sorted(NAMES)


def test_cp1252_csv_is_not_taken_for_gbk(tmp_path):
    # 'Mü' (4D FC) then 'l' (6C): FC 6C is a GBK pair too, outside GB2312's plane
    f = tmp_path / "cp.csv"
    f.write_bytes((CSV + "Müller_k,1e9,1e8,1e-3,fp32\ncafé_k,1e9,1e8,1e-3,fp32\n")
                  .encode("cp1252"))
    with pytest.warns(Warning, match=r"0xFC, is 'ü' in cp1252/Latin-1\), read as"):
        text = read_text(f)
    assert "M\ufffdller_k" in text and "caf\ufffd_k" in text


def test_not_utf8_hint_names_gbk(tmp_path):
    # one GBK name amid a byte no encoding here maps (0xFF): read as U+FFFD, hint in GBK
    f = tmp_path / "mixed.csv"
    f.write_bytes(CSV.encode() + "矩阵,1e9,1e8,1e-3,fp32\n".encode("gbk")
                  + b"x\xff,1e9,1e8,1e-3,fp32\n")
    with pytest.warns(Warning, match="0xBE 0xD8 is '矩' in GBK.*iconv -f gbk -t utf-8"):
        read_text(f)

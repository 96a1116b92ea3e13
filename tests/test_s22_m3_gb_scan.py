"""Review s22 h1 H1: a big file with one stray non-UTF-8 byte read in 14 s (2 s before): the
GB18030 check decoded it again and looped in Python over every character. Now a bytes scan
rules Latin-1 strays out at once, and the counting runs in the regex engine."""

from __future__ import annotations

import time

import pytest

from rooflab.errors import InputWarning
from rooflab.files_decode import gb18030_text, open_text


def test_one_stray_latin1_byte_in_a_big_file_is_checked_fast():
    # 'é_' (E9 5F) is a GBK pair too: the whole file decoded as GB18030, then the loop
    data = b"k,1e9,1e8,1e-3,fp32\n" * 1_500_000 + "caf\u00e9_gemm,1,1,1,fp32\n".encode("cp1252")
    assert len(data) > 30_000_000
    start = time.perf_counter()
    assert gb18030_text(data) is None
    # old: decoded 30 MB as GB18030 and looped over 30 M characters (3-5 s here); new 0.1 s
    assert time.perf_counter() - start < 1.0


def test_gbk_chinese_names_are_still_found_and_latin_ones_refused(tmp_path):
    text = "name,flop\n\u77e9\u9635\u4e58\u6cd5_gemm,1e9\nsoftmax \u5f52\u4e00\u5316,2e9\n"
    assert gb18030_text(text.encode("gbk")) == text
    assert gb18030_text(("\ufeff" + text).encode("gb18030")) == text   # mark dropped
    # cp1252 'M\u00fcller' is FC 6C: GBK too, but not in GB2312's common plane
    assert gb18030_text("M\u00fcller,1e9\n".encode("cp1252")) is None
    # an accent before a non-letter (E9 2C) is no pair of the common plane
    assert gb18030_text("caf\u00e9,1e9\n".encode("cp1252")) is None
    assert gb18030_text(text.encode("utf-8")) is None   # UTF-8: not this check's business
    path = tmp_path / "zh.csv"
    path.write_bytes(text.encode("gbk"))
    with pytest.warns(InputWarning, match="not UTF-8 but GBK/GB18030"), open_text(path) as fh:
        assert fh.read_all() == (text, False)

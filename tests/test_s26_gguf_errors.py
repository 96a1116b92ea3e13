"""Bad GGUF input gets one clear error naming the file (and the key); the header alone is
read, never the tensor data; without the gguf package, the extra to install is named."""

from __future__ import annotations

import builtins
import os
import sys
import time

import pytest
from s26_gguf_files import TINY_TOTAL_BYTES, finish, gguf, write_tiny_llama

from rooflab.errors import InputError, MissingDependency
from rooflab.workloads.llm import gguf_header, load_config


def test_a_file_that_is_not_gguf(tmp_path, capsys):
    from cli_inproc import one_line_error

    bad = tmp_path / "model.gguf"
    bad.write_text("hello")
    err = one_line_error(capsys, ["llm", str(bad), "--on", "H100"])
    assert str(bad) in err and "not a GGUF file (it starts with b'hell'" in err
    (tmp_path / "empty.gguf").write_bytes(b"")
    with pytest.raises(InputError, match="not a GGUF file \\(it is empty"):
        load_config(str(tmp_path / "empty.gguf"))


def test_a_truncated_header_and_truncated_data(tmp_path):
    whole = write_tiny_llama(tmp_path / "whole.gguf").read_bytes()
    (tmp_path / "head.gguf").write_bytes(whole[:100])
    with pytest.raises(InputError, match="head.gguf: the GGUF header is truncated: it ends "
                                         "at byte 100 while reading metadata key"):
        load_config(str(tmp_path / "head.gguf"))
    (tmp_path / "data.gguf").write_bytes(whole[:-5000])
    with pytest.raises(InputError, match="data.gguf: the file is truncated: tensor "
                                         "'output.weight' ends at byte"):
        load_config(str(tmp_path / "data.gguf"))


def test_an_unknown_architecture_is_named(tmp_path):
    path = write_tiny_llama(tmp_path / "m.gguf", arch="mamba")
    with pytest.raises(InputError, match="m.gguf: general.architecture 'mamba' is not one "
                                         "rooflab reads"):
        load_config(str(path))


@pytest.mark.parametrize("key", ["block_count", "embedding_length", "attention.head_count",
                                 "feed_forward_length"])
def test_a_missing_key_is_named_with_the_file(tmp_path, key):
    path = write_tiny_llama(tmp_path / "k.gguf", drop=(key,))
    with pytest.raises(InputError, match=f"k.gguf: metadata key 'llama.{key}' is missing"):
        load_config(str(path))


def test_only_the_header_is_read_of_a_large_file(tmp_path, monkeypatch):
    # the tiny model's header, then its data region grown to 20 GB (a sparse file: no
    # disk used): rooflab reads the first chunk and never the tensors
    path = write_tiny_llama(tmp_path / "big.gguf")
    os.truncate(path, 20 * 10**9)
    read = []
    real_open = builtins.open

    class Counting:
        """The file, counting the bytes read from it."""

        def __init__(self, f):
            self.f = f

        def read(self, n=-1):
            data = self.f.read(n)
            read.append(len(data))
            return data

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    def counting_open(*args, **kwargs):
        return Counting(real_open(*args, **kwargs))

    monkeypatch.setattr(gguf_header, "open", counting_open, raising=False)
    t0 = time.perf_counter()
    cfg = load_config(str(path))
    took = time.perf_counter() - t0
    assert cfg.stored.file_bytes == TINY_TOTAL_BYTES
    assert 0 < sum(read) <= gguf_header.CHUNK + 4
    assert took < 10      # a generous bound on a shared machine; 20 GB would take minutes


def test_without_the_gguf_package_the_extra_is_named(tmp_path, monkeypatch):
    path = write_tiny_llama(tmp_path / "m.gguf")
    monkeypatch.setitem(sys.modules, "gguf", None)     # import gguf -> ImportError
    with pytest.raises(MissingDependency, match=r"pip install 'rooflab\[gguf\]'"):
        load_config(str(path))


def test_gguf_is_an_extra_and_in_all():
    try:
        import tomllib
    except ModuleNotFoundError:   # Python 3.10: the core's tomli
        import tomli as tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    extras = project["project"]["optional-dependencies"]
    assert any(r.startswith("gguf") for r in extras["gguf"])
    assert "gguf" in extras["all"][0]
    assert gguf.__name__ == "gguf"


def test_a_file_without_tensors_is_refused(tmp_path):
    w = gguf.GGUFWriter(str(tmp_path / "vocab.gguf"), "llama")
    w.add_uint32("llama.block_count", 2)
    finish(w, None)
    with pytest.raises(InputError, match="vocab.gguf: the GGUF file has no tensors"):
        load_config(str(tmp_path / "vocab.gguf"))

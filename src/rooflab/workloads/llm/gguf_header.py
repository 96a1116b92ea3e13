"""A GGUF file's header (llama.cpp's model format): its metadata and every tensor's name,
ggml type, shape and byte size, read without touching the tensor data.

The layout is the gguf package's (gguf.constants: GGUF_MAGIC, GGUFValueType, and
GGML_QUANT_SIZES for the bytes of each type's blocks). gguf.GGUFReader is not used for the
reading itself: it memory-maps the whole file and builds a numpy view per array element,
14 s for a Llama-3-8B header (128,256 tokens and 280,147 merges) on this project's test
machine; walking the header's bytes here takes a fraction of a second, and reads nothing
past the tensor table. Arrays of more than SMALL_ARRAY values are kept as their length
only (the vocabulary, the merges): rooflab needs how many tokens, not which.
"""

from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ...errors import InputError, require

MAGIC = b"GGUF"
VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
SMALL_ARRAY = 4096
CHUNK = 1 << 20
# GGUFValueType -> struct format of the scalar types (8 string, 9 array)
SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
           10: "<Q", 11: "<q", 12: "<d"}
STRING, ARRAY = 8, 9


@dataclass(frozen=True)
class ArrayLength:
    """A long metadata array (tokens, merges, scores) kept as its length."""

    length: int


@dataclass(frozen=True)
class TensorInfo:
    """One tensor of the file: `shape` in ggml order (ne[0], the row length, first), the
    ggml type's name (Q4_K, F32, ...) and its stored bytes, whole blocks of the type."""

    name: str
    shape: tuple[int, ...]
    type_name: str
    elements: int
    nbytes: int
    offset: int


@dataclass(frozen=True)
class GgufHeader:
    path: str
    version: int
    metadata: dict[str, Any]
    tensors: tuple[TensorInfo, ...]
    data_offset: int
    file_size: int


class _Cursor:
    """The file's bytes from the start, read in chunks as far as the parse needs them."""

    def __init__(self, f: BinaryIO, path: str, size: int) -> None:
        self.f, self.path, self.buf, self.pos, self.what = f, path, b"", 0, "the header"
        self.size = size

    def need(self, n: int) -> None:
        end = self.pos + n
        if end <= len(self.buf):
            return
        if n > self.size:
            # a damaged length (a string or array of 2**40 B in a 33 B file) is refused
            # before it is read: asking f.read() for it ran out of memory (s26 v1-F4)
            raise InputError(f"{self.path}: {self.what} at byte {self.pos:,} claims "
                             f"{n:,} B, more than the whole file's {self.size:,} B: the "
                             f"GGUF header is damaged (or this is not a whole GGUF file)")
        more = self.f.read(max(end - len(self.buf), CHUNK, len(self.buf)))
        self.buf += more
        if end > len(self.buf):
            raise InputError(f"{self.path}: the GGUF header is truncated: it ends at byte "
                             f"{len(self.buf):,} while reading {self.what}; the file is "
                             f"incomplete (an interrupted download?): fetch it again")

    def unpack(self, fmt: str) -> Any:
        size = struct.calcsize(fmt)
        self.need(size)
        (v,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return v

    def string(self) -> str:
        n = self.unpack("<Q")
        self.need(n)
        raw = self.buf[self.pos:self.pos + n]
        self.pos += n
        return raw.decode("utf-8", errors="replace")

    def skip_strings(self, count: int) -> None:
        """Step over `count` strings (a vocabulary) without decoding them."""
        for _ in range(count):
            self.need(8)
            (n,) = struct.unpack_from("<Q", self.buf, self.pos)
            self.pos += 8
            self.need(n)
            self.pos += n

    def value(self, vtype: int) -> Any:
        if vtype in SCALARS:
            return self.unpack(SCALARS[vtype])
        if vtype == STRING:
            return self.string()
        if vtype == ARRAY:
            return self.array()
        raise InputError(f"{self.path}: {self.what} has value type {vtype}, not one GGUF "
                         f"defines (0-12): the header is damaged, or not a GGUF file")

    def array(self) -> Any:
        itype, count = self.unpack("<I"), self.unpack("<Q")
        if count <= SMALL_ARRAY:
            return [self.value(itype) for _ in range(count)]
        if itype == STRING:
            self.skip_strings(count)
        elif itype in SCALARS:
            size = struct.calcsize(SCALARS[itype]) * count
            self.need(size)
            self.pos += size
        else:   # arrays of arrays: walk them
            for _ in range(count):
                self.value(itype)
        return ArrayLength(count)


# ggml types newer than some gguf packages still installed: id -> (name, (block size,
# block bytes)). MXFP4 (ggml PR #15091, gpt-oss's experts): 32 e2m1 weights in 16 B and
# one e8m0 scale byte (ggml-common.h block_mxfp4), gguf >= 0.18 knows it as type 39.
NEWER_TYPES = {39: ("MXFP4", (32, 17))}


def _types(g: Any = None) -> tuple[dict[int, str], dict[str, tuple[int, int]]]:
    """ggml type id -> name, and name -> (block size, type size), from the gguf package
    (`g`, else the installed one), with NEWER_TYPES where it lacks them."""
    g = g or require("gguf", "gguf", "reading a llama.cpp GGUF model file")
    sizes = {t.name: g.GGML_QUANT_SIZES[t] for t in g.GGMLQuantizationType
             if t in g.GGML_QUANT_SIZES}
    names = {int(t): t.name for t in g.GGMLQuantizationType}
    for type_id, (name, size) in NEWER_TYPES.items():
        if type_id not in names:
            names[type_id] = name
            sizes.setdefault(name, size)
    return names, sizes


def read_header(path: str | os.PathLike[str]) -> GgufHeader:
    """The metadata and tensor table of a GGUF file; an InputError naming the file when it
    is not one, is truncated, or its header is damaged."""
    p = Path(path)
    names, sizes = _types()
    if not p.is_file():
        raise InputError(f"{p}: GGUF file not found")
    size = p.stat().st_size
    with open(p, "rb") as f:
        magic = f.read(4)
        if magic != MAGIC:
            start = f"it starts with {magic!r}" if magic else "it is empty"
            raise InputError(f"{p}: not a GGUF file ({start}; a GGUF file "
                             f"starts with b'GGUF'); give a llama.cpp .gguf model, or a "
                             f"Hugging Face config.json")
        c = _Cursor(f, str(p), size)
        c.buf, c.pos = magic, 4
        version = c.unpack("<I")
        if version not in VERSIONS:
            raise InputError(f"{p}: GGUF version {version}, rooflab reads versions 2 and 3 "
                             f"(a big-endian file reads as a huge version; convert it with "
                             f"llama.cpp's gguf tools)")
        n_tensors, n_kv = c.unpack("<Q"), c.unpack("<Q")
        meta: dict[str, Any] = {}
        for i in range(n_kv):
            c.what = f"metadata entry {i + 1} of {n_kv}"
            key = c.string()
            c.what = f"metadata key '{key}'"
            meta[key] = c.value(c.unpack("<I"))
        tensors = [_tensor(c, i, n_tensors, names, sizes) for i in range(n_tensors)]
        align = meta.get("general.alignment", DEFAULT_ALIGNMENT)
        if not isinstance(align, int) or align < 1 or align & (align - 1):
            raise InputError(f"{p}: metadata key 'general.alignment' is {align!r}, not a "
                             f"power of two; the header is damaged")
        data_offset = -(-c.pos // align) * align
    header = GgufHeader(str(p), version, meta, tuple(tensors), data_offset, size)
    _check_data_present(header)
    return header


def _tensor(c: _Cursor, i: int, count: int, names: dict[int, str],
            sizes: dict[str, tuple[int, int]]) -> TensorInfo:
    c.what = f"tensor {i + 1} of {count}"
    name = c.string()
    c.what = f"tensor '{name}'"
    dims = c.unpack("<I")
    if dims > 8:
        raise InputError(f"{c.path}: tensor '{name}' has {dims} dimensions (GGML has at most "
                         f"4): the header is damaged")
    shape = tuple(c.unpack("<Q") for _ in range(dims))
    type_id, offset = c.unpack("<I"), c.unpack("<Q")
    type_name = names.get(type_id)
    if type_name is None or type_name not in sizes:
        raise InputError(f"{c.path}: tensor '{name}' has ggml type {type_id}, which the "
                         f"installed gguf package does not know; `pip install -U gguf` "
                         f"for newer llama.cpp types")
    block, type_size = sizes[type_name]
    elements = 1
    for d in shape:
        elements *= d
    if shape and shape[0] % block:
        raise InputError(f"{c.path}: tensor '{name}' ({type_name}) has rows of {shape[0]} "
                         f"values, not a whole number of its {block}-value blocks: the "
                         f"header is damaged")
    return TensorInfo(name, shape, type_name, elements, elements // block * type_size, offset)


def _check_data_present(h: GgufHeader) -> None:
    """The file holds every tensor's bytes (sizes only: no tensor data is read)."""
    if not h.tensors:
        return
    last = max(h.tensors, key=lambda t: t.offset + t.nbytes)
    end = h.data_offset + last.offset + last.nbytes
    if end > h.file_size:
        raise InputError(f"{h.path}: the file is truncated: tensor '{last.name}' ends at byte "
                         f"{end:,}, the file has {h.file_size:,}; fetch it again (an "
                         f"interrupted download?)")


# llama.cpp's split file names (llama_split_path: "%s-%05d-of-%05d.gguf", gguf-split and
# GGUFWriter(split_max_tensors=...)): shard 1 holds the metadata, every shard its tensors
SPLIT_NAME = re.compile(r"(.+)-(\d{5})-of-(\d{5})\.gguf")


def read_model(path: str | os.PathLike[str]) -> GgufHeader:
    """A model's header with the tensors of all its shards: a split GGUF (split.count > 1)
    is read as llama.cpp's loader reads it, its siblings found by the -0000k-of-0000N name
    in the same folder (s26 v1-F1: shard 1 alone was counted as the whole model)."""
    p = Path(path)
    m = SPLIT_NAME.fullmatch(p.name)
    first = p.with_name(f"{m.group(1)}-{1:05d}-of-{m.group(3)}.gguf") if m else p
    if first != p and not first.is_file():
        raise InputError(f"{p}: shard 1 of this split GGUF, {first.name}, is not in "
                         f"{first.parent}; put all {int(m.group(3))} shards in one folder")
    h = read_header(first)
    count = h.metadata.get("split.count", 1)
    if not isinstance(count, int) or count <= 1:
        return h
    if m is None or int(m.group(3)) != count:
        raise InputError(f"{p}: shard {h.metadata.get('split.no', 0) + 1} of a GGUF split "
                         f"into {count} files, but its name is not llama.cpp's "
                         f"<name>-0000k-of-{count:05d}.gguf, so its siblings cannot be found; "
                         f"rename the shards, or merge them with llama-gguf-split --merge")
    tensors, size = list(h.tensors), h.file_size
    for k in range(2, count + 1):
        shard = first.with_name(f"{m.group(1)}-{k:05d}-of-{m.group(3)}.gguf")
        if not shard.is_file():
            raise InputError(f"{p}: shard {k} of {count}, {shard.name}, is missing from "
                             f"{shard.parent}; download every shard (or merge them with "
                             f"llama-gguf-split --merge)")
        part = read_header(shard)
        tensors += part.tensors
        size += part.file_size
    want = h.metadata.get("split.tensors.count")
    if isinstance(want, int) and want != len(tensors):
        raise InputError(f"{first}: split.tensors.count says {want:,} tensors, its "
                         f"{count} shards hold {len(tensors):,}: a shard is from another "
                         f"model or damaged; fetch them again")
    return GgufHeader(str(first), h.version, h.metadata, tuple(tensors), h.data_offset, size)

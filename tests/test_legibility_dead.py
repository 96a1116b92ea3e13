"""Review r1 (legibility) F1-F3, F6, F12: dead names are gone, the package imports moved
names from their owners, hardware does not import ingest, and one function builds the ridge
rows for a catalog entry and for a roof file."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import rooflab
from rooflab.hardware.catalog import lookup, ridges
from rooflab.model.ceiling import Ceiling, Roof

SRC = Path(rooflab.__file__).resolve().parent

# (module, name): defined or re-exported with no user in src/, tests/, docs/ or README
DEAD = [
    ("rooflab.model.diagnose", "_ByName"),
    ("rooflab.model.byte_convention", "COUNTER_BYTES"),
    ("rooflab.model.analysis", "COUNTER_BYTES"),
    ("rooflab.model.analysis", "BOUNDS"),
    ("rooflab.report.chart_layout_size", "text_pt"),
    ("rooflab.report.chart_points", "kernel_points"),
    ("rooflab.report.chart", "kernel_points"),
    ("rooflab.report.terminal", "per_request"),
    ("rooflab.report.read_with_care", "DATASHEET"),
    ("rooflab.report.markdown", "DATASHEET"),
    # F3: old names whose only users were the tests that pinned them
    ("rooflab.hardware.host", "parse_size_text"),
    ("rooflab.probe.gpu.identity", "parse_device"),
    ("rooflab.workloads.ops", "LAYERNORM_FLOP_PER_ELEMENT"),
    ("rooflab.bench.torch_flop_rules", "LAYERNORM_FLOP_PER_ELEMENT"),
    ("rooflab.bench.torch_count", "LAYERNORM_FLOP_PER_ELEMENT"),
    ("rooflab.hardware.cpu_arch", "detect_microarch"),
    ("rooflab.hardware.cpu_arch", "e_core_arch"),
    ("rooflab.hardware.cpu_arch", "cpu_nominal_roof"),
    ("rooflab.hardware.cpu_arch", "hybrid_nominal_roof"),
]


@pytest.mark.parametrize(("module", "name"), DEAD)
def test_dead_name_is_gone(module, name):
    assert not hasattr(importlib.import_module(module), name)


def test_analysis_has_no_name_scan_or_level_filter():
    from rooflab.model.analysis import Analysis

    assert not hasattr(Analysis, "for_kernel") and not hasattr(Analysis, "at_level")


def _imports(rel: str) -> list[tuple[str, str]]:
    """(module, name) of every `from X import name` in a package file, X made absolute."""
    path = SRC / rel
    pkg = ["rooflab", *Path(rel).parent.parts]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = pkg[:len(pkg) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            out += [(mod, a.name) for a in node.names]
    return out


def test_catalog_derives_cpu_peaks_through_cpu_nominal():
    got = _imports("hardware/catalog.py")
    assert ("rooflab.hardware.cpu_nominal", "cpu_nominal_roof") in got
    assert ("rooflab.hardware.cpu_arch", "cpu_nominal_roof") not in got
    # the derived roof: EPYC 9654, 96 cores x 3.55 GHz (AMD's all-core boost) x 4 fp64 lanes
    # x 2 FMA pipes x 2 FLOP = 5452.8 GFLOP/s; DRAM 12 channels x 4800 MT/s x 8 B = 460.8 GB/s
    roof = lookup("EPYC 9654").roof
    assert roof.find_compute("fp64").value == pytest.approx(96 * 3.55e9 * 4 * 2 * 2)
    assert roof.bandwidth("DRAM").value == pytest.approx(12 * 4800e6 * 8)


def test_hardware_imports_nothing_from_ingest():
    """../shared/design/ARCHITECTURE.md: hardware is layer 3, ingest layer 6 (review r1 F6:
    roof_file_hints asked ingest.profile_files what a file is)."""
    bad = [(p.name, m) for p in sorted((SRC / "hardware").glob("*.py"))
           for m, _ in _imports(f"hardware/{p.name}") if m.startswith("rooflab.ingest")]
    assert bad == []
    files = [m for m, _ in _imports("files.py") if m.startswith("rooflab.")]
    # files.py (and files_decode.py, its decoding half, files_rename.py, its last rename,
    # and json_stream.py, its JSON text in pieces: s32; files_generator.py, the command
    # that wrote a document: s36) sits below every layer
    assert set(files) <= {"rooflab.errors", "rooflab", "rooflab.files_decode",
                          "rooflab.files_rename", "rooflab.json_stream",
                          "rooflab.files_generator"}
    stamp = [m for m, _ in _imports("files_generator.py") if m.startswith("rooflab")]
    assert set(stamp) <= {"rooflab"}   # its __version__ only
    assert [m for m, _ in _imports("json_stream.py") if m.startswith("rooflab")] == []
    rename = [m for m, _ in _imports("files_rename.py") if m.startswith("rooflab.")]
    assert set(rename) <= {"rooflab.errors"}
    decode = [m for m, _ in _imports("files_decode.py") if m.startswith("rooflab.")]
    # its gunzip half (files_gzip.py, s22 m3), below every layer too
    assert set(decode) <= {"rooflab.errors", "rooflab", "rooflab.files_gzip"}


def test_file_kind_lives_in_files_and_ingest_reads_it_from_there(tmp_path):
    from rooflab import files_kind
    from rooflab.hardware import rocprof_roofline
    from rooflab.ingest import profile_files, rocprof

    assert profile_files.file_kind is files_kind.file_kind
    # the columns it sniffs by are the ones the readers read
    assert files_kind.ROCPROF_NAME_COLUMNS == rocprof.NAME_COLUMNS
    assert set(files_kind.ROOFLINE_BANDWIDTH_COLUMNS) == set(rocprof_roofline.MEMORY)
    cases = {"r.csv": ("Index,KernelName,gpu-id\n0,k,0\n", "rocprof"),
             "n.csv": ('"ID","Kernel Name","Metric Name"\n', "ncu"),
             "roofline.csv": ("HBMBw,L2Bw,FP32Flops\n1,2,3\n", "rocprof"),
             "k.csv": ("name,flop,bytes,seconds\nk,1,1,1\n", "rooflab"),
             "t.json": ('{"traceEvents": []}', "torch")}
    for name, (text, kind) in cases.items():
        (tmp_path / name).write_text(text)
        assert files_kind.file_kind(str(tmp_path / name)) == kind, name


def _file_roof() -> Roof:
    return Roof(name="mine", kind="measured",
                compute=(Ceiling(value=20e12, precision="fp32", unit="vector",
                                 provenance="measured"),),
                memory=(Ceiling(value=800e9, level="DRAM", provenance="measured"),))


def test_one_function_builds_the_ridge_rows():
    from rooflab.hardware.catalog import roof_ridges

    # a file's roof: 20 TFLOP/s over 800 GB/s = 25 FLOP/byte
    assert roof_ridges(_file_roof()) == ({
        "precision": "fp32", "unit": "vector", "level": "DRAM", "flop_per_s": 20e12,
        "bytes_per_s": 800e9, "ridge": 25.0},)
    h100 = lookup("H100 SXM")
    assert ridges(h100) == roof_ridges(h100.roof)
    assert ("rooflab.hardware.catalog", "roof_ridges") in _imports("cli/specs_tables.py")

"""Reread x2 (s19), the legibility half: F7 one top-float-ceiling rule (the record table's
and `specs show`'s per-level ridges: none on an integer-only roof), F10 compare's chart
keeps the kernel's own name in meta (a kernel really named "x (before)" keeps it), F8 the
conv/attention argument helpers public, F14 docs' output examples at schema_version 2,
g7 measure()'s own keywords include samples=."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_inproc import run_cli

from rooflab.model import Ceiling, Kernel, Roof

ROOT = Path(__file__).resolve().parents[1]
INT_ONLY = Roof("int box", "nominal", compute=(Ceiling(1e14, "int8", "tensor"),),
                memory=(Ceiling(1e12, level="DRAM"), Ceiling(4e12, level="L2")))


def test_f7_integer_only_roof_has_no_float_ridge(tmp_path):
    from rooflab.model.roof_schema import roof_to_dict
    from rooflab.report.tables import top_float_ceiling, top_float_key

    assert top_float_key(INT_ONLY, None) is None and top_float_ceiling(INT_ONLY) is None
    a100 = Roof("A100", "nominal", compute=(Ceiling(312e12, "fp16", "tensor"),
                                            Ceiling(624e12, "int8", "tensor")),
                memory=(Ceiling(2.04e12, level="DRAM"),))
    assert top_float_ceiling(a100).precision == "fp16"        # not the faster int8
    import json

    path = tmp_path / "int.json"
    path.write_text(json.dumps({"schema_version": 2, **roof_to_dict(INT_ONLY)}))
    out = run_cli("specs", "show", str(path)).stdout
    # the int8 100 TOP/s / 1 TB/s = 100 was labelled a FLOP/B ridge vs DRAM, 25 vs L2
    assert "ridge vs int8" not in out and "no float ceiling: no ridge" in out


def test_f10_a_kernel_named_before_keeps_its_name():
    from rooflab.report.chart import plot_roofline
    from rooflab.report.chart_precisions import precision_ceilings

    roof = Roof("A100", "nominal",
                compute=(Ceiling(19.5e12, "fp64", "tensor"), Ceiling(9.7e12, "fp64", "vector"),
                         Ceiling(19.5e12, "fp32", "vector")),
                memory=(Ceiling(2.04e12, level="DRAM"),))
    ks = [Kernel("triad (before)", {"fp64": 1e9}, {"DRAM": 1e9}, seconds=0.001,
                 unit="vector"),
          Kernel("gemm", {"fp64": 1e12}, {"DRAM": 1e9}, seconds=0.1, unit="tensor"),
          Kernel("k32", {"fp32": 1e10}, {"DRAM": 1e9}, seconds=0.001)]
    lines = precision_ceilings(plot_roofline([roof], ks))
    assert lines[0] == "vector fp64 kernels (triad (before)): judged on fp64 vector 9.7 TFLOP/s"


def test_f10_compare_labels_keep_the_plain_name_in_meta():
    from rooflab.cli.compare import _labelled
    from rooflab.model.compare import compare_kernels
    from rooflab.report.chart_precisions import PLAIN_NAME

    a = Kernel("gemm", {"fp32": 1e9}, {"DRAM": 1e8}, seconds=0.002)
    b = Kernel("gemm", {"fp32": 1e9}, {"DRAM": 1e8}, seconds=0.001)
    before, after = _labelled(compare_kernels([a], [b]).matches[0])
    assert before.name == "gemm (before)" and after.name.startswith("gemm (after, 2.00x")
    assert before.meta[PLAIN_NAME] == after.meta[PLAIN_NAME] == "gemm"


def test_f8_argument_helpers_are_public():
    from rooflab.cli import ai_args

    assert ai_args.conv_axes("0,1", "--padding", 0) == (0, 1)
    assert ai_args.checked_causal_align(None, True, 4, 8) == "bottom-right"
    assert not hasattr(ai_args, "_canonical")


@pytest.mark.parametrize("doc, text", [
    ("docs/ai.md", '  "schema_version": 2,\n  "op": "matmul",'),
    ("docs/json.md", '{"schema_version": 2, "matches"'),
    ("docs/specs.md", '{"schema_version": 2, "devices"'),
    ("docs/specs.md", '{"schema_version": 2, "device"'),
    ("docs/llm.md", '{"schema_version": 2, "configs"'),
    ("README.md", '{"schema_version": 2,\n "roof"'),
    ("src/rooflab/cli/json_errors.py", '{"schema_version": 2, "error"'),
])
def test_f14_output_examples_show_the_current_schema(doc, text):
    from rooflab.model.schema import SCHEMA_VERSION

    assert SCHEMA_VERSION == 2
    assert text in (ROOT / doc).read_text()


def test_f4_sector_bytes_doc_names_the_cpu_line():
    assert "64 on a CPU roof" in (ROOT / "docs" / "json.md").read_text()


def test_g7_samples_is_measures_own_keyword():
    import rooflab
    from rooflab.errors import InputError

    def f(x, samples=3):
        return x

    with pytest.raises(InputError, match=r"plan=, samples= for itself"):
        rooflab.measure(f, 1, samples=5)


def test_f9_counting_needs_torch_goes_through_its_base_init():
    from rooflab.errors import MissingDependency, install_command
    from rooflab.measure_counts import CountingNeedsTorch

    e = MissingDependency("torch", "torch", lead="measure(): pass flop= and bytes=; ")
    assert str(e).startswith("measure(): pass flop= and bytes=; install it with: pip ")
    c = CountingNeedsTorch()
    assert (c.module, c.extra) == ("torch", "torch")
    first = str(c).splitlines()[0]
    assert first.startswith("measure(): pass flop= and bytes=: ")
    assert first.endswith(f"for PyTorch code, install it with: {install_command('torch')}")


def test_f19_newer_schema_error_carries_its_path_without_the_text_parser(tmp_path,
                                                                        monkeypatch):
    import json

    import rooflab.cli.json_errors as je

    # the message-text fallback off: the place must come from the error itself
    monkeypatch.setattr(je, "_leading_place", lambda message, line: (None, line))
    path = tmp_path / "v3.json"
    path.write_text('{"schema_version": 3, "kernels": []}')
    r = run_cli("report", str(path), "--on", "h100", "--json")
    assert r.returncode == 2
    err = json.loads(r.stdout)["error"]
    assert err["path"] == str(path) and err["kind"] == "parse"
    assert err["message"] == (f"{path}: schema_version 3 is newer than this rooflab "
                              f"understands (2); upgrade rooflab")

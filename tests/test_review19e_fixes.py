"""Review 19e, the findings in the link, ceiling and kernel-name modules: one list of link
levels (F-o), one C++ symbol shortener with the 'static void' prefix cut (F-h), and the
model core's names imported from their owner at the top, not lazily through schema (F-a,
F-n)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import rooflab
from rooflab.ingest.aggregate import short_name
from rooflab.ingest.kernel_names import symbol_name, template_name
from rooflab.model import Ceiling, Roof, comm_link
from rooflab.model.comm_link import link_from_roof
from rooflab.symbols import bare_symbol
from rooflab.units import LINKS

PACKAGE = Path(rooflab.__file__).parent


def _roof(*memory: Ceiling) -> Roof:
    return Roof("test-gpu", compute=(Ceiling(1e15, precision="fp16"),),
                memory=(Ceiling(5.3e12, level="DRAM"), *memory))


# --- F-o: one list of link levels --------------------------------------------------------

@pytest.mark.parametrize("level", LINKS)
def test_every_link_level_is_found_on_a_roof(level):
    """units.LINKS is what a ceiling may name as a link; link_from_roof searched its own
    shorter list (no xGMI, no ICI) and said an MI300X-like roof with a 448 GB/s xGMI
    ceiling had "no link ceiling (it has: DRAM, xGMI)"."""
    link = link_from_roof(_roof(Ceiling(448e9, level=level)))
    assert link.level == level
    assert link.bus_bytes_per_s == 448e9


def test_a_chip_to_chip_link_is_taken_before_the_host_pcie():
    """AMD MI300X: 64 GB/s PCIe Gen5 x16 to the host, 448 GB/s Infinity Fabric (xGMI) to its
    peers (AMD MI300X data sheet); the all-reduce runs over xGMI, as over NVLink."""
    roof = _roof(Ceiling(64e9, level="PCIe"), Ceiling(448e9, level="xGMI"))
    assert link_from_roof(roof).level == "xGMI"
    assert link_from_roof(roof, "PCIe").bus_bytes_per_s == 64e9


def test_the_model_and_scale_search_the_one_list():
    """comm_link.LINK_LEVELS (what `rooflab scale` searches)
    is units.LINKS itself, not a copy that can drift."""
    assert comm_link.LINK_LEVELS is LINKS
    assert set(LINKS) == {"NVLink", "xGMI", "ICI", "PCIe", "network", "loopback"}


# --- F-h: one C++ symbol shortener ------------------------------------------------------

@pytest.mark.parametrize("full, short, templated", [
    # the prefix loop cut 'static ' last, so 'void ' stayed: 'void foo_3'
    ("static void foo_bar_3(int)", "foo_bar_3", "foo_bar_3"),
    ("static __global__ void scale<float>(float*, int)", "scale<…>", "scale<float>"),
    ("__global__ void scale<float>(float*, int)", "scale<…>", "scale<float>"),
    ("void (anonymous namespace)::softmax<2>(float *, int)", "softmax<…>", "softmax<2>"),
    ("sigma_gpp_gpu_29", "sigma_gpp_gpu_29", "sigma_gpp_gpu_29"),
])
def test_short_and_template_names_cut_every_prefix(full, short, templated):
    assert short_name(full) == short
    assert template_name(full) == templated


def test_both_names_come_from_one_parser():
    """short_name and template_name are symbol_name's two renderings: they differ only in
    folding each template argument list to '<…>'."""
    full = "void cutlass::Kernel<cutlass::gemm::Gemm<float, 4>>(Params)"
    assert short_name(full) == symbol_name(full) == "cutlass::Kernel<…>"
    assert template_name(full) == symbol_name(full, templates=True) == \
        "cutlass::Kernel<cutlass::gemm::Gemm<float, 4>>"
    assert bare_symbol("static void <unnamed>::f(int)") == "f(int)"


# --- F-a, F-n: no lazy import where no cycle needs one -----------------------------------

def _function_imports(relative: str) -> list[str]:
    """The modules a file imports inside functions ('.schema', '..units')."""
    tree = ast.parse((PACKAGE / relative).read_text(encoding="utf-8"))
    found = []
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found += ["." * node.level + (node.module or "") for node in ast.walk(fn)
                      if isinstance(node, ast.ImportFrom)]
    return found


def test_ceiling_takes_the_canonical_names_from_their_owner():
    """Ceiling.__post_init__ imported level_name & co. from schema at call time ("schema
    imports this"): canonical_names imports neither, so the top of ceiling.py can. The one
    lazy import left is machine's, which does import ceiling."""
    assert _function_imports("model/ceiling.py") == [".machine"]
    assert Ceiling(2.0e12, level="hbm3e").level == "DRAM"
    assert Ceiling(1e12, precision="float16", unit="Tensor cores").unit == "tensor"


@pytest.mark.parametrize("relative", [
    "model/comm_link.py", "model/link_fits.py", "ingest/aggregate.py",
    "model/analysis.py", "model/byte_convention.py", "model/canonical_names.py"])
def test_modules_import_what_is_below_them_at_the_top(relative):
    """units, opkind and byte_convention are below these modules (opkind imports only
    kernel): no cycle to break, so no import inside a function."""
    assert _function_imports(relative) == []


def test_chart_labels_drop_static_void_as_ingest_does():
    # review 19e F-h: the chart's label shortener kept "void" after "static", as ingest did;
    # both now read rooflab.symbols.bare_symbol
    from rooflab.ingest.aggregate import short_name
    from rooflab.report.label_names import chart_name

    full = "static void (anonymous namespace)::foo_3(int, float*)"
    assert short_name(full) == "foo_3"
    assert chart_name(full) == "foo_3(int, float*)"   # short enough: arguments kept

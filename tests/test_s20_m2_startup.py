"""The CLI's error paths and `rooflab bench --help` import no numpy (s20 mender m2 item 1).

`cli/json_errors.document` imported model.schema (the model, numpy: 0.3-0.5 s of CPU) for
every error, a usage error or Ctrl-C without --json included; `rooflab.model`'s
__init__ imported every model module, so importing any one of them (bench's
model.ceiling) pulled in roofline.py's numpy. Asserted by what a fresh interpreter holds
(sys.modules), not by timing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from fresh_modules import modules_after

import rooflab.model

_modules_after = modules_after


def test_an_error_document_is_built_without_the_schema_module():
    mods = _modules_after("from rooflab.cli import json_errors; "
                          "json_errors.document('boom', json_errors.USAGE, 2)")
    assert "rooflab.model.schema" not in mods and "numpy" not in mods


@pytest.mark.parametrize("argv", [["report", "--nope"], ["llm", "--nope"],
                                  ["choose", "--nope"]])
def test_a_usage_error_imports_no_numpy(argv):
    mods = _modules_after(f"from rooflab.cli.main import main; "
                          f"assert main({argv!r}) == 2")
    assert "numpy" not in mods and "rooflab.model.schema" not in mods


def test_bench_help_imports_no_numpy():
    mods = _modules_after("from rooflab.cli.main import main; "
                          "assert main(['bench', '--help']) == 0")
    assert "rooflab.cli.bench" in mods
    assert "numpy" not in mods, sorted(m for m in mods if m.startswith("rooflab.model"))


def test_importing_one_model_module_leaves_the_rest_out():
    mods = _modules_after("import rooflab.model.ceiling, rooflab.model.kernel")
    assert "numpy" not in mods
    assert "rooflab.model.analysis" not in mods and "rooflab.model.roofline" not in mods


def test_the_error_document_under_json_still_has_its_schema_version(tmp_path):
    done = subprocess.run([sys.executable, "-m", "rooflab.cli.main", "report", "--nope",
                           "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    doc = json.loads(done.stdout)
    assert list(doc)[:2] == ["schema_version", "error"] and doc["schema_version"] == 2
    assert doc["error"]["kind"] == "usage" and doc["error"]["exit_code"] == 2


def test_every_name_the_model_exported_is_still_there():
    names = ["Analysis", "Ceiling", "Kernel", "Point", "Roof", "analyze", "attainable",
             "classify", "cpu_peak_flop_per_s", "ridge", "time_floor"]
    assert rooflab.model.__all__ == names
    from rooflab.model import analysis, analysis_api, ceiling, kernel, placement, roofline

    # analyze: the public entry point, which judges a package of dies on one die as the CLI
    # does (session 35 O); rooflab.model.analysis.analyze stays the plain model function
    owners = {"Analysis": analysis, "Point": analysis, "analyze": analysis_api,
              "Ceiling": ceiling, "Roof": ceiling, "Kernel": kernel,
              "classify": placement, "attainable": roofline, "ridge": roofline,
              "cpu_peak_flop_per_s": roofline, "time_floor": roofline}
    for name in names:
        assert getattr(rooflab.model, name) is getattr(owners[name], name), name
        assert name in dir(rooflab.model)
    ns: dict = {}
    exec("from rooflab.model import *", ns)
    assert set(names) <= set(ns)
    # the model's own numbers through the lazy names: min(P, B x AI), P / B
    assert rooflab.model.attainable(4.0, 1e12, 1e11) == 4e11
    assert rooflab.model.ridge(1e12, 1e11) == 10.0
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        rooflab.model.nope  # noqa: B018

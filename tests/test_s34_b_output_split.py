"""s34 B: cli/llm_output.py's result_dict (71 lines) split into named pieces, each under
the style's 60-line limit, with the same JSON: llm.parallel is parallel_dict's, llm.pipeline
pipeline_section's, llm.whatif/hardware variant_rows' (the --json tests pin the rest)."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm import Request, Settings, load_config
from rooflab.workloads.llm.study import Compared, Study, run_study

SRC = Path(__file__).resolve().parents[1] / "src" / "rooflab" / "cli" / "llm_output.py"


def test_every_function_in_llm_output_is_at_most_60_lines():
    tree = ast.parse(SRC.read_text(encoding="utf-8"))
    long = {f.name: f.end_lineno - f.lineno + 1 for f in ast.walk(tree)
            if isinstance(f, ast.FunctionDef) and f.end_lineno - f.lineno + 1 > 60}
    assert long == {}


def _run(settings, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_study(Study(load_config("llama-2-7b"), load_roof("H100 SXM"), settings,
                               Request(batches=(1, 8), context=512), **kw))


def test_the_pieces_are_the_documents_sections():
    from rooflab.cli.llm_output import (
        parallel_dict,
        pipeline_section,
        result_dict,
        variant_rows,
    )

    both = _run(Settings(tp=2, pp=2))
    llm = result_dict(both)["llm"]
    assert llm["parallel"] == parallel_dict(both)
    assert llm["pipeline"] == pipeline_section(both)
    # llama-2-7b over --tp 2 on NVLink: 64 all-reduces (2 per layer x 32) a step
    assert llm["parallel"]["allreduces_per_step"] == 64 and llm["parallel"]["tp"] == 2
    assert len(llm["pipeline"]["stages"]) == 2
    hw = _run(Settings(), compare=(Compared("A100", load_roof("A100"), 80e9),))
    rows = variant_rows(hw)
    assert result_dict(hw)["llm"]["hardware"] == rows["hardware"]
    # --on's row first, its memory not given to this Study (None: unknown); the A100's
    # 80 GB holds the 13.5 GB of weights + KV
    assert [r["fits"] for r in rows["hardware"]] == [None, True]
    assert "whatif" not in rows and "parallel" not in result_dict(hw)["llm"]

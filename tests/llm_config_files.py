"""A bundled LLM config written out with a `quantization_config`, for the tests that count
a quantized checkpoint's weights (one builder for them all)."""

import json
from importlib import resources


def bundled_with_quant(tmp_path, name: str, quant: dict) -> str:
    """The path of bundled config `name` with `quant` as its quantization_config."""
    root = resources.files("rooflab.workloads") / "configs"
    d = json.loads((root / f"{name}.json").read_text())
    p = tmp_path / f"{name}-q.json"
    p.write_text(json.dumps({**d, "quantization_config": quant}))
    return str(p)

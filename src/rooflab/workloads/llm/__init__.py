"""Transformer LLM inference on the roof, counted from a Hugging Face config.json or a
llama.cpp .gguf file (load_config reads either; load_gguf the header of a .gguf).

    from rooflab.workloads.llm import load_config, Settings, Request, analyze_llm
    r = analyze_llm(load_config("tinyllama-1.1b"), load_roof("T4"), Settings(),
                    Request(batches=(1, 4, 16), context=500))
    r.tpot_s, r.ttft_s, r.decode.step.ai, r.sweep.saturation.last_batch

(saturation.last_batch: where tokens/s stops growing, by the per-kernel floors;
r.sweep.knee_batch: where the whole step's aggregate AI reaches the ridge, later.)

The whole study `rooflab llm` runs (--tp/--pp on chosen links, --compare, --whatif,
--tpot-ms, --ttft-ms) is workloads.llm.study.run_study(Study(...)) -> LlmRun.
"""

from .analysis import ContextWarning, LLMResult, Request, analyze_llm
from .config_names import bundled_names, load_config
from .config_parse import parse_config
from .footprint import (
    Footprint,
    footprint,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    weight_bytes,
)
from .gguf_config import load_gguf
from .kernels import Step, StepOp, decode_step, prefill_step
from .layer_weights import LayerWeights, ModelWeights, layer_weights
from .model_config import MLA, ModelConfig, MoE
from .parallel import TPResult, shard, tensor_parallel, tp_decode_step
from .params import ParamCount, count_params
from .pipeline import pipeline_parallel
from .result_json import result_to_dict
from .settings import Settings
from .study import Compared, LlmRun, Study, run_study
from .sweep import Sweep, batch_sweep
from .timing import StepTiming, time_step
from .whatif import compare_hardware, compare_settings, measured_point, standard_variants

__all__ = [
    "LayerWeights", "MLA", "Compared", "ContextWarning", "Footprint", "LLMResult", "LlmRun",
    "ModelConfig", "ModelWeights", "MoE", "ParamCount", "Request", "Settings", "Step", "StepOp",
    "StepTiming", "Study", "Sweep", "TPResult", "analyze_llm", "batch_sweep", "bundled_names",
    "compare_hardware", "compare_settings", "count_params", "decode_step", "footprint",
    "kv_bytes_per_sequence", "kv_bytes_per_token", "layer_weights", "load_config", "load_gguf",
    "measured_point", "parse_config", "pipeline_parallel", "prefill_step", "result_to_dict",
    "run_study", "shard", "standard_variants", "tensor_parallel", "time_step", "tp_decode_step",
    "weight_bytes",
]

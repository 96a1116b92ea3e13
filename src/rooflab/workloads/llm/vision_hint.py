"""A pointer for a vision model given to `rooflab llm` / `rooflab train` (review s28 R3
F13: `train resnet50` answered "closest: qwen2.5-7b, qwen2.5-72b", and a ViT config.json
was refused for lacking vocab_size with no word on where to go): those verbs model
decoder-only transformers; a vision model is counted from its own code.
"""

from __future__ import annotations

import re

# name words (and Hugging Face model_type values) of vision models
_VISION = re.compile(
    r"(?<![a-z])(resnet|resnext|wide_resnet|vit|deit|beit|swin|convnext|efficientnet|mobilenet|"
    r"regnet|densenet|vgg|inception|alexnet|squeezenet|shufflenet|mnasnet|yolo|detr|unet|"
    r"dinov2|segformer|mask2former|maxvit|levit|poolformer|clip_vision|siglip_vision|"
    r"stable-diffusion|sdxl|dit)", re.I)
VISION_HINT = ("vision models have no analytic model here (these verbs model decoder-only "
               "LLMs): profile the model with `rooflab torch --run script.py`, or count it "
               "with rooflab.measure(model, x)")


def vision_hint(*names: object) -> str:
    """'; <VISION_HINT>' where one of `names` (a model name, a config's model_type or
    architectures) reads as a vision model's, else ''."""
    for n in names:
        for text in (n if isinstance(n, (list, tuple)) else [n]):
            if isinstance(text, str) and _VISION.search(text):
                return f"; {VISION_HINT}"
    return ""

"""What a file given as a model's config.json is instead, when it is one of rooflab's own
documents (s38 G): `rooflab llm k.json` with a kernel file, or a probe's profile, answered
"missing field(s) hidden_size ...; rooflab reads decoder-only transformer configs", which
said nothing of the file's kind or of the verb that reads it. The kernel readers answer
the reverse mistake (a config.json given as kernels) in ingest/kernelfile.py.
"""

from __future__ import annotations

from typing import Any

from ...errors import InputError
from ...model.document_parts import document_kind
from .config_fields import REQUIRED, aliased

# the verb that reads each kind, as the kernel readers word it
_READ_KERNELS = "read its kernels with `rooflab report {path} --on HW`"
_READERS = {
    "kernels": ("a kernel file", _READ_KERNELS),
    "analysis": ("an analysis (kernels placed on a roof)", _READ_KERNELS),
    "chart": ("`rooflab plot --json` output", _READ_KERNELS),
    "whatif": ("`rooflab whatif` output", _READ_KERNELS),
    "demo": ("`rooflab demo --json` output", _READ_KERNELS),
    "profile": ("a machine profile or roof", "pass it as the roof: --on {path}"),
    "roof": ("a machine profile or roof", "pass it as the roof: --on {path}"),
    "compare": ("`rooflab compare` output", "pass the model's config.json"),
    "choose": ("`rooflab choose` output", "pass the model's config.json"),
    "devices": ("a device list (`rooflab specs --json`)", "name devices with --on"),
    "torch_trace": ("a torch.profiler trace", "read it with `rooflab torch {path}`"),
}


def refuse_other_document(data: Any, where: str) -> None:
    """Refuse a rooflab document given as a config (other_document), before the config
    checks; a dict with any of the config's required fields is a config and goes on."""
    if isinstance(data, dict) and any(aliased(data, k) is not None for k in REQUIRED):
        return
    other = other_document(data, where)
    if other:
        raise InputError(f"{where}: {other}")


def other_document(data: Any, path: str) -> str | None:
    """'this is a kernel file, not a model's config.json: read its kernels with ...' for a
    rooflab document given where a config goes, else None (a config with fields missing,
    or JSON of no kind rooflab writes, keeps the missing-fields error)."""
    kind = document_kind(data)
    if kind not in _READERS or (isinstance(data, list) and not _kernel_like(data)):
        return None   # [config] or []: parse_config's "expected a JSON object" fits
    what, how = _READERS[kind]
    return f"this is {what}, not a model's config.json: {how.format(path=path)}"


def _kernel_like(items: list) -> bool:
    """Whether a list's first item reads as a kernel (a FLOP or bytes count), not as a
    config wrapped in a list."""
    first = items[0] if items else None
    return isinstance(first, dict) and bool({"flop", "bytes"} & first.keys())

"""The small phrases `rooflab llm` builds its lines from: device names, dtypes, time
spans, the narrower --weights/--kv options (split from llm_render)."""

from __future__ import annotations

from ..units import fmt_seconds
from ..workloads.llm.settings import NARROW


def catalog_device(spec: str, roof):
    """The catalog entry behind --on (for the device memory and the link; `llm`, `train`),
    or None: a profile or roof file's by the roof's name, else --on's name."""
    from pathlib import Path

    from ..errors import HardwareNotFound
    from ..hardware import catalog

    try:
        if Path(spec).suffix == ".json" or Path(spec).is_file():
            return catalog.match_device_name(roof.name)
        return catalog.lookup(spec)
    except HardwareNotFound:
        return None


def device_word(roof) -> str:
    """What one device of a --tp/--pp group is called: 'GPU' when the roof is a catalog
    GPU's (or a profile named like one), else 'device': a TPU or Gaudi chip, a CPU, or a
    roof of unknown kind, which "GPU" would misname."""
    from ..hardware.catalog import match_device_name

    dev = match_device_name(roof.name)
    return "GPU" if dev is not None and dev.kind == "gpu" else "device"


def comm_width(s) -> str:
    """What the collectives carry when it is not the activation dtype: fp8/int8
    activations exist only at the GEMM inputs, the residual stream stays 16-bit."""
    if s.comm_bytes == s.act_bytes:
        return ""
    return f" ({s.base} residual stream, not the {s.act} GEMM inputs)"


def rows_words(s) -> str:
    """'5 query tokens x ' on a --decode-tokens 5 step (each sequence's N positions are
    all-reduced, gathered and sampled), nothing on plain decode."""
    return f"{s.decode_tokens} query tokens x " if s.decode_tokens > 1 else ""


def stream_dtype(s) -> str:
    """The dtype of the residual stream the collectives carry (Settings.comm_bytes)."""
    return s.base if s.act in NARROW else s.act


def span(lo: float, hi: float) -> str:
    """A time range, or one time when both ends agree (a roof whose own launch floor is
    the seed's 10 us gave "10 us-10 us")."""
    a, b = fmt_seconds(lo), fmt_seconds(hi)
    return a if a == b else f"{a}-{b}"


def die_note(r) -> str | None:
    """The note on an llm result whose roof is a catalog package that is several devices
    to software (--on MI250X, model/dies.py): the floors and the fit are the package's,
    which one process does not get. None for every other roof (one die already split, a
    probe's "..., one die" roof, any other device). The roof's own note (model.dies.note,
    the one text of it), then what it means for these floors."""
    from ..model.dies import note, software_devices

    n = software_devices(r.roof)
    if n <= 1:
        return None
    per = r.settings.tp * r.settings.pp
    # --tp counts packages here, dies in `rooflab choose` (one die per row) and in ROCm:
    # each verb says its unit, and the equal group (session 32)
    group = (f"; under --tp/--pp each of the {per} devices here is a whole package "
             f"({per * n} dies): --tp counts packages here, while ROCm and `rooflab "
             f"choose` count dies (this --tp {r.settings.tp} is their --tp "
             f"{r.settings.tp * n})" if per > 1 else "")
    return (f"{note(r.roof.name, n)}. So are these floors and the memory line: one process "
            f"has {n}x these work floors (the launches the same){group}")


def closing_notes(r) -> list[str]:
    """The notes the text and the JSON close with: the run's own (r.notes), how a table
    quantized by hand is counted (count_notes.table_note), a multi-die package's."""
    from ..workloads.llm.count_notes import table_note

    return [*r.notes, *table_note(r.settings), *filter(None, [die_note(r)])]


def unified_memory(roof) -> bool:
    """Whether the roof is a catalog device whose GPU shares DRAM with the CPU (a Jetson
    module, an Apple chip): one device, no link to a second one for --tp or --pp."""
    from ..hardware.catalog import is_unified_memory

    return is_unified_memory(roof.name)


def narrower(s, *, kv: bool = True, weights: str = "all", keep=None) -> list[str]:
    """The --weights/--kv options narrower than the ones in use, as the memory lines offer
    them: weights="all" lists every narrower weight dtype (--weights int8/int4), "least"
    only the narrowest (--weights int4); kv=False leaves out --kv fp8 (it makes no room when
    the weights alone do not fit); keep(dtype): False leaves a weight dtype out. Empty when
    the settings are as narrow as they go."""
    from ..workloads.llm.pipeline import narrower_kv, narrower_weights

    ws = [w for w in narrower_weights(s) if keep is None or keep(w)]
    if weights == "least":
        ws = ws[-1:]
    out = [f"--weights {'/'.join(ws)}"] if ws else []
    if kv and narrower_kv(s):
        out.append("--kv fp8")
    return out

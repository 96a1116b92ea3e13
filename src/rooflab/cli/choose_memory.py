"""The memory `rooflab choose` judges an llm document's fit against, by `rooflab llm`'s rule.

`rooflab llm --gpu-mem-util U` holds the fit to U x the device's memory (the driver's total
where the catalog has it, as vLLM's gpu_memory_utilization: cli.llm_memory); choose held
every candidate to its full catalog memory, so Llama-3-70B bf16 at batch 64 (190 GB) did
not fit an MI300X in `llm` (0.9 x 192 = 173 GB) and ranked #1 as fitting in `choose`
(review s20 r5 F1). Here each candidate's capacity comes from the same function `llm` uses,
at the document's U (or choose's own --gpu-mem-util, which wins), so the two agree.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..errors import InputError

# the words cli.llm_memory.device_capacity writes into footprint.device_bytes_from when
# --gpu-mem-util was given: "0.9 x nvidia-smi's 85.5 GB, ...", "0.9 x --memory 100 GB"
_UTIL_WORDS = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?) x ")


def document_util(llm: Mapping) -> float | None:
    """The --gpu-mem-util an `rooflab llm --json` document's fit was judged at; None where
    it used the whole memory. Read from footprint.gpu_mem_util where a document carries
    the number, else from the words of footprint.device_bytes_from."""
    fp = llm.get("footprint")
    if not isinstance(fp, Mapping):
        return None
    given = fp.get("gpu_mem_util")
    if isinstance(given, (int, float)) and not isinstance(given, bool) and 0 < given <= 1:
        return float(given)
    words = fp.get("device_bytes_from")
    m = _UTIL_WORDS.match(words) if isinstance(words, str) else None
    if m is None:
        return None
    util = float(m.group(1))
    return util if 0 < util <= 1 else None


def fit_util(files: list[str], llms: Mapping[str, Mapping], given: float | None
             ) -> tuple[float | None, str]:
    """(the share of each device's memory the fit is judged against, where it came from):
    choose's --gpu-mem-util where given, else the llm documents' (which must agree);
    (None, "") for the whole memory. llms: each file's llm block (absent: not one)."""
    from .llm_memory import check_gpu_mem_util

    check_gpu_mem_util(given)
    if given is not None:
        return given, f"--gpu-mem-util {given:g}"
    found = {f: document_util(llms[f]) for f in files if f in llms}
    if len(set(found.values())) > 1:
        each = ", ".join(f"{f}: {'--gpu-mem-util ' + format(u, 'g') if u else 'the whole memory'}"
                         for f, u in found.items())
        raise InputError(f"the llm documents judge the fit against different memory ({each}); "
                         f"give choose one rule, e.g. --gpu-mem-util 0.9 (vLLM's default)")
    util = next(iter(found.values()), None)
    return (util, f"the llm document's --gpu-mem-util {util:g}") if util else (None, "")


def device_memory(name: str, util: float | None, dies: int = 1) -> tuple[float | None, str]:
    """(bytes, words) a catalog device holds for the fit, as `rooflab llm --on NAME
    [--gpu-mem-util U]` judges it (cli.llm_memory.device_capacity); split over `dies` where
    each die is a device to software (choose_dies); (None, "") for a profile file, an
    unknown name or a CPU (whose catalog memory is its platform's maximum)."""
    from ..errors import RooflabError
    from ..hardware.catalog import lookup
    from .llm_memory import device_capacity

    try:
        dev = lookup(name)
    except RooflabError:
        return None, ""
    if dev.fit_memory_bytes is None:
        return None, ""
    mem, words, _ = device_capacity(dev, name, None, util)
    if not mem:
        return None, ""
    words = words or "the catalog's, decimal GB as sold"
    if dies > 1:
        words += f", / {dies}: one of its {dies} dies, each a device to software"
    return mem / dies, words


def memory_rule_line(util: float | None, source: str) -> str:
    """The line under the table that says what memory the fit is held to."""
    if util is None:
        return ("memory: each device's whole memory as the catalog sells it (decimal GB), as "
                "`rooflab llm` without --gpu-mem-util; --gpu-mem-util 0.9 holds the fit to "
                "vLLM's share of the driver's total, as a serving engine does")
    return (f"memory: {util:g} x each device's memory (the driver's total where the catalog "
            f"has it, else the catalog's), {source}, as vLLM's gpu_memory_utilization and "
            f"`rooflab llm --gpu-mem-util {util:g}` judge it")

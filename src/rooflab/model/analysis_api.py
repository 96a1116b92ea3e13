"""`rooflab.analyze` (and `rooflab.model.analyze`): model/analysis.analyze as a notebook
calls it, on the roof the CLI's kernel verbs judge by.

`rooflab report k.json --on MI250X` judges one die (cli/inputs.resolve_on ->
dies.kernel_roof: a kernel runs on one device), while `rooflab.analyze(load_roof("MI250X"),
[k])` judged the package: the same kernel read 50 % of roof in a notebook and 100 % in the
CLI (s35 O). This entry takes the one die the same way and says so in the Analysis' notes,
with the CLI's words (dies.die_words). The model's own analyze (model/analysis.py), which
rooflab's verbs call with the roof they chose, is left as it is: `rooflab llm --on MI250X`
prices the package on purpose, and says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from . import analysis as _analysis
from .ceiling import Roof
from .dies import die_words, kernel_roof
from .kernel import Kernel


def analyze(roof: Roof, kernels: Iterable[Kernel] | Kernel,
            levels: Sequence[str] | None = None, carm: bool = False) -> _analysis.Analysis:
    """Every kernel at every memory level it has bytes for (and the roof has a ceiling
    for): model/analysis.analyze, on one die's roof where `roof` is a package of several
    devices to software (the catalog's MI250X: its figures / 2, as `rooflab report --on
    MI250X` judges; the note saying so is the first of `Analysis.notes`). Any other roof
    is judged as given. roof: a Roof (rooflab.load_roof("T4") or a profile .json);
    kernels: Kernels, or one; levels and carm as model/analysis.analyze takes them."""
    die, _ = kernel_roof(roof) if isinstance(roof, Roof) else (roof, "")
    a = _analysis.analyze(die, kernels, levels, carm)
    said = die_words(die) if die is not roof else ""
    return replace(a, notes=(said, *a.notes)) if said else a


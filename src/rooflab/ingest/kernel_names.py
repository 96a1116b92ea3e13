"""Kernel names of profiled launches: a demangled symbol shortened for display (return type,
parameter list and template arguments dropped), kernels that share a short name told apart
the same way in every run (compare matches by name), and each file's step label. Split from
ingest/aggregate.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..symbols import bare_symbol

if TYPE_CHECKING:
    from .aggregate import _Group


def symbol_name(full: str, templates: bool = False) -> str:
    """A kernel's name from its demangled symbol: bare_symbol without the parameter list,
    each template argument list kept (`templates`: 'scale<float>') or folded to '<…>'
    ('scale<…>'). The one parser behind short_name and template_name."""
    s = bare_symbol(full)
    out: list[str] = []
    depth = 0
    for ch in s:
        if ch == "<":
            if depth == 0 and not templates:
                out.append("<…>")
            depth += 1
            if templates:
                out.append(ch)
        elif ch == ">" and depth:
            depth -= 1
            if templates:
                out.append(ch)
        elif depth == 0 and ch == "(" and out:
            break
        elif depth == 0 or templates:
            out.append(ch)
    return "".join(out).strip() or full.strip()


def short_name(full: str, width: int = 60) -> str:
    """'void cutlass::Kernel<cutlass::gemm::GemmUniversal<...>>(Params)' -> 'cutlass::Kernel<…>'.

    Drops a leading return type, the parameter list and every template argument list,
    then truncates to `width` characters.
    """
    text = symbol_name(full)
    return text if len(text) <= width else text[: width - 1] + "…"


def template_name(full: str) -> str:
    """'void scale<float>(float*, int)' -> 'scale<float>': short_name's cuts (return type,
    parameter list) but with the template arguments kept."""
    return symbol_name(full, templates=True)


def _distinct(group: _Group, clash: Sequence[_Group]) -> str:
    """A name for one of several kernels that share a short name, the same in every run
    whatever the order the kernels appear in (compare matches runs by name): the template
    arguments when they tell the kernels apart and fit, else a short hash of the identity."""
    names = {template_name(g.first.name) for g in clash}
    own = template_name(group.first.name)
    if len(names) == len({g.first.identity for g in clash}) and len(own) <= 80:
        return own
    digest = hashlib.sha1(group.first.identity.encode()).hexdigest()[:6]
    return f"{short_name(group.first.name)} #{digest}"


def display_names(groups: Sequence[tuple[_Group, str | None]]) -> list[str]:
    """Short names, with the step appended when several steps are shown, made unique.

    Two kernels of one step (file) with the same short name are told apart in a way that
    does not depend on their order, so `compare` matches the same kernel in two runs:
    OpenACC names its kernel `<name>_gpu` and the reduction `<name>_gpu__red`, both
    demangled to `<name>`, which is what a CSV export prints: the kernel whose key starts
    every other key of the collision keeps the plain name (so a `.ncu-rep` and a CSV of one
    program name the main kernel alike), the others are named by their key
    ('sigma_gpp_gpu_34_gpu__red'). C++ template instances ('scale<float>', 'scale<double>',
    both 'scale<…>') keep their template arguments.
    """
    steps = {s for _, s in groups}
    names: list[str] = []
    seen: dict[str, int] = {}
    by_key: dict[tuple[str, str | None], str] = {}
    clashes: dict[tuple[str, str | None], dict[str, _Group]] = {}
    for g, step in groups:
        clashes.setdefault((short_name(g.first.name), step), {}).setdefault(
            g.first.identity, g)
    for g, step in groups:
        base = short_name(g.first.name)
        key = g.first.key
        clash = clashes[(base, step)]
        if len(clash) > 1:
            if key and key != g.first.name and not key.startswith("_Z"):
                if not all(other.startswith(key) for other in clash):
                    base = short_name(key)   # e.g. OpenACC's 'sigma_gpp_gpu_34_gpu__red'
            else:
                base = _distinct(g, list(clash.values()))
        if len(steps) > 1 and step is not None:
            base = f"{base} [{step}]"
        ident = (g.first.identity, step)
        if ident in by_key:
            names.append(by_key[ident])
            continue
        n = seen.get(base, 0) + 1
        seen[base] = n
        name = base if n == 1 else f"{base} #{n}"
        by_key[ident] = name
        names.append(name)
    return names


def step_labels(paths: Sequence[str]) -> list[str]:
    """Each file's step label: its stem ('output3'); the file name when two files share a
    stem (output5.csv and output5.ncu-rep are two steps, not one); when two share a name,
    as many trailing path parts as tell them apart ('run1/results.csv')."""
    stems = [Path(p).stem for p in paths]
    names = [Path(p).name for p in paths]
    out = []
    for p, stem, name in zip(paths, stems, names, strict=True):
        if stems.count(stem) == 1:
            out.append(stem)
        elif names.count(name) == 1:
            out.append(name)
        else:
            same = [q for q in paths if Path(q).name == name]
            depth = max(len(Path(q).parts) for q in same)
            tails = {q: str(q) for q in same}
            for k in range(2, depth + 1):
                cut = {q: "/".join(Path(q).parts[-k:]) for q in same}
                if len(set(cut.values())) == len(same):
                    tails = cut
                    break
            out.append(tails[p])
    # the same file given twice: still two steps
    return [label if out[:i].count(label) == 0 else f"{label} #{out[:i].count(label) + 1}"
            for i, label in enumerate(out)]

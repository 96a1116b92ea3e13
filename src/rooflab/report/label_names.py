"""Kernel names short enough to label a chart with.

A kernel CSV/JSON or a torch trace names kernels by their full C++ symbol
(`void at::native::(anonymous namespace)::vectorized_elementwise_kernel<4, ...>(int, T2,
T3)`, ~190 characters). Written whole beside a point, one such label is wider than the
axes: constrained layout shrank the axes to a 30-px strip to make room (review 18c F1).
The chart writes the shortened name; the full one stays in the JSON, the tables and the
HTML hover.
"""

from __future__ import annotations

from ..symbols import bare_symbol

# About a third of the axes' width in 7-pt text (chart_layout_cost.CHAR_PT 4.3 pt a
# character, 550 pt of axes): a label beside a point still leaves room for its neighbours.
LABEL_CHARS = 40
ELLIPSIS = "…"



def chart_name(full: str, width: int = LABEL_CHARS) -> str:
    """The name a chart labels a kernel with: `full` itself when it fits in `width`
    characters; else, in order until it fits, without its return type and anonymous
    namespaces, without its argument list (what follows it, the `_3` that tells
    kernels apart, is kept), with nested template arguments as `<…>`, with a list of
    template arguments as `<…>`; and last cut in the middle with an ellipsis, so both the
    namespace and the distinguishing end remain."""
    name = full.strip()
    if len(name) <= width:
        return name
    for step in (bare_symbol, _no_arguments, _inner_templates, _listed_templates):
        name = step(name)
        if len(name) <= width:
            return name
    return middle_ellipsis(name, width)


def chart_names(names) -> dict[str, str]:
    """chart_name of each of `names`, distinct: names that shorten to one label (cutlass
    kernels told apart only in the middle of their tile name) are cut around where they
    differ instead, `cutlass::Kernel<…gemm_3_128x128_32x3_nn…`."""
    full = list(dict.fromkeys(names))
    out = {n: chart_name(n) for n in full}
    groups: dict[str, list[str]] = {}
    for n in full:
        groups.setdefault(out[n], []).append(n)
    for short, same in groups.items():
        if len(same) < 2 or short in same:
            continue
        plain = {n: _stepped(n) for n in same}
        at = _common_prefix(list(plain.values()))
        for n in same:
            out[n] = _around(plain[n], at)
    return out


def _stepped(name: str) -> str:
    """The name after chart_name's shortening steps, before the ellipsis."""
    name = name.strip()
    for step in (bare_symbol, _no_arguments, _inner_templates, _listed_templates):
        name = step(name)
    return name


def _common_prefix(names: list[str]) -> int:
    first, n = names[0], 0
    while n < len(first) and all(len(x) > n and x[n] == first[n] for x in names):
        n += 1
    return n


# where a re-cut name shows its start: the namespace and kernel (`cutlass::Kernel<`)
HEAD_CHARS = 16


def _around(name: str, at: int, width: int = LABEL_CHARS) -> str:
    """`name` in `width` characters showing its start and the part from a little before
    `at` (where it differs from the names it shortened alike to) on."""
    if len(name) <= width:
        return name
    start = max(at - 6, HEAD_CHARS)
    head = name[:HEAD_CHARS] + (ELLIPSIS if start > HEAD_CHARS else "")
    rest = name[start:]
    room = width - len(head)
    return head + (rest if len(rest) <= room else rest[:room - 1] + ELLIPSIS)


def middle_ellipsis(text: str, width: int = LABEL_CHARS) -> str:
    """`text` cut to `width` characters by an ellipsis in its middle (the end of a kernel
    name tells instances apart more often than its start)."""
    if len(text) <= width:
        return text
    if width < 2:
        return ELLIPSIS
    head = (width - 1) // 2
    tail = width - 1 - head
    return text[:head] + ELLIPSIS + text[len(text) - tail:]


def _no_arguments(name: str) -> str:
    """The name without its outermost argument list `(...)` (outside any template
    brackets), keeping what follows it."""
    depth = 0
    for i, ch in enumerate(name):
        if ch == "<":
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif ch == "(" and depth == 0 and i > 0:
            close = _closing(name, i)
            if close is None:
                return name[:i].rstrip()
            return (name[:i] + name[close + 1:]).strip()
    return name


def _closing(text: str, start: int) -> int | None:
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return None


def _inner_templates(name: str) -> str:
    """Template arguments nested in others as `<…>`: the outer ones (cutlass's tile
    shape, `Kernel<cutlass_80_..._128x128_32x3_nn_align4>`) often are the only part
    that tells kernels apart."""
    out, depth = [], 0
    for ch in name:
        if ch == "<":
            depth += 1
            if depth == 2:
                out.append("<" + ELLIPSIS + ">")
            elif depth < 2:
                out.append(ch)
        elif ch == ">" and depth:
            depth -= 1
            if depth == 0:
                out.append(ch)
        elif depth < 2:
            out.append(ch)
    return "".join(out)


def _listed_templates(name: str) -> str:
    """Outer template argument lists of two or more arguments (`<4, BinaryFunctor<…>,
    Array<…>>`: parameters, not a name) as `<…>`; a single argument (cutlass's
    `Kernel<cutlass_80_tensorop_..._align4>`, the kernel's identity) is kept."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(name):
        if ch == "<":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
            if depth == 0:
                inner = name[start + 1:i]
                out.append("<" + ELLIPSIS + ">" if "," in _outer_level(inner)
                           else name[start:i + 1])
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _outer_level(text: str) -> str:
    """text with everything inside its own <...> removed (its top-level characters)."""
    out, depth = [], 0
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)

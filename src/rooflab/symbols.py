"""Demangled C++ kernel symbols, as profilers print them, cut to the name a person reads.

One parser for the ingest side (ingest/aggregate.py: short_name, template_name) and the
chart's labels (report/label_names.py), so a prefix rule fixed once holds for both (review
19e F-h: "static void f" kept its "void" in all three copies).
"""

from __future__ import annotations

_SYMBOL_PREFIXES = ("static ", "__global__ ", "void ")
_ANONYMOUS = ("(anonymous namespace)::", "<unnamed>::")


def bare_symbol(full: str) -> str:
    """A demangled symbol without its anonymous namespaces and leading 'static', '__global__'
    and 'void' words: 'static void (anonymous namespace)::f(int)' -> 'f(int)'."""
    s = full.strip()
    for anon in _ANONYMOUS:
        s = s.replace(anon, "")
    while (prefix := next((p for p in _SYMBOL_PREFIXES if s.startswith(p)), None)):
        s = s[len(prefix):].lstrip()
    return s

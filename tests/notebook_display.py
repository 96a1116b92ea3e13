"""What a notebook shows for an object (text/plain): IPython's pretty() where IPython is
installed, else the object's own _repr_pretty_ driven by the one printer method it uses
(text), so display tests run where IPython is not (it is no dependency of rooflab)."""
from __future__ import annotations


class _Printer:
    def __init__(self):
        self.parts: list[str] = []

    def text(self, s: str) -> None:
        self.parts.append(s)


def pretty(obj) -> str:
    try:
        from IPython.lib.pretty import pretty as ipython_pretty
    except ImportError:
        p = _Printer()
        obj._repr_pretty_(p, False)
        return "".join(p.parts)
    return ipython_pretty(obj)

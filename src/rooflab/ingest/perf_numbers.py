"""Numbers as perf stat prints them, in the user's locale (builtin-stat.c calls
setlocale(LC_ALL, ""): de_DE prints `1.234.567,89`), read so that one of the other locale
is an error, never a value 1000x off."""

from __future__ import annotations


def number(text: str, comma: bool = False) -> float:
    """A number as perf prints it: C locale '1,234,567.89', or (comma) a decimal-comma
    locale's '1.234.567,89' ('1 234,5' with a no-break space in fr_FR). ValueError for a
    grouping in the wrong place ('1.234.567' read with '.' as the decimal mark), so a
    number of the other locale is an error, not read 1000x off."""
    group, point = (".", ",") if comma else (",", ".")
    t = text.strip().replace("\u00a0", group).replace("\u202f", group)
    whole, _, frac = t.partition(point)
    parts = whole.split(group)
    if len(parts) > 1 and not (1 <= len(parts[0]) <= 3
                               and all(len(p) == 3 for p in parts[1:])):
        raise ValueError(text)
    digits = "".join(parts)
    if digits.isdigit() and (frac.isdigit() or point not in t):
        return float(digits + "." + (frac or "0"))
    if comma or "," in t:
        raise ValueError(text)
    return float(t)          # -x's other forms (1e+06, nan: the caller checks the value)


def is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


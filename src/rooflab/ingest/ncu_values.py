"""Numbers in `ncu --csv` cells: what ncu writes, and the one rule for commas.

ncu writes numbers with '.' as the decimal point and ',' between groups of three digits
('1,619,726,202.90', '1,264,016,572,160' in the NERSC GPP recordings), and quotes every
field, so the commas never split a row. A comma anywhere else ('1,5', '0,25', '1.234,5')
is not ncu's: the file went through a tool set to a decimal-comma locale (a spreadsheet
re-saving it) or was edited. Reading such a cell by dropping its commas would turn 1,5 into
15, so it is an error for the whole file (CommaError -> ParseError with file, line, column
and value), not a skipped row. '1,234' stays one thousand two hundred and thirty-four: it is
what ncu writes, and a decimal-comma file almost always has a cell like '0,5' that stops it.
"""

from __future__ import annotations

import re

from .ncu_numbers import parse_number

GROUPED = re.compile(r"\s*[+-]?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?\s*")
FIX = ("write the CSV with ncu itself (`ncu --import report.ncu-rep --csv > out.csv`) rather "
       "than re-saving it from a spreadsheet, or pass the .ncu-rep file")


# What a skipped last row says when the file stops inside one of its quoted fields.
CUT_SHORT = ("the file ends inside this row (a quoted field is left open: file cut short?); "
             "row skipped")


def ends_open(text: str) -> bool:
    """Whether a line is the cut-off end of a file: no line ending and a quoted field left
    open (an odd number of quotes). Its last cell is part of a number ('687,' of
    '687,938,432,432'), which would otherwise read as a wrong value or a locale's comma."""
    return not text.endswith(("\n", "\r")) and text.count('"') % 2 == 1


class CommaError(Exception):
    """A cell whose commas are not ncu's thousands separators. Not a ValueError on purpose:
    the readers skip ValueError cells ('n/a'), and this one must stop the file instead."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text


def ncu_float(text: str) -> float:
    """A cell as a float: float() syntax, with commas only between groups of three digits.
    ValueError for text that is no number; CommaError for a comma ncu does not write."""
    if "," not in text:
        return float(text)
    if GROUPED.fullmatch(text):
        return float(text.replace(",", ""))
    raise CommaError(text)


def cell_value(text: str, scale: float) -> float:
    """A metric cell in SI units: ncu_float first (the common case), else parse_number
    ('n/a' and '' give nan). ValueError otherwise; CommaError for a locale's comma."""
    try:
        return ncu_float(text) * scale
    except ValueError:
        return parse_number(text) * scale


def comma_message(text: str, column: str) -> str:
    """What the ParseError says about a CommaError cell (the caller adds file and line)."""
    return (f"column {column}: value '{text}' is not a number as ncu writes it (a comma may "
            f"only separate groups of three digits, '1,234,567.5'); it looks like a "
            f"decimal-comma locale's number, and reading it would give a wrong value; {FIX}")

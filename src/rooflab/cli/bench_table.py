"""The zoo table for a narrow terminal (`rooflab bench` at 80 columns): FLOP and bytes
left out, names never cut, best/floor kept where it fits."""

from __future__ import annotations

COMPACT_HEADERS = {"kernel": "kernel", "AI": "AI", "time": "time", "achieved": "achieved",
                   "% of roof": "% roof", "bound": "bound", "measured/floor": "x floor",
                   "best/floor": "x best", "flags": "flags"}


def compact_table(analysis, title: str | None = None, width: int = 80):
    """The zoo table for a narrow terminal: FLOP and bytes left out (AI keeps their ratio;
    -o table.csv has them), no column rules, names never cut (`rooflab demo` at 80 columns
    otherwise printed 'tria…  memo…  GFLO…'). best/floor stays when the table still fits
    `width` without cutting a cell, else the caption says where it is; the caption that
    tells median from best (bench.table.TIME_NOTE) stays, in the short column names."""
    from ..bench.table import zoo_table

    full = zoo_table(analysis, title)
    timed = full.caption is not None   # zoo_table's caption: some row has a best sample
    table = _compact(full, timed)
    if timed and not _fits(table, width):
        table = _compact(full, False, moved=True)
    return table


def _compact(full, best: bool, moved: bool = False):
    """full's columns in COMPACT_HEADERS, best/floor only if `best`; `moved`: the caption
    says that best/floor was left out for width."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    from ..bench.table import TIME_NOTE

    names = {k: v for k, v in COMPACT_HEADERS.items() if best or k != "best/floor"}
    caption = None
    if full.caption is not None:
        note = TIME_NOTE
        for long, short in COMPACT_HEADERS.items():   # the note names the columns shown
            note = note.replace(long, short)
        if moved:   # 'x best' is not shown: say where it is, and name it as it is there
            note = note.replace("x best is", "best/floor (in -o table.csv or a wider "
                                             "terminal) is")
        caption = escape(note)
    table = Table(title=f"{full.title} (FLOP, bytes: -o table.csv or a wider terminal)",
                  title_justify="left", caption=caption, caption_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False,
                  padding=0)   # the box puts one space between columns
    cols = [c for c in full.columns if c.header in names]
    for c in cols:   # only the flags wrap (one flag a line)
        table.add_column(names[str(c.header)], justify=c.justify, no_wrap=c.header != "flags")
    for i in range(full.row_count):
        table.add_row(*(list(c.cells)[i] for c in cols))
    return table


def _fits(table, width: int) -> bool:
    """Whether `table` prints within `width` columns with no cell cut short ('…') or any
    line longer: the flags may fold, nothing else."""
    from io import StringIO

    from rich.console import Console

    probe = Console(width=width, record=True, file=StringIO(), color_system=None,
                    highlight=False)
    probe.print(table)
    lines = probe.export_text().splitlines()
    return all(len(line) <= width and "…" not in line for line in lines)

"""Text for the plotly chart of the HTML report: names as data, never markup.

plotly renders a subset of HTML in every text it draws (point labels, annotations, legend
entries, the title): `<a href>`, `<b>`, `<i>`, `<span style>`. The hovers escaped the
kernel's name, the labels beside the markers, the leaders, the roofs' names and the title did
not (review s22 r1 F6: a kernel or roof JSON named `<a href="https://evil.example">H100</a>`
put a live link in a shared report's chart, and the label differed from its hover). Every
name from a file goes through plotly_text; the layout (html_labels) measures a text by the
characters shown (shown_len), not by its entities. Pure.
"""

from __future__ import annotations

import html


def plotly_text(text: object) -> str:
    """A name as plotly text that shows as written ('<b>x</b>' -> '&lt;b&gt;x&lt;/b&gt;')."""
    return html.escape(str(text), quote=False)


def shown_len(row: str) -> int:
    """How many characters plotly shows for one row of text ('&lt;y&gt;' is 3, not 10)."""
    return len(html.unescape(row)) if "&" in row else len(row)

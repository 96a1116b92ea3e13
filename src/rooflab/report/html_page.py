"""The HTML report page's parts around the chart: style sheet, scripts, read-with-care
lines, tables, diagnoses."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from ..model.ceiling import Roof
from ..model.diagnose import Diagnosis
from ..units import fmt_factor
from .envelope_bound import envelope_header
from .markdown import (
    ADVICE_HEADERS,
    advice_rows,
    short_doubt,
)

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;
max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{margin-top:1.6em;border-bottom:1px solid #ddd}h3{margin-bottom:.3em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3}tbody th{background:none;font-weight:normal}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.flag{color:#b00020;font-weight:bold}.finding{color:#8a4b00}.muted{color:#666}
.care{margin:.4em 0}.care li{margin:.2em 0;color:#b00020}.care details p{margin:.3em 0 .3em 1em}
.care summary{cursor:pointer}
th.sortable{cursor:pointer}th.sortable::after{content:" \\2195";color:#999}
th[aria-sort=ascending]::after{content:" \\2191"}th[aria-sort=descending]::after{content:" \\2193"}
.static-chart{max-width:100%;height:auto}
@media print{body{max-width:none;margin:0}.js-only,.modebar-container{display:none}
.js-plotly-plot,.plotly-graph-div,table,details,h3{page-break-inside:avoid;break-inside:avoid}
a{color:inherit}}
"""

# Click (or Enter on) a column head to sort its table; again to reverse. Progressive: the
# tables read in their own order without it, and only this script marks heads sortable.
# A cell sorts by its leading number scaled by its SI prefix before a unit ("5.44 GFLOP/s"
# above "120 MFLOP/s", "1.2 ms" above "800 us", "944 GOP/s" above "472 GFLOP/s", "2 MiB"
# above "1 MiB": binary prefixes as 1024^n; review 19c N7: `GOP` and `MiB` read unscaled);
# words ("-", names) sort after numbers. (`F?L?OP`: FLOP or OP, in the line's 100 columns.)
SORT_SCRIPT = """
(function () {
  var P = {k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
           m: 1e-3, u: 1e-6, n: 1e-9,
           Ki: 1024, Mi: 1048576, Gi: 1073741824, Ti: 1099511627776, Pi: 1125899906842624};
  var NUM = /^([-+]?\\d*\\.?\\d+(?:e[-+]?\\d+)?)\\s*(?:([kKMGTPEmun]i?)(?=F?L?OP|op|B|s\\b|Hz|W))?/;
  function key(td) {
    var t = td ? td.textContent.trim() : '', m = NUM.exec(t);
    return m ? parseFloat(m[1]) * (P[m[2]] || 1) : t.toLowerCase();
  }
  function cmp(a, b) {
    if (typeof a === typeof b) return a < b ? -1 : a > b ? 1 : 0;
    return typeof a === 'number' ? -1 : 1;
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    var heads = table.tHead.rows[0].cells, body = table.tBodies[0];
    Array.prototype.forEach.call(heads, function (th, col) {
      th.className = 'sortable'; th.tabIndex = 0; th.title = 'click to sort';
      function sort() {
        var up = th.getAttribute('aria-sort') !== 'ascending';
        var rows = Array.prototype.map.call(body.rows, function (r, i) {
          return [key(r.cells[col]), i, r]; });
        rows.sort(function (a, b) { return (up ? 1 : -1) * cmp(a[0], b[0]) || a[1] - b[1]; });
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', up ? 'ascending' : 'descending');
        rows.forEach(function (r) { body.appendChild(r[2]); });
      }
      th.addEventListener('click', sort);
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(); } });
    });
  });
})();
"""

# With scripts off (a mail client, a wiki preview, a sandboxed viewer) the plotly div is a
# 620-px blank and "hover" means nothing: hide both; the static chart shows instead.
NOSCRIPT_STYLE = "<noscript><style>.js-only,.js-chart{display:none}</style></noscript>"

# A read-with-care line whose list of kernels is longer than this many characters shows
# its cause and count, the list folded under them (review 18c F15: 81 names, 15 red lines
# before the chart).
CARE_LIST_CHARS = 300
_COUNTED = re.compile(r"^(\d+ kernels?(?:\(s\))? [^:]*): (.+?)\. ([A-Z].*)$", re.S)


def care_html(warnings: Sequence[str]) -> str:
    """The read-with-care lines as one list; a long list of kernels folded in a
    details/summary under its cause and count ("81 kernel(s) have an AI too high...")."""
    if not warnings:
        return ""
    items = []
    for w in warnings:
        m = _COUNTED.match(w)
        if m is None or len(m.group(2)) <= CARE_LIST_CHARS:
            items.append(f"<li>{html.escape(w)}</li>")
            continue
        cause, names, why = (html.escape(g) for g in m.groups())
        items.append(f"<li><details><summary><span class='flag'>{cause}</span>. {why}"
                     f"</summary><p>{names}.</p></details></li>")
    return ("<div class='care' role='note'><p class='flag'>Read with care:</p><ul>"
            + "".join(items) + "</ul></div>")



def html_table(headers: Sequence[str], rows: Sequence[Sequence[str]],
               labelled_by: str = "") -> str:
    """A table SORT_SCRIPT makes sortable by clicking a column head. Its heads are column
    headers and each row's kernel (else its first cell: the quantity, the advice) its
    row's header, so a screen reader reading across a row says which kernel it is on;
    labelled_by: the id of the heading that names the table (review s23 r6 F7)."""
    e = html.escape
    head = "".join(f"<th scope='col'>{e(h)}</th>" for h in headers)
    key = list(headers).index("kernel") if "kernel" in headers else 0
    body = "".join("<tr>" + "".join(f"<th scope='row'>{e(str(c))}</th>" if i == key
                                    else f"<td>{e(str(c))}</td>" for i, c in enumerate(row))
                   + "</tr>" for row in rows)
    named = f" aria-labelledby='{e(labelled_by)}'" if labelled_by else ""
    return (f"<table class='sortable'{named}><thead><tr>{head}</tr></thead><tbody>{body}"
            f"</tbody></table>")


def diagnosis_html(d: Diagnosis, said: bool = False, roof: Roof | None = None) -> str:
    """said: the top says the probe's load note (markdown.load_said): point there. roof:
    the analysis' roof, so that on the envelope (no --on) the heading says so, as the
    terminal and markdown reports do (envelope_bound.envelope_header)."""
    e = html.escape
    head = envelope_header(d.point, roof, d.bound)
    parts = [f"<h3 id='k{d.rank}'>{d.rank}. {e(d.kernel)} — {e(head)}</h3>",
             f"<p><b>Position</b>: {e(d.evidence)}</p>",
             f"<p><b>Gain</b>: {e(d.gain_words)}"
             + (" <span class='flag'>more than 2x below its roof</span>" if d.flagged else "")
             + "</p>"]
    parts += [f"<p><b>Kernel note</b>: {e(n)}</p>" for n in d.notes]
    parts.append("<ol>")
    for x in d.distances:
        f = fmt_factor(x.factor)
        parts.append(f"<li><b>{e(x.name)}</b> ({f}): {e(x.words)}</li>")
    parts.append("</ol>")
    for f in d.findings:
        causes = "".join(f"<li>{e(short_doubt(c, said))}</li>" for c in f.causes)
        parts.append(f"<div class='finding'><b>{e(f.check)}</b> ({e(f.severity)}): "
                     f"{e(f.message)}<ul>{causes}<li>check: {e(f.fix)}</li></ul></div>")
    if d.advice:
        parts.append(html_table(ADVICE_HEADERS, advice_rows(d, said), f"k{d.rank}"))
    return "\n".join(parts)


def self_contained_words() -> str:
    """What makes the page big, said (review 18c F15: 4.9 MB for six kernels, 4.8 MB of it
    plotly.js): inlined so the page opens with no network, from a mail or an archive."""
    from plotly.offline import get_plotlyjs

    mb = len(get_plotlyjs().encode("utf-8")) / 1e6
    return (f"This page is one self-contained file: plotly.js ({mb:.1f} MB of it) is inlined "
            f"so that the chart works offline; the report's own data is the rest.")

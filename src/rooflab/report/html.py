"""A self-contained interactive HTML report (plotly.js inlined: no network needed to view it).

The page: heading and the read-with-care lines (html_page.care_html), the chart (the
plotly Figure of html_figure, hovered in html_hover; without JavaScript the static
drawing of html_static in its place), then the tables of the Markdown report (record
table, priorities, kernels, advice: html_page, sortable by their column heads).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from ..hardware.profile import MachineProfile
from ..model.analysis import Analysis
from ..model.diagnose import Diagnosis, diagnose
from ..model.dies import kind_words
from .chart_parts import RooflineDisplay
from .chart_words import REAL_TRAFFIC_LEGEND, REAL_TRAFFIC_STYLE, caveats, memory_ops
from .frozen_heap import long_lived as _long_lived
from .html_access import TOGGLES_CSS, TOGGLES_SCRIPT
from .html_colors import COLOR_SCHEME_META, DARK_CSS, DARK_SCRIPT, LIGHT_PANEL_CSS
from .html_figure import chart_display, chart_left_out, figure
from .html_page import (
    CSS,
    NOSCRIPT_STYLE,
    SORT_SCRIPT,
    care_html,
    diagnosis_html,
    html_table,
    self_contained_words,
)
from .html_roofs import SLOPE_SCRIPT
from .html_static import chart_summary, static_chart
from .markdown import (
    KERNEL_HEADERS,
    RANKED_BY,
    RECORD_HEADERS,
    STEP_HEADERS,
    UNPLACED_HEADERS,
    UNPLACED_TITLE,
    generator_footer,
    kernel_row_notes,
    kernel_rows,
    load_said,
    machine_for,
    machine_line,
    priority_headers,
    priority_rows,
    record_notes,
    record_rows,
    step_findings,
    step_rows,
    trust_warnings,
    unplaced_rows,
    unplaced_summary,
)


def html_report(analysis: Analysis, profile: MachineProfile | None = None, title: str = "",
                top: int = 10, size_by: str = "time", min_share: float | None = None,
                diags: Sequence[Diagnosis] | None = None) -> str:
    """One self-contained HTML page: chart (plotly.js inlined) and the report's tables.
    size_by, min_share: the chart's markers and kernels (chart.roofline_data); the
    tables keep every kernel. diags: the analysis's diagnoses where the caller has them
    (`rooflab report` prints them too: diagnosing 20 000 kernels costs seconds)."""
    # (_long_lived: the name the tests and benchmarks/report_chart_speed.py swap for a no-op)
    with _long_lived():
        return _page(analysis, profile, title, top, size_by, min_share, diags)


def _page(analysis: Analysis, profile: MachineProfile | None, title: str, top: int,
          size_by: str, min_share: float | None, diags: Sequence[Diagnosis] | None) -> str:
    """html_report's page."""
    display = chart_display(analysis, profile, size_by, min_share)
    diags = list(diags) if diags is not None else diagnose(analysis,
                                                           machine_for(analysis, profile))
    warnings = trust_warnings(diags, profile, analysis.notes, analysis.kernels)
    e = html.escape
    heading = title or f"Roofline report: {analysis.roof.name}"
    body = [*_header(analysis, profile, display, warnings, heading),
            *_chart(analysis, profile, title, display, diags),
            *_tables(analysis, profile, diags, top, load_said(warnings))]
    footer = generator_footer()
    body.append("<hr>" + (f"<p class='muted'>{e(footer)}</p>" if footer else "")
                + f"<p class='muted'>{e(self_contained_words())}</p>")
    # both colour schemes declared, with a dark theme of its own (html_colors): a browser's
    # forced dark mode then leaves the chart's text legible (review s23 r6 F6)
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"{COLOR_SCHEME_META}<title>{e(heading)}</title>"
            f"<style>{CSS}{TOGGLES_CSS}{LIGHT_PANEL_CSS}{DARK_CSS}</style>{NOSCRIPT_STYLE}</head><body>\n"
            + "\n".join(body) + f"\n<script>{SORT_SCRIPT}</script>\n</body></html>\n")


def _header(analysis: Analysis, profile: MachineProfile | None, display: RooflineDisplay,
            warnings: list[str], heading: str) -> list[str]:
    """Heading, roof, how to read the chart (hover and legend only where scripts run: the
    static chart has neither), machine, and the read-with-care lines (warnings)."""
    e = html.escape
    roof = analysis.roof
    return [f"<h1>{e(heading)}</h1>",
            f"<p class='muted'>Roof: {e(roof.name)} ({e(kind_words(roof))})"
            + (f"; source: {e(roof.source)}" if roof.source else "")
            + ". <span class='js-only'>Hover or tap a point for its numbers and their "
              "provenance; click the legend (or tick the boxes under the chart) to toggle "
              "ceilings and levels. </span>"
              "<noscript>The chart is a static image (JavaScript is off): the tables below "
              "hold every number. </noscript>Measured roofs are solid, nominal dashed"
            + (f"; {e(REAL_TRAFFIC_LEGEND)}: dash-dot-dot"
               if any(ln.style == REAL_TRAFFIC_STYLE for ln in display.lines) else "")
            + ".</p>",
            f"<p class='muted'>{e(machine_line(machine_for(analysis, profile)))}</p>",
            care_html(warnings)]


def _chart(analysis: Analysis, profile: MachineProfile | None, title: str,
           display: RooflineDisplay, diags: list[Diagnosis]) -> list[str]:
    """The plotly chart in a figure labelled with its summary, the static chart standing
    in for it without scripts, and the sentences under it."""
    e = html.escape
    fig = figure(analysis, profile, title, display)
    chart = fig.to_html(full_html=False, include_plotlyjs=True, div_id="roofline",
                        config={"displaylogo": False, "responsive": True,
                                "showSendToCloud": False},
                        post_script=[TOGGLES_SCRIPT, DARK_SCRIPT, SLOPE_SCRIPT])
    summary = chart_summary(analysis, display, diags)
    # the PNG's places for its names, among the kernels the static chart draws only
    static = static_chart(display, summary, place=True)
    # The figure is named by its summary (the plot's SVG text is hidden from screen
    # readers: html_access); its caption holds the notes under the chart and points to
    # the tables, which hold every number the chart shows (review s23 r6 F7).
    notes = []
    # the PNG's footnote (load on the probe, what `*` marks), under this chart too
    # (review 19c N4: the page's legend had `*` and nothing said what it meant)
    said = caveats(display)
    if said:
        notes.append(f"<p class='muted'>Chart: {e(said)}.</p>")
    left_out = chart_left_out(display)
    if left_out:
        notes.append(f"<p class='muted'>{e(left_out)}</p>")
    ops = memory_ops(display)   # ops without FLOP have no point: named as the PNG does
    if ops:
        notes.append(f"<p class='muted'>Chart: {e(ops)}.</p>")
    if display.dropped:   # --min-share: the tables below still list them
        notes.append(f"<p class='muted'>Chart: {e(display.dropped)}; the tables list every "
                     f"kernel.</p>")
    notes.append("<p class='muted'>Every number on the chart is in the tables below: "
                 f"<a href='#{KERNELS_ID}'>Kernels on the roof</a>.</p>")
    return [f"<figure class='chart' aria-label='{e(summary)}' style='margin:0'>"
            f"<div class='js-chart'>{chart}</div>{static}"
            f"<figcaption>{''.join(notes)}</figcaption></figure>"]


KERNELS_ID = "kernels"    # the "Kernels on the roof" heading, linked from the chart


def _tables(analysis: Analysis, profile: MachineProfile | None, diags: list[Diagnosis],
            top: int, said: bool) -> list[str]:
    """The Markdown report's tables and notes, then the diagnoses of the top kernels
    (said: the top says the probe's load note, markdown.load_said)."""
    e = html.escape
    out = []
    if profile is not None:
        out += ["<h2 id='record-table'>Record table (nominal vs measured)</h2>",
                html_table(RECORD_HEADERS, record_rows(analysis, profile, diags=diags),
                           "record-table"),
                _notes(record_notes(profile))]
    steps = step_rows(analysis)
    if steps:
        out += ["<h2 id='steps'>Optimisation steps</h2>",
                html_table(STEP_HEADERS, steps, "steps"),
                "<ul>" + "".join(f"<li>{e(s)}</li>" for s in step_findings(analysis))
                + "</ul>"]
    out += ["<h2 id='top-kernels'>Top kernels to work on</h2>",
            f"<p>{RANKED_BY}</p>",
            html_table(priority_headers(diags), priority_rows(diags[:top], analysis.roof),
                       "top-kernels"),
            f"<h2 id='{KERNELS_ID}'>Kernels on the roof</h2>",
            html_table(KERNEL_HEADERS, kernel_rows(analysis), KERNELS_ID),
            _notes(kernel_row_notes(analysis))]
    if analysis.unplaced:
        out += [f"<h2 id='not-placed'>{UNPLACED_TITLE}</h2>",
                f"<p>{e(unplaced_summary(analysis))}</p>",
                html_table(UNPLACED_HEADERS, unplaced_rows(analysis), "not-placed")]
    out.append("<h2>Diagnosis per kernel</h2>")
    out += [diagnosis_html(d, said, analysis.roof) for d in diags[:top]]
    if analysis.notes:
        out.append("<h2>Notes</h2><ul>" + "".join(f"<li>{e(n)}</li>" for n in analysis.notes)
                   + "</ul>")
    return [x for x in out if x]


def _notes(notes) -> str:
    return ("<ul class='muted'>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes)
            + "</ul>") if notes else ""

"""A written chart's description, carried in the file (review s23 r6 F11).

The HTML report and the demo's report.md give the chart an alt text (html_static.
chart_summary: roof, kernels per side of the ridge, the ridges, the top kernel), but a PNG
or SVG written by `plot -o` carried its title only: dropped into slides or a wiki, it had
no text for a reader who cannot see it. chart.figure_bytes now writes this description as
the PNG's 'Description' text chunk and the SVG's <desc> (and its dc:description).
"""

from __future__ import annotations

import html

from ..units import si

# Naming the top kernel to work on takes a diagnosis of every kernel (~1-2 ms each): 10 000
# kernels added 20 s to writing their chart. Above this many, the description gives the
# roof, the kernels per side and the ridges, and leaves the top kernel to the report.
DIAGNOSED_MAX = 500


def chart_description(display) -> str:
    """The description of a roofline chart (the HTML report's alt text, chart_summary) or
    of a working-set sweep chart (its plateaus and cache sizes); '' for neither."""
    if getattr(display, "table", None) is not None:
        return sweep_description(display)
    roofs, kernels = getattr(display, "roofs", ()), getattr(display, "kernels", None)
    if not roofs or kernels is None:
        return ""
    from ..model.analysis import analyze
    from ..model.diagnose import diagnose
    from .html_static import chart_summary

    if len(kernels) > DIAGNOSED_MAX:   # the counts and ridges only (see DIAGNOSED_MAX)
        return chart_summary(analyze(roofs[0], []), display, [])
    analysis = analyze(roofs[0], list(kernels))
    return chart_summary(analysis, display, diagnose(analysis, detail=1))


def sweep_description(display) -> str:
    """'Bandwidth vs working set (per thread): plateaus L1 180 GB/s (4 KiB to 16 KiB),
    ...; cache sizes L1 32 KiB, ...' for a SweepDisplay."""
    from .sweep_chart import chart_title, size_label

    t = display.table
    words = f"{chart_title(t, display.title)}, working set {t.axis}"
    if t.windows:
        words += "; plateaus " + ", ".join(
            f"{w.level} {si(w.bytes_per_s, 'B/s')} ({size_label(w.first)} to "
            f"{size_label(w.last)})" for w in t.windows)
    if t.markers:
        words += "; cache sizes " + ", ".join(f"{m.name} {size_label(m.bytes_)}"
                                              for m in t.markers)
    return words + "."


def svg_with_desc(svg: bytes, description: str) -> bytes:
    """The SVG with a <desc> after its <title> (SVG 1.1's accessible description, read by
    screen readers), the description escaped; as it is where it has no <title>."""
    if not description:
        return svg
    end = svg.find(b"</title>")
    if end < 0:
        return svg
    end += len(b"</title>")
    desc = f"\n <desc>{html.escape(description, quote=False)}</desc>".encode()
    return svg[:end] + desc + svg[end:]

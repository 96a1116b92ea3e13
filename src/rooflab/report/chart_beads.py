"""Roof beads kept off the chart's texts (review s23 r6 F10).

chart_draw._beads spaces a later roof's beads evenly along each of its lines, blind to
the labels: on `llm ... --compare H200,A100` an `x` and an `o` landed inside "fp16 tensor
990 TFLOP/s" and "AI*=38.3", showing between the glyphs. Once every text is drawn, the
beads whose marker meets a text's box are taken out; the line keeps the others (a bead
says which roof a line is; one fewer on a line says the same), and at least one: where
every bead meets a text, the one farthest from the texts.
"""

from __future__ import annotations

# half a bead (4.5 pt across) and its edge: how near a text's box a bead's centre may come
BEAD_CLEAR_PT = 3.0


def clear_beads(ax) -> int:
    """Take out of the axes' bead rows (gid roof-beads:*) every bead within BEAD_CLEAR_PT
    of a drawn text's box; returns how many were taken out."""
    from .chart_layout_size import figure_renderer
    from .chart_legend import _text_boxes

    rows = [ln for ln in ax.lines if (ln.get_gid() or "").startswith("roof-beads:")]
    texts = [t for t in ax.texts if t.get_visible() and t.get_text().strip()]
    if not rows or not texts:
        return 0
    renderer = figure_renderer(ax.figure)
    px = ax.figure.dpi / 72
    pad = BEAD_CLEAR_PT * px
    # a slope label as pieces along its diagonal, as the legend's placing sees it
    raw = [b for t in texts for b in _text_boxes(t, renderer, px)]
    boxes = [(x0 - pad, y0 - pad, x1 + pad, y1 + pad) for x0, y0, x1, y1 in raw]
    gone = 0
    for row in rows:
        xs, ys = list(row.get_xdata()), list(row.get_ydata())
        at = ax.transData.transform(list(zip(xs, ys, strict=True)))
        keep = [i for i, (qx, qy) in enumerate(at)
                if not any(x0 <= qx <= x1 and y0 <= qy <= y1 for x0, y0, x1, y1 in boxes)]
        if not keep and len(xs):
            # never every bead: the line would no longer say whose it is (review s23 h2
            # F9); the one farthest from every text stays
            keep = [max(range(len(xs)), key=lambda i: min(
                _gap(at[i], b) for b in raw))]
        if len(keep) < len(xs):
            gone += len(xs) - len(keep)
            row.set_data([xs[i] for i in keep], [ys[i] for i in keep])
    return gone


def _gap(q, box) -> float:
    """How far the point q (display px) lies outside the box: 0 inside it."""
    x0, y0, x1, y1 = box
    dx = max(x0 - q[0], 0.0, q[0] - x1)
    dy = max(y0 - q[1], 0.0, q[1] - y1)
    return (dx * dx + dy * dy) ** 0.5

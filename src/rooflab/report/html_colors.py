"""The HTML chart's text colours and its dark theme.

Text: the lines keep the charts' Okabe-Ito colours, but a slope's, a ceiling's or a ridge's
name is 11-px text, which WCAG 1.4.3 wants at 4.5:1 on its background; on white the sky
blue, pink, green, vermillion and grey lines' colours reach 2.3-3.9:1 (review s23 r6 F5).
Their names are written in a darker shade of the same hue (the PNG's: chart_marks.
TEXT_SHADES), each at 4.5:1 or more on white.

Dark: under `prefers-color-scheme: dark` the page turns dark (DARK_CSS) and DARK_SCRIPT
redraws the chart on a dark background with light text, the names back in the lines' own
colours (4.6:1 or more on DARK_BG) and the dark greys turned light. With the page declaring
both schemes (COLOR_SCHEME_META), Chromium's forced dark mode leaves such a page to its own
dark theme instead of inverting its background under the plot's dark text (review s23 r6
F6: the chart's text at 1.5-1.8:1 on #121212).

Forced dark under a light preference (Chromium's "Auto Dark Mode for Web Contents" on a
light desktop) cannot be opted out of ("only light" is ignored) nor seen from a script: it
inverts every light background, the plot's included, but not the plot's SVG text. The plot
is drawn on a transparent background over a white image (LIGHT_PANEL_CSS), which forced dark
leaves as it is (it spares images): the chart stays a white panel with its own legible text
while the page around it turns dark. Pure data and text.
"""

from __future__ import annotations

import json

from .chart_marks import TEXT_SHADES

# Names are written in the PNG's text shades (chart_marks.text_color: line colour -> a
# darker shade of its hue at 4.5:1+ on white; the DRAM blue #0072B2, 5.19:1, is its own).


DARK_BG = "#161616"
DARK_TEXT = "#e6e6e6"
DARK_GRID = "#3a3a3a"

# The chart's colours that read poorly on DARK_BG -> their dark-theme colour: the text
# shades back to their lines' colours (4.7-7.8:1 on DARK_BG), the dark greys light. Glyphs
# inside markers ("black"/"white") keep theirs: they sit on the marker, not the background.
DARK_COLORS = {
    **{text: line for line, text in TEXT_SHADES.items()},
    "#333333": "#d0d0d0", "#333": "#d0d0d0",
    "#222": "#bbbbbb", "#222222": "#bbbbbb",
    "#555": "#a8a8a8", "#555555": "#a8a8a8",
    "#2a3f5f": DARK_TEXT,
}
# and for text only (names, annotations): the DRAM blue, 3.5:1 on DARK_BG, lighter; its
# line and the memory-bound markers keep it (the legend's side key shows that blue)
DARK_TEXT_COLORS = {**DARK_COLORS, "#0072B2": "#4da3dd"}

COLOR_SCHEME_META = "<meta name='color-scheme' content='light dark'>"

# A 64x64 white PNG: the plot's white, as an image (forced dark spares images; a 1x1 one
# may be taken for an icon and inverted).
_WHITE_PNG = ("iVBORw0KGgoAAAANSUhEUgAAAEAAAABACAIAAAAlC+aJAAAAYElEQVR4nO3PQQ0AIBDAMMC/50MEj4Zk"
              "VbDtmVk/OzrgVQNaA1oDWgNaA1oDWgNaA1oDWgNaA1oDWgNaA1oDWgNaA1oDWgNaA1oDWgNaA1oD"
              "WgNaA1oDWgNaA1oD"
              "WgNaA1oDWgPaBXKqA31N0fbGAAAAAElFTkSuQmCC")
# the figure's paper and plot area are transparent (html_figure): this is their white
PLOT_BG = "rgba(0,0,0,0)"
LIGHT_PANEL_CSS = (".js-chart .plotly-graph-div{background:#fff url(data:image/png;base64,"
                   f"{_WHITE_PNG})}}\n")

DARK_CSS = f"""
@media (prefers-color-scheme: dark){{
body{{background:{DARK_BG};color:{DARK_TEXT}}}
.js-chart .plotly-graph-div{{background:{DARK_BG}}}
a{{color:#8cc4ff}}h2{{border-bottom-color:#444}}
th,td{{border-color:#555}}th{{background:#262626}}tbody th{{background:none}}
.muted{{color:#b0b0b0}}.flag,.care li{{color:#ff8a8a}}.finding{{color:#f0b060}}
th.sortable::after{{color:#999}}
}}
"""

# The plot's own colours under the dark scheme, and back under the light one. The first
# dark `apply` saves every trace's and annotation's colour and the layout's keys; dark maps
# the saved colours through DARK_COLORS (undefined leaves a trace as it is), light puts the
# saved ones back. Mapping back through the inverted map turned colours that were never
# changed (a line colour that is also a text shade's key, e.g. #E69F00) into their dark text
# shade for good (review s23 h2 F2). Runs at load and on a change of scheme.
_DARK_JS = """
(function () {
  var gd = document.getElementById('{plot_id}'), light = null, saved = null;
  function lower(m) { var o = {}; for (var k in m) o[k.toLowerCase()] = m[k]; return o; }
  var LINE = lower(__LINE__), TEXT = lower(__TEXT_MAP__);
  function swap(c, m) {
    if (Array.isArray(c)) return c.map(function (x) { return swap(x, m); });
    return (typeof c === 'string' && m[c.toLowerCase()]) || c;
  }
  function copy(c) { return Array.isArray(c) ? c.slice() : c; }
  var PATHS = ['line.color', 'marker.color', 'marker.line.color', 'textfont.color'];
  var DARK = {paper_bgcolor: '__BG__', plot_bgcolor: '__BG__', 'font.color': '__FG__',
              'legend.bgcolor': '__BG__'};
  ['xaxis', 'yaxis'].forEach(function (ax) {
    ['gridcolor', 'linecolor', 'zerolinecolor', 'minor.gridcolor'].forEach(function (k) {
      DARK[ax + '.' + k] = '__GRID__'; });
  });
  function get(o, p) { return p.split('.').reduce(function (a, k) { return a && a[k]; }, o); }
  function apply(dark) {
    if (!dark && !light) return;
    var data = {}, lay = {};
    if (dark && !light) {
      light = {};
      for (var k in DARK) light[k] = get(gd._fullLayout, k);
      saved = {data: {}, ann: (gd.layout.annotations || []).map(function (a) {
        return {font: a.font && a.font.color, arrow: a.arrowcolor}; })};
      PATHS.forEach(function (p) {
        saved.data[p] = gd.data.map(function (t) { return copy(get(t, p)); }); });
    }
    PATHS.forEach(function (p) {
      var mp = p === 'textfont.color' ? TEXT : LINE;
      data[p] = saved.data[p].map(function (c) {
        return c === undefined ? undefined : dark ? swap(c, mp) : copy(c); });
    });
    saved.ann.forEach(function (a, i) {
      if (a.font) lay['annotations[' + i + '].font.color'] = dark ? swap(a.font, TEXT) : a.font;
      if (a.arrow) lay['annotations[' + i + '].arrowcolor'] = dark ? swap(a.arrow, LINE) : a.arrow;
    });
    for (var k2 in DARK) lay[k2] = dark ? DARK[k2] : light[k2];
    Plotly.update(gd, data, lay);
  }
  var mq = window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)');
  if (!mq) return;
  if (mq.matches) apply(true);
  var on = function (e) { apply(e.matches); };
  if (mq.addEventListener) mq.addEventListener('change', on); else mq.addListener(on);
})();
"""

DARK_SCRIPT = (_DARK_JS.replace("__LINE__", json.dumps(DARK_COLORS))
               .replace("__TEXT_MAP__", json.dumps(DARK_TEXT_COLORS))
               .replace("__BG__", DARK_BG).replace("__FG__", DARK_TEXT)
               .replace("__GRID__", DARK_GRID))

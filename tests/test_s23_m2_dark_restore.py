"""HTML dark theme: dark -> light puts back the page's own colours (review s23 h2 F2).

The generated DARK_SCRIPT is run under node against a stand-in Plotly; skipped where node
is not installed.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from rooflab.report.html_colors import DARK_SCRIPT

NODE = shutil.which("node") or shutil.which("nodejs")

# One trace per colour the review saw change: the compute-bound markers' orange, the
# vermillion ceiling, the grey ridge marker; and a text in a text shade, an annotation.
TRACES = [
    {"marker": {"color": "#E69F00", "line": {"color": "#333333"}}},
    {"line": {"color": "#D55E00"}, "textfont": {"color": "#c35600"}},
    {"marker": {"color": ["#8c8c8c", "#0072B2"]}},
]
ANNOTATIONS = [{"font": {"color": "#0072B2"}, "arrowcolor": "#8c8c8c"}]

HARNESS = r"""
var TRACES = __TRACES__, ANN = __ANN__;
var gd = {data: JSON.parse(JSON.stringify(TRACES)),
          layout: {annotations: JSON.parse(JSON.stringify(ANN))},
          _fullLayout: {paper_bgcolor: '#fff', plot_bgcolor: '#fff', font: {color: '#444'},
                        legend: {bgcolor: '#fff'}}};
function set(o, path, v) {
  var ks = path.replace(/\[(\d+)\]/g, '.$1').split('.');
  for (var i = 0; i < ks.length - 1; i++) {
    if (o[ks[i]] === undefined) o[ks[i]] = {};
    o = o[ks[i]];
  }
  o[ks[ks.length - 1]] = v;
}
global.document = {getElementById: function () { return gd; }};
global.Plotly = {update: function (g, data, lay) {
  for (var p in data) data[p].forEach(function (v, i) {
    if (v !== undefined) set(g.data[i], p, v); });
  for (var q in lay) set(g.layout, q, lay[q]);
}};
var handler = null;
global.window = {matchMedia: function () {
  return {matches: false, addEventListener: function (e, f) { handler = f; }}; }};
eval(__SCRIPT__);
var seen = [];
handler({matches: true}); seen.push(JSON.parse(JSON.stringify([gd.data, gd.layout.annotations])));
handler({matches: false}); seen.push(JSON.parse(JSON.stringify([gd.data, gd.layout.annotations])));
handler({matches: true}); handler({matches: false});
seen.push(JSON.parse(JSON.stringify([gd.data, gd.layout.annotations])));
process.stdout.write(JSON.stringify(seen));
"""


@pytest.mark.skipif(NODE is None, reason="needs node to run the page's script")
def test_dark_then_light_restores_every_colour(tmp_path):
    js = (HARNESS.replace("__TRACES__", json.dumps(TRACES))
          .replace("__ANN__", json.dumps(ANNOTATIONS))
          .replace("__SCRIPT__", json.dumps(DARK_SCRIPT)))
    script = tmp_path / "dark.js"
    script.write_text(js, encoding="utf-8")
    out = subprocess.run([NODE, str(script)], capture_output=True, text=True, timeout=30,
                         check=True).stdout
    dark, light, light2 = json.loads(out)
    # under dark the text shade is back to its line's colour, the grey light, the DRAM
    # blue text lighter; the line and marker colours that read well stay
    assert dark[0][0]["marker"] == {"color": "#E69F00", "line": {"color": "#d0d0d0"}}
    assert dark[0][1]["textfont"]["color"] == "#d55e00"
    assert dark[1][0]["font"]["color"] == "#4da3dd"
    # light again: exactly the page's own colours (was #E69F00 -> #9c6c00, #D55E00 -> #c35600,
    # #8c8c8c -> #767676), and again after a second round trip
    assert light == [TRACES, ANNOTATIONS]
    assert light2 == [TRACES, ANNOTATIONS]

"""The HTML chart for keyboards and screen readers (review s23 r6 F7).

plotly's legend toggles are SVG shapes a mouse clicks (tabIndex -1): the above-roof rings,
the launch caps and the levels' joins were shown or hidden by mouse only. TOGGLES_SCRIPT
writes one real checkbox per legend entry under the chart, each showing or hiding its
entry's traces as a click on the legend does (a legend group together), and kept in step
when the legend is clicked. It also hides the plot's SVG from screen readers: its 70-odd
text nodes ("5", "2", "click to toggle", tick labels) read as noise after the figure's own
description (its aria-label, and the tables its caption points to); the modebar's buttons
stay reachable.
"""

from __future__ import annotations

TOGGLES_SCRIPT = """
(function () {
  var gd = document.getElementById('{plot_id}');
  function hideSvg() {
    gd.querySelectorAll('svg').forEach(function (s) { s.setAttribute('aria-hidden', 'true'); });
  }
  function words(name) {
    var doc = new DOMParser().parseFromString('<p>' + (name || '') + '</p>', 'text/html');
    return doc.body.textContent.replace(/\\s+/g, ' ').trim();
  }
  function shown(t) { return t.visible === undefined || t.visible === true; }
  var entries = [], seen = {};
  gd.data.forEach(function (t, i) {
    if (t.showlegend === false && !t.legendgroup) return;
    if (!t.x || !t.x.length) return;      // draws nothing: nothing to show or hide
    var g = t.legendgroup ? 'g:' + t.legendgroup : 'i:' + i;
    if (seen[g] !== undefined) return;
    var members = [];
    gd.data.forEach(function (u, j) {
      if (t.legendgroup ? u.legendgroup === t.legendgroup : j === i) members.push(j);
    });
    var named = members.filter(function (j) { return gd.data[j].showlegend !== false; });
    if (!named.length) return;
    seen[g] = entries.length;
    entries.push({name: words(gd.data[named[0]].name), traces: members});
  });
  var box = document.createElement('fieldset');
  box.className = 'chart-toggles js-only';
  var title = document.createElement('legend');
  title.textContent = 'Show on the chart (as clicking the legend does)';
  box.appendChild(title);
  entries.forEach(function (e, k) {
    var label = document.createElement('label'), input = document.createElement('input');
    input.type = 'checkbox'; input.id = gd.id + '-show-' + k;
    input.checked = shown(gd.data[e.traces[0]]);
    input.addEventListener('change', function () {
      Plotly.restyle(gd, {visible: input.checked ? true : 'legendonly'}, e.traces);
    });
    e.input = input;
    label.appendChild(input); label.appendChild(document.createTextNode(' ' + e.name));
    box.appendChild(label);
  });
  (gd.closest('.js-chart') || gd.parentNode).appendChild(box);
  gd.on('plotly_restyle', function () {
    entries.forEach(function (e) { e.input.checked = shown(gd.data[e.traces[0]]); });
  });
  gd.on('plotly_afterplot', hideSvg);
  hideSvg();
})();
"""

TOGGLES_CSS = """
.chart-toggles{border:1px solid #ccc;margin:.4em 0;padding:.2em .6em;font-size:.85em}
.chart-toggles label{display:inline-block;margin:.1em 1.2em .1em 0}
"""

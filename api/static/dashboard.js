// Draws the page's plotly figures (specs embedded as JSON by the server) and opens a window's
// evidence when a window is clicked, on the strip chart or in the table. No network access beyond
// this server: plotly.js itself is served from /static.
(function () {
  "use strict";

  function showWindow(index) {
    var panels = document.querySelectorAll("section.evidence");
    panels.forEach(function (p) { p.hidden = true; });
    document.querySelectorAll("tr.window-row").forEach(function (r) {
      r.classList.toggle("selected", r.getAttribute("data-window") === String(index));
    });
    var panel = document.getElementById("evidence-" + index);
    if (panel) {
      panel.hidden = false;
      panel.scrollIntoView({ block: "nearest" });
    }
  }

  function keyUrl(k) {
    var table = new URLSearchParams(window.location.search).get("table");
    var url = "/key/" + [k.arch, k.op, k.H, k.w_dtype, k.form, k.mode].map(encodeURIComponent).join("/");
    return table ? url + "?table=" + encodeURIComponent(table) : url;
  }

  document.querySelectorAll("div.chart[data-fig]").forEach(function (div) {
    var spec = document.getElementById(div.getAttribute("data-fig"));
    if (!spec || typeof Plotly === "undefined") { return; }
    var fig = JSON.parse(spec.textContent);
    Plotly.newPlot(div, fig.data, fig.layout, { responsive: true, displaylogo: false });
    var mode = div.getAttribute("data-click");
    if (mode === "window") {
      div.on("plotly_click", function (ev) {
        if (ev.points && ev.points.length) { showWindow(ev.points[0].customdata[1]); }
      });
    } else if (mode === "arch") {
      var links = JSON.parse(document.getElementById("strip-links").textContent);
      div.on("plotly_click", function (ev) {
        if (ev.points && ev.points.length) { window.location.href = keyUrl(links[ev.points[0].customdata[0]]); }
      });
    }
  });

  document.querySelectorAll("tr.window-row").forEach(function (row) {
    function open() { showWindow(row.getAttribute("data-window")); }
    row.addEventListener("click", open);
    row.addEventListener("keydown", function (e) { if (e.key === "Enter") { open(); } });
  });
  if (window.location.hash.indexOf("#window-") === 0) { showWindow(window.location.hash.slice(8)); }
})();

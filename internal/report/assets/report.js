// Draws the charts of an oltplab report from the JSON in
// #oltplab-charts with the embedded uPlot. No network, no dependencies.
(function () {
  "use strict";
  var specs = JSON.parse(document.getElementById("oltplab-charts").textContent) || [];
  var fmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });
  var height = 320;
  var plots = [];

  function width(el) {
    return Math.max(360, Math.min(el.clientWidth || 900, 1150));
  }
  function show(v) {
    return v == null ? "—" : fmt.format(v);
  }

  specs.forEach(function (c) {
    var el = document.getElementById(c.id);
    if (!el) {
      return;
    }
    var series = [{ label: "virtual users" }];
    c.series.forEach(function (s) {
      var o = { label: s.label, stroke: s.color, spanGaps: true, value: function (u, v) { return show(v); } };
      if (s.role === "ci") {
        o.width = 1;
        o.stroke = s.color + "80";
        o.points = { show: false };
      } else if (s.role === "ref") {
        o.width = 1;
        o.points = { show: false };
      } else {
        o.width = 2;
        o.points = { show: true, size: 7, width: 1, fill: s.color, stroke: s.color };
      }
      if (s.dash) {
        o.dash = [6, 4];
      }
      series.push(o);
    });
    var logX = c.x.length > 1;
    var yScale = {};
    if (c.zero_y) {
      yScale.range = function (u, lo, hi) { return [0, hi > 0 ? hi * 1.08 : 1]; };
    }
    var opts = {
      title: c.title,
      width: width(el),
      height: height,
      scales: { x: logX ? { time: false, distr: 3, log: 10 } : { time: false }, y: yScale },
      axes: [
        {
          label: "virtual users",
          splits: function () { return c.x; },
          filter: function (u, splits) { return splits; }, // label every step, also on the log scale
          values: function (u, vals) { return vals.map(String); }
        },
        { label: c.y_label, size: 80, values: function (u, vals) { return vals.map(show); } }
      ],
      series: series,
      bands: (c.bands || []).map(function (b) { return { series: [b.hi + 1, b.lo + 1], fill: b.fill }; })
    };
    var data = [c.x].concat(c.series.map(function (s) { return s.values; }));
    var plot = new uPlot(opts, data, el);
    // The legend lists the interval bounds too; the band shows them, so
    // keep the legend to the values (row 0 is the x axis).
    var rows = plot.root.querySelectorAll(".u-legend .u-series");
    c.series.forEach(function (s, i) {
      if (s.role === "ci" && rows[i + 1]) {
        rows[i + 1].style.display = "none";
      }
    });
    plots.push({ el: el, plot: plot });
  });

  window.addEventListener("resize", function () {
    plots.forEach(function (p) { p.plot.setSize({ width: width(p.el), height: height }); });
  });
})();

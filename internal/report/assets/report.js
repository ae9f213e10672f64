// Draws the charts of an oltplab report from the JSON in
// #oltplab-charts with the embedded uPlot. No network, no dependencies.
(function () {
  "use strict";
  var specs = JSON.parse(document.getElementById("oltplab-charts").textContent) || [];
  var fmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });
  var defaultHeight = 320;
  var plots = [];

  function width(el) {
    return Math.max(360, Math.min(el.clientWidth || 900, 1150));
  }
  function show(v) {
    return v == null ? "—" : fmt.format(v);
  }
  // Throughput starts at 0, so curves compare from one origin; a negative
  // value still shows, below it.
  function zeroRange(u, lo, hi) {
    return [lo < 0 ? lo * 1.08 : 0, hi > 0 ? hi * 1.08 : 1];
  }
  // A log axis of virtual users spans the steps with a little room, not
  // whole powers of ten.
  function logRange(u, lo, hi) {
    return [lo / 1.25, hi * 1.25];
  }
  // Vertical dotted lines (a profile's plateau), labelled at the top.
  function marksHook(marks) {
    return function (u) {
      var ctx = u.ctx;
      ctx.save();
      marks.forEach(function (m, i) {
        var x = Math.round(u.valToPos(m.x, "x", true));
        ctx.strokeStyle = m.color;
        ctx.fillStyle = m.color;
        ctx.lineWidth = 2 * devicePixelRatio;
        ctx.setLineDash([2 * devicePixelRatio, 4 * devicePixelRatio]);
        ctx.beginPath();
        ctx.moveTo(x, u.bbox.top);
        ctx.lineTo(x, u.bbox.top + u.bbox.height);
        ctx.stroke();
        ctx.font = (11 * devicePixelRatio) + "px system-ui, sans-serif";
        ctx.textAlign = x > u.bbox.left + u.bbox.width * 0.7 ? "right" : "left";
        ctx.fillText(m.label, x + (ctx.textAlign === "right" ? -4 : 4) * devicePixelRatio, u.bbox.top + (12 + 13 * i) * devicePixelRatio);
      });
      ctx.restore();
    };
  }

  // spanPlugin marks intervals of x: a fill under the series, then
  // opaque edges of exactly the span's colour and its label over them.
  // Event labels sit one line below phase labels.
  function spanPlugin(spans) {
    function each(u, fn) {
      var ctx = u.ctx, b = u.bbox;
      ctx.save();
      ctx.beginPath();
      ctx.rect(b.left, b.top, b.width, b.height);
      ctx.clip();
      spans.forEach(function (s, i) {
        var x0 = Math.round(u.valToPos(s.from, "x", true));
        var x1 = Math.round(u.valToPos(s.to, "x", true));
        fn(ctx, b, s, x0, Math.max(x1, x0 + 1), i);
      });
      ctx.restore();
    }
    return {
      hooks: {
        drawClear: [function (u) {
          each(u, function (ctx, b, s, x0, x1) {
            ctx.fillStyle = s.fill;
            ctx.fillRect(x0, b.top, x1 - x0, b.height);
          });
        }],
        draw: [function (u) {
          var px = window.devicePixelRatio || 1, line = Math.max(2, Math.round(2 * px));
          each(u, function (ctx, b, s, x0, x1, i) {
            ctx.fillStyle = s.color;
            ctx.fillRect(x0, b.top, line, b.height);
            ctx.fillRect(x1 - line, b.top, line, b.height);
            ctx.font = Math.round(11 * px) + "px sans-serif";
            ctx.textBaseline = "top";
            var row = s.kind === "event" ? 1 + (i % 2) : 0;
            ctx.fillText(s.label, x0 + line + 2 * px, b.top + (4 + 14 * row) * px);
          });
        }]
      }
    };
  }

  specs.forEach(function (c) {
    var el = document.getElementById(c.id);
    if (!el) {
      return;
    }
    // x_kind "seconds": a per-second time series (linear x, dense, no
    // point markers unless sparse); otherwise x is virtual users.
    var seconds = c.x_kind === "seconds";
    var logX = !seconds && c.x.length > 1;
    var xLabel = c.x_label || (seconds ? "seconds since window start" : logX ? "virtual users (log scale)" : "virtual users");
    var series = [{ label: seconds ? "t (s)" : "virtual users" }];
    c.series.forEach(function (s) {
      var o = { label: s.label, stroke: s.color, spanGaps: !seconds, scale: s.scale || "y", value: function (u, v) { return show(v); } };
      if (s.role === "ci") {
        o.width = 1;
        o.stroke = s.color + "80";
        o.points = { show: false };
      } else if (s.role === "ref") {
        o.width = 1;
        o.points = { show: false };
      } else if (seconds) {
        o.width = 2;
        o.points = { size: 5, width: 1, fill: s.color, stroke: s.color };
      } else {
        o.width = 2;
        o.points = { show: true, size: 7, width: 1, fill: s.color, stroke: s.color };
      }
      if (s.dash) {
        o.dash = [6, 4];
      }
      series.push(o);
    });
    var scales = { x: logX ? { time: false, distr: 3, log: 10, range: logRange } : { time: false }, y: {} };
    if (c.zero_y) {
      scales.y.range = zeroRange;
    }
    if (seconds && c.spans && c.spans.length && c.x.length) {
      // The axis covers every span, also one that begins before the
      // first sample or ends after the last.
      var lo = Math.min.apply(null, c.x), hi = Math.max.apply(null, c.x);
      c.spans.forEach(function (s) { lo = Math.min(lo, s.from); hi = Math.max(hi, s.to); });
      scales.x.range = function () { return [lo, hi]; };
    }
    var xAxis = { label: xLabel };
    if (!seconds) {
      xAxis.splits = function () { return c.x; };
      xAxis.filter = function (u, splits) { return splits; }; // label every step, also on the log scale
      xAxis.values = function (u, vals) { return vals.map(String); };
    }
    var axes = [xAxis, { label: c.y_label, size: 80, values: function (u, vals) { return vals.map(show); } }];
    if (c.y2_label) {
      scales.y2 = c.zero_y ? { range: zeroRange } : {};
      axes.push({ scale: "y2", side: 1, label: c.y2_label, size: 80, grid: { show: false }, values: function (u, vals) { return vals.map(show); } });
    }
    var h = c.height || defaultHeight;
    var opts = {
      title: c.title,
      width: width(el),
      height: h,
      scales: scales,
      axes: axes,
      series: series,
      bands: (c.bands || []).map(function (b) { return { series: [b.hi + 1, b.lo + 1], fill: b.fill }; })
    };
    if (c.marks && c.marks.length) {
      opts.hooks = { draw: [marksHook(c.marks)] };
    }
    if (c.spans && c.spans.length) {
      opts.plugins = [spanPlugin(c.spans)];
    }
    if (c.sync) {
      // Charts of the same run share a cursor: hovering one second shows
      // it on every chart of the run.
      opts.cursor = { sync: { key: c.sync } };
    }
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
    plots.push({ el: el, plot: plot, height: h });
  });

  window.addEventListener("resize", function () {
    plots.forEach(function (p) { p.plot.setSize({ width: width(p.el), height: p.height }); });
  });
})();

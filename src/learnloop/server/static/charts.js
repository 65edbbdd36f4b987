// Small SVG charts for the metrics page: grouped bars and lines with gaps for missing values.
"use strict";
(function () {
  const NS = "http://www.w3.org/2000/svg";
  const W = 900, H = 240, M = { top: 12, right: 16, bottom: 28, left: 44 };

  function el(name, attrs, text) {
    const node = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // The top of a count axis: four whole-number steps of 1, 2 or 5 × 10^k, so tick labels never repeat.
  function niceMax(value) {
    const target = Math.max(1, value) / 4;
    const p = Math.pow(10, Math.floor(Math.log10(target)));
    for (const m of [1, 2, 5, 10]) if (Math.max(1, m * p) >= target) return 4 * Math.max(1, m * p);
    return 40 * p;
  }

  function frame(labels, yMax, format) {
    const svg = el("svg", { viewBox: "0 0 " + W + " " + H, role: "img" });
    const plotH = H - M.top - M.bottom;
    for (let i = 0; i <= 4; i++) {
      const y = M.top + plotH - (plotH * i) / 4;
      svg.appendChild(el("line", { x1: M.left, x2: W - M.right, y1: y, y2: y, stroke: "#e5e7eb" }));
      svg.appendChild(el("text", { x: M.left - 6, y: y + 4, "text-anchor": "end", "font-size": 11, fill: "#6b7280" },
        format((yMax * i) / 4)));
    }
    const step = Math.max(1, Math.ceil(labels.length / 8));
    labels.forEach((label, i) => {
      if (i % step) return;
      const x = M.left + ((i + 0.5) * (W - M.left - M.right)) / labels.length;
      svg.appendChild(el("text", { x, y: H - 8, "text-anchor": "middle", "font-size": 11, fill: "#6b7280" }, label));
    });
    return svg;
  }

  function legend(series) {
    const box = document.createElement("div");
    box.className = "legend";
    for (const s of series) {
      const item = document.createElement("span");
      const swatch = document.createElement("i");
      swatch.style.background = s.color;
      item.append(swatch, document.createTextNode(s.name));
      box.appendChild(item);
    }
    return box;
  }

  function lines(container, spec) {
    const values = spec.series.flatMap((s) => s.values.filter((v) => v !== null));
    const yMax = spec.yMax || niceMax(Math.max(0, ...values));
    const format = spec.format || ((v) => String(Math.round(v)));
    const svg = frame(spec.labels, yMax, format);
    const n = spec.labels.length;
    const plotW = W - M.left - M.right, plotH = H - M.top - M.bottom;
    const x = (i) => M.left + ((i + 0.5) * plotW) / n;
    const y = (v) => M.top + plotH - (plotH * v) / yMax;
    for (const s of spec.series) {
      let run = [];
      const flush = () => {
        if (run.length > 1) svg.appendChild(el("polyline", { points: run.join(" "), fill: "none", stroke: s.color, "stroke-width": 2 }));
        if (run.length === 1) {
          const [px, py] = run[0].split(",");
          svg.appendChild(el("circle", { cx: px, cy: py, r: 3, fill: s.color }));
        }
        run = [];
      };
      s.values.forEach((v, i) => {
        if (v === null || v === undefined) flush();
        else run.push(x(i).toFixed(1) + "," + y(v).toFixed(1));
      });
      flush();
    }
    container.replaceChildren(svg, legend(spec.series));
  }

  function bars(container, spec) {
    const values = spec.series.flatMap((s) => s.values);
    const yMax = niceMax(Math.max(0, ...values));
    const svg = frame(spec.labels, yMax, (v) => String(Math.round(v)));
    const n = spec.labels.length, k = spec.series.length;
    const plotW = W - M.left - M.right, plotH = H - M.top - M.bottom;
    const slot = plotW / n, bar = Math.max(1, (slot * 0.8) / k);
    spec.series.forEach((s, j) => {
      s.values.forEach((v, i) => {
        if (!v) return;
        const h = (plotH * v) / yMax;
        svg.appendChild(el("rect", {
          x: (M.left + i * slot + slot * 0.1 + j * bar).toFixed(1), y: (M.top + plotH - h).toFixed(1),
          width: bar.toFixed(1), height: h.toFixed(1), fill: s.color,
        }, undefined));
      });
    });
    container.replaceChildren(svg, legend(spec.series));
  }

  window.learnloopCharts = { lines, bars };
})();

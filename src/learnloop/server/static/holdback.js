// The metrics page's holdback section: verdict, learning curve and intervals from GET /api/holdback.
"use strict";
(function () {
  const charts = window.learnloopCharts;
  const select = document.getElementById("days");
  const verdict = document.getElementById("holdback-verdict");
  const figures = document.querySelectorAll("#holdback .chart");
  const table = document.getElementById("holdback-outcomes");
  const NS = "http://www.w3.org/2000/svg";

  function figureText(value, rate) {
    if (value === null || value === undefined) return "–";
    return rate ? (value * 100).toFixed(1) + "%" : value.toFixed(2);
  }

  // One interval as a small picture: the zero line, the interval and the point estimate.
  function intervalPicture(o, extent) {
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 160 16");
    svg.setAttribute("width", "160");
    svg.setAttribute("height", "16");
    const x = (v) => 80 + (v / extent) * 75;
    const add = (name, attrs) => {
      const node = document.createElementNS(NS, name);
      for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
      svg.appendChild(node);
    };
    add("line", { x1: 80, x2: 80, y1: 0, y2: 16, stroke: "#9ca3af" });
    if (o.low !== null && o.high !== null) {
      const color = o.effect === "worse" ? "#b91c1c" : o.effect === "better" ? "#15803d" : "#6b7280";
      add("line", { x1: x(o.low), x2: x(o.high), y1: 8, y2: 8, stroke: color, "stroke-width": 3 });
      add("circle", { cx: x(o.difference), cy: 8, r: 3, fill: color });
    }
    return svg;
  }

  function cell(row, text) {
    const td = document.createElement("td");
    if (typeof text === "string") td.textContent = text; else td.appendChild(text);
    row.appendChild(td);
  }

  function outcomes(report) {
    const body = table.querySelector("tbody");
    body.replaceChildren();
    for (const e of report.experiments) {
      const shown = e.outcomes.filter((o) => o.low !== null);
      const extent = Math.max(1e-9, ...shown.map((o) => Math.max(Math.abs(o.low), Math.abs(o.high)))) * 1.1;
      for (const o of e.outcomes) {
        const rate = o.outcome !== "feedback" && o.outcome !== "turns_to_resolution";
        const row = document.createElement("tr");
        row.dataset.effect = o.effect;
        cell(row, (e.experiment === "aa" ? "A/A check: " : "") + o.label);
        cell(row, figureText(o.memory, rate));
        cell(row, figureText(o.holdback, rate));
        cell(row, o.difference === null ? "–" : (o.difference > 0 ? "+" : "") + figureText(o.difference, rate));
        cell(row, o.low === null ? "–" : figureText(o.low, rate) + " to " + figureText(o.high, rate));
        cell(row, intervalPicture(o, extent));
        row.title = o.verdict;
        body.appendChild(row);
      }
    }
  }

  async function load() {
    try {
      const report = await window.fetch("/api/holdback?days=" + select.value, { credentials: "same-origin" })
        .then((r) => r.ok ? r.json() : r.json().then((e) => { throw new Error(e.error.message); }));
      verdict.textContent = report.verdict;
      const main = report.experiments.find((e) => e.experiment === "holdback") || report.experiments[0];
      for (const node of figures) node.hidden = !main;
      table.hidden = !main;
      if (!main) return;
      const suffix = main.experiment === "aa" ? " (A/A: both arms get memory)" : "";
      // The share of turns the user corrected, by their turn number: a learning curve falls where memory helps.
      charts.lines(document.getElementById("chart-holdback"), {
        labels: main.curve.map((p) => "turn " + p.turns),
        yMax: 1,
        format: (v) => Math.round(v * 100) + "%",
        series: [
          { name: "memory" + suffix, color: "#2563eb", values: main.curve.map((p) => p.memory_corrections) },
          { name: "holdback" + suffix, color: "#b91c1c", values: main.curve.map((p) => p.holdback_corrections) },
        ],
      });
      charts.lines(document.getElementById("chart-holdback-days"), {
        labels: main.series.map((p) => { const d = new Date(p.t); return (d.getMonth() + 1) + "/" + d.getDate(); }),
        yMax: 1,
        format: (v) => Math.round(v * 100) + "%",
        series: [
          { name: "memory" + suffix, color: "#2563eb", values: main.series.map((p) => p.memory_corrections) },
          { name: "holdback" + suffix, color: "#b91c1c", values: main.series.map((p) => p.holdback_corrections) },
        ],
      });
      outcomes(report);
    } catch (error) {
      verdict.textContent = error.message;
      for (const node of figures) node.hidden = true;
      table.hidden = true;
    }
  }

  select.addEventListener("change", load);
  load();
})();

// Seed 001 §11 on the metrics page: the eight figures and two charts, from the `learning` part of the
// GET /api/metrics answer the page has just loaded (metrics.js announces it).
"use strict";
(function () {
  const charts = window.learnloopCharts;
  const pct = (v) => (v === null || v === undefined ? "–" : Math.round(v * 100) + "%");
  const num = (v, digits) => (v === null || v === undefined ? "–" : Number(v).toFixed(digits));

  function label(t, bucket) {
    const d = new Date(t);
    return bucket === "hour" ? d.getHours() + ":00" : (d.getMonth() + 1) + "/" + d.getDate();
  }

  function cards(l) {
    const rows = [
      ["Template hit rate", pct(l.template_hit_rate)],
      ["Template confidence", pct(l.template_confidence)],
      ["Error recovery rate", pct(l.error_recovery_rate)],
      ["First-try success", pct(l.first_try_success_rate)],
      ["Response quality", num(l.average_response_quality, 2)],
      ["Tool selection accuracy", pct(l.tool_selection_accuracy)],
      ["Cold start (turns)", num(l.cold_start_queries, 1)],
      ["Correction rate", pct(l.correction_rate)],
    ];
    const box = document.getElementById("learning-totals");
    box.replaceChildren();
    for (const [name, value] of rows) {
      const card = document.createElement("div");
      card.dataset.metric = name;
      const b = document.createElement("b");
      b.textContent = value;
      const span = document.createElement("span");
      span.textContent = name;
      card.append(b, span);
      box.appendChild(card);
    }
  }

  document.addEventListener("learnloop:metrics", (event) => {
    const m = event.detail, l = m.learning;
    if (!l) return;
    cards(l);
    const nothing = !l.tool_calls && !l.feedback_count;
    document.getElementById("learning-empty").hidden = !nothing;
    for (const node of document.querySelectorAll("#learning .chart")) node.hidden = nothing;
    const labels = l.series.map((p) => label(p.t, m.bucket));
    const rate = { yMax: 1, format: (v) => Math.round(v * 100) + "%" };
    charts.lines(document.getElementById("chart-templates"), {
      labels, ...rate,
      series: [
        { name: "template hit rate", color: "#2563eb", values: l.series.map((p) => p.template_hit_rate) },
        { name: "template confidence", color: "#15803d", values: l.series.map((p) => p.template_confidence) },
      ],
    });
    charts.lines(document.getElementById("chart-quality"), {
      labels, ...rate,
      series: [
        { name: "first-try success", color: "#7c3aed", values: l.series.map((p) => p.first_try_success_rate) },
        // Quality runs from -1 to 1: shown as (score + 1) / 2 on the same 0-100% axis.
        { name: "response quality", color: "#a16207",
          values: l.series.map((p) => (p.response_quality === null ? null : (p.response_quality + 1) / 2)) },
        { name: "correction rate", color: "#b91c1c", values: l.series.map((p) => p.correction_rate) },
      ],
    });
  });
})();

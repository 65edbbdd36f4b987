// The metrics page: totals, three charts and two tables from GET /api/metrics.
"use strict";
(function () {
  const charts = window.learnloopCharts;
  const select = document.getElementById("days");
  const errorNode = document.querySelector(".metrics .error");

  function label(t, bucket) {
    const d = new Date(t);
    return bucket === "hour" ? d.getHours() + ":00" : (d.getMonth() + 1) + "/" + d.getDate();
  }

  function totals(m) {
    const t = m.totals, l = m.learnings;
    const cards = [
      ["Learnings", l.total], ["Verified", l.by_status.verified], ["Candidates", l.by_status.candidate],
      ["Deprecated", l.by_status.deprecated], ["Saves", t.saves], ["Merges", t.merges], ["Skips", t.skips],
      ["New versions", t.new_versions], ["Refusals", t.refusals], ["Promotions", t.promotions],
      ["Deprecations", t.deprecations], ["Retrievals", t.retrievals],
      ["Hit rate", t.retrieval_hit_rate === null ? "–" : Math.round(t.retrieval_hit_rate * 100) + "%"],
    ];
    const box = document.getElementById("totals");
    box.replaceChildren();
    for (const [name, value] of cards) {
      const card = document.createElement("div");
      const b = document.createElement("b");
      b.textContent = value;
      const span = document.createElement("span");
      span.textContent = name;
      card.append(b, span);
      box.appendChild(card);
    }
  }

  function table(id, rows) {
    const body = document.querySelector("#" + id + " tbody");
    body.replaceChildren();
    if (!rows.length) rows = [["none yet", ""]];
    for (const [k, v] of rows) {
      const tr = document.createElement("tr");
      const a = document.createElement("td"), b = document.createElement("td");
      a.textContent = k;
      b.textContent = v;
      tr.append(a, b);
      body.appendChild(tr);
    }
  }

  async function load() {
    try {
      const m = await window.fetch("/api/metrics?days=" + select.value, { credentials: "same-origin" })
        .then((r) => r.ok ? r.json() : r.json().then((e) => { throw new Error(e.error.message); }));
      errorNode.hidden = true;
      const labels = m.series.map((p) => label(p.t, m.bucket));
      totals(m);
      // Blank charts explain nothing: with no learnings and no activity in the window, say so instead.
      const t = m.totals;
      const nothing = m.learnings.total === 0 && !t.saves && !t.refusals && !t.retrievals && !t.skips;
      document.getElementById("metrics-empty").hidden = !nothing;
      for (const node of document.querySelectorAll(".metrics .chart, .metrics .tables")) node.hidden = nothing;
      charts.lines(document.getElementById("chart-status"), {
        labels,
        series: [
          { name: "verified", color: "#15803d", values: m.series.map((p) => p.verified) },
          { name: "candidate", color: "#a16207", values: m.series.map((p) => p.candidate) },
          { name: "deprecated", color: "#6b7280", values: m.series.map((p) => p.deprecated) },
        ],
      });
      charts.bars(document.getElementById("chart-writes"), {
        labels,
        series: [
          { name: "saves", color: "#2563eb", values: m.series.map((p) => p.saves + p.merges) },
          { name: "refusals", color: "#b91c1c", values: m.series.map((p) => p.refusals) },
          { name: "skips", color: "#9ca3af", values: m.series.map((p) => p.skips) },
        ],
      });
      charts.lines(document.getElementById("chart-hits"), {
        labels, yMax: 1, format: (v) => Math.round(v * 100) + "%",
        series: [{ name: "hit rate", color: "#7c3aed", values: m.series.map((p) => p.hit_rate) }],
      });
      table("refusals", Object.entries(m.totals.refusals_by_rule));
      table("origins", Object.entries(m.learnings.by_origin));
      document.dispatchEvent(new CustomEvent("learnloop:metrics", { detail: m }));
    } catch (error) {
      errorNode.textContent = error.message;
      errorNode.hidden = false;
    }
  }

  select.addEventListener("change", load);
  load();
  setInterval(load, 30000);
})();

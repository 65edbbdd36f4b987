// The tools page: try the router on a query (POST /api/tools/route), and filter the catalog as you type.
"use strict";
(function () {
  const box = document.getElementById("router");
  const form = document.getElementById("route-form");
  const input = document.getElementById("route-context");
  const list = document.getElementById("routed");
  const errorNode = box.querySelector(".error");

  function item(tool) {
    const li = document.createElement("li");
    const name = document.createElement("code");
    name.textContent = tool.name;
    const score = document.createElement("span");
    score.className = "score";
    score.textContent = tool.score.toFixed(3);
    const why = document.createElement("span");
    why.className = "why";
    why.textContent = tool.why;
    li.append(name, " ", score, " ", why);
    return li;
  }

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    const body = { query: input.value, k: 5 };
    if (box.dataset.user) body.user = box.dataset.user;
    try {
      const routed = await window.learnloopApi("POST", "/api/tools/route", body);
      errorNode.hidden = true;
      list.replaceChildren(...routed.map(item));
      if (!routed.length) {
        const li = document.createElement("li");
        li.textContent = "No tools to route yet: register some first.";
        list.appendChild(li);
      }
      list.hidden = false;
    } catch (error) {
      errorNode.textContent = error.message;
      errorNode.hidden = false;
    }
  });

  const filter = document.getElementById("catalog-filter");
  if (filter) {
    filter.addEventListener("input", function () {
      const needle = filter.value.trim().toLowerCase();
      for (const row of document.querySelectorAll("#catalog tbody tr")) {
        row.hidden = needle !== "" && !row.textContent.toLowerCase().includes(needle);
      }
    });
  }
})();

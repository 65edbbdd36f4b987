// The knowledge page: inline edit, delete with confirmation, promote/deprecate/restore, undo a merge or
// replacement, history; and the review queue (keep both / newer / older, or merge).
"use strict";
(function () {
  const api = window.learnloopApi;
  const categoriesNode = document.getElementById("categories");
  const categories = categoriesNode ? JSON.parse(categoriesNode.textContent) : [];

  function showError(item, error) {
    const node = item.querySelector(".error");
    node.textContent = error.message || String(error);
    node.hidden = false;
  }

  function clearError(item) {
    const node = item.querySelector(".error");
    node.textContent = "";
    node.hidden = true;
  }

  function startEdit(item) {
    if (item.querySelector(".editor")) return;
    const textNode = item.querySelector(".text");
    const editor = document.createElement("form");
    editor.className = "editor";
    const area = document.createElement("textarea");
    area.name = "text";
    area.value = textNode.textContent;
    area.setAttribute("aria-label", "Learning text");
    const row = document.createElement("div");
    row.className = "row";
    const select = document.createElement("select");
    select.name = "category";
    select.setAttribute("aria-label", "Category");
    for (const c of categories) {
      const option = document.createElement("option");
      option.value = c.name;
      option.textContent = c.label;
      option.selected = c.name === item.dataset.category;
      select.appendChild(option);
    }
    const save = document.createElement("button");
    save.type = "submit";
    save.className = "save";
    save.textContent = "Save";
    const cancel = document.createElement("button");
    cancel.type = "button";
    cancel.className = "cancel";
    cancel.textContent = "Cancel";
    if (categories.length && item.dataset.category) row.appendChild(select);
    row.append(save, cancel);
    editor.append(area, row);
    textNode.hidden = true;
    textNode.after(editor);
    area.focus();
    cancel.addEventListener("click", () => { editor.remove(); textNode.hidden = false; clearError(item); });
    editor.addEventListener("submit", async (event) => {
      event.preventDefault();
      const body = { text: area.value };
      if (select.parentNode && select.value !== item.dataset.category) body.category = select.value;
      save.disabled = true;
      try {
        const learning = await api("PUT", "/api/learnings/" + item.dataset.id, body);
        textNode.textContent = learning.text;
        item.dataset.category = learning.category || "";
        const badge = item.querySelector(".badge.category");
        if (badge && learning.category) badge.textContent = learning.category;
        editor.remove();
        textNode.hidden = false;
        clearError(item);
      } catch (error) {
        showError(item, error);
        save.disabled = false;
      }
    });
  }

  async function remove(item) {
    if (!window.confirm("Delete this learning? It is removed from search and recall; its history stays.")) return;
    try {
      await api("DELETE", "/api/learnings/" + item.dataset.id);
      item.remove();
      if (!document.querySelector(".learning")) window.location.reload();
    } catch (error) {
      showError(item, error);
    }
  }

  async function transition(item, action, body) {
    try {
      await api("POST", "/api/learnings/" + item.dataset.id + "/" + action, body);
      window.location.reload();
    } catch (error) {
      showError(item, error);
    }
  }

  async function toggleHistory(item) {
    const list = item.querySelector(".history");
    if (!list.hidden) { list.hidden = true; return; }
    try {
      const events = await api("GET", "/api/learnings/" + item.dataset.id + "/history");
      list.replaceChildren();
      for (const e of events) {
        const li = document.createElement("li");
        const when = new Date(e.at).toLocaleString();
        const change = e.before && e.after && e.before.status !== e.after.status
          ? " (" + e.before.status + " → " + e.after.status + ")" : "";
        li.textContent = when + " — " + e.action + change + " by " + e.actor + (e.reason ? ": " + e.reason : "");
        list.appendChild(li);
      }
      list.hidden = false;
    } catch (error) {
      showError(item, error);
    }
  }

  async function resolve(card, resolution, text) {
    const body = { resolution };
    if (text !== undefined) body.text = text;
    try {
      await api("POST", "/api/review/" + card.dataset.link + "/resolve", body);
      window.location.reload();
    } catch (error) {
      showError(card, error);
    }
  }

  function openMerge(card) {
    if (card.querySelector(".editor")) return;
    const editor = document.createElement("form");
    editor.className = "editor";
    const area = document.createElement("textarea");
    area.name = "text";
    area.value = card.dataset.merged;
    area.setAttribute("aria-label", "Merged text");
    const save = document.createElement("button");
    save.type = "submit";
    save.className = "save-merge";
    save.textContent = "Save merged learning";
    editor.append(area, save);
    card.querySelector(".actions").after(editor);
    area.focus();
    editor.addEventListener("submit", (event) => { event.preventDefault(); resolve(card, "merge", area.value); });
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    const card = button && button.closest(".review");
    if (card) {
      if (button.classList.contains("resolve")) resolve(card, button.dataset.resolution);
      else if (button.classList.contains("merge-open")) openMerge(card);
      return;
    }
    const item = button && button.closest(".learning");
    if (!item) return;
    if (button.classList.contains("edit")) startEdit(item);
    else if (button.classList.contains("delete")) remove(item);
    else if (button.classList.contains("promote")) transition(item, "promote", {});
    else if (button.classList.contains("deprecate")) transition(item, "deprecate", { reason: "deprecated on the knowledge page" });
    else if (button.classList.contains("restore")) transition(item, "restore", {});
    else if (button.classList.contains("undo")) transition(item, "undo");
    else if (button.classList.contains("history-toggle")) toggleHistory(item);
  });
})();

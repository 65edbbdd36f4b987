// The live activity panels: an EventSource on /api/events, newest first, reconnecting on its own.
// Browsers reconnect an EventSource by themselves (sending Last-Event-ID); when one is closed for good
// (for instance the server restarted while the page was away) a new one resumes after the last seq seen.
// The learning agent's steps for one turn (one package) are grouped in a run per panel, open while it works;
// its `learning_done` closes the turn's runs and marks them done or failed (seed 003 R7).
"use strict";
(function () {
  const MAX_ITEMS = 200;
  const status = document.getElementById("connection");
  const panels = { learning: document.getElementById("learning"), knowledge_update: document.getElementById("knowledge_update") };
  let lastSeq = null;
  let source = null;
  const runs = new Map(); // "panel:package" -> {li, details, head, steps}
  const AGENT = "agent:learning";

  function setStatus(text, cls) {
    status.textContent = text;
    status.className = "connection " + cls;
  }

  function item(event) {
    const li = document.createElement("li");
    li.dataset.seq = event.seq;
    li.dataset.action = event.action;
    const when = document.createElement("span");
    when.className = "when";
    when.textContent = new Date(event.at).toLocaleTimeString();
    const text = document.createElement("span");
    text.className = "summary";
    text.textContent = event.summary;
    const who = document.createElement("span");
    who.className = "who";
    who.textContent = event.actor + (event.user ? " · " + event.user : "");
    li.append(when, text, who);
    return li;
  }

  function add(list, li) {
    list.prepend(li);
    const empty = document.querySelector('[data-empty-for="' + list.id + '"]');
    if (empty) empty.hidden = true;
    while (list.children.length > MAX_ITEMS) {
      const gone = list.lastElementChild;
      if (gone.dataset.package) runs.delete(list.id + ":" + gone.dataset.package);
      gone.remove();
    }
  }

  function updateState(name) {
    const open = [...runs.entries()].some(
      ([key, found]) => key.startsWith(name + ":") && found.li.classList.contains("working"),
    );
    panels[name].closest(".panel").dataset.state = open ? "working" : "idle";
  }

  function run(name, event) {
    const key = name + ":" + event.data.package;
    let found = runs.get(key);
    if (!found) {
      const li = document.createElement("li");
      li.className = "run working";
      li.dataset.package = event.data.package;
      const details = document.createElement("details");
      details.open = true;
      const head = document.createElement("summary");
      head.textContent = "Learning agent at work (session " + (event.data.session || "?") + ")…";
      const steps = document.createElement("ol");
      steps.className = "steps";
      details.append(head, steps);
      li.append(details);
      add(panels[name], li);
      found = { li, details, head, steps };
      runs.set(key, found);
    }
    return found;
  }

  function finish(event) {
    const failed = event.data.status === "failed";
    run("learning", event); // a turn with no step still shows that it was looked at
    for (const name of Object.keys(panels)) {
      const found = runs.get(name + ":" + event.data.package);
      if (!found || !found.li.classList.contains("working")) continue;
      found.li.classList.remove("working");
      found.li.classList.add(failed ? "failed" : "done");
      found.details.open = false;
      const count = found.steps.children.length;
      const updates = count + " knowledge update" + (count === 1 ? "" : "s");
      found.head.textContent = name === "learning" ? event.summary : updates + " (session " + event.data.session + ")";
      updateState(name);
    }
  }

  function render(event) {
    const name = panels[event.panel] ? event.panel : "learning";
    const grouped = event.actor === AGENT && event.data && event.data.package;
    if (grouped && event.type === "learning_done") return finish(event);
    if (grouped) {
      const found = run(name, event);
      found.steps.append(item(event));
      updateState(name);
      return;
    }
    add(panels[name], item(event));
  }

  function connect() {
    const url = lastSeq === null ? "/api/events?tail=50" : "/api/events?after=" + lastSeq;
    source = new EventSource(url);
    source.onopen = () => setStatus("live", "live");
    source.onmessage = (message) => {
      const event = JSON.parse(message.data);
      if (lastSeq !== null && event.seq <= lastSeq) return;
      lastSeq = event.seq;
      render(event);
    };
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        setStatus("reconnecting…", "down");
        setTimeout(connect, 2000);
      } else {
        setStatus("reconnecting…", "down");
      }
    };
  }

  connect();
})();

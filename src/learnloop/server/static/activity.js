// The live activity panels: an EventSource on /api/events, newest first, reconnecting on its own.
// Browsers reconnect an EventSource by themselves (sending Last-Event-ID); when one is closed for good
// (for instance the server restarted while the page was away) a new one resumes after the last seq seen.
"use strict";
(function () {
  const MAX_ITEMS = 200;
  const status = document.getElementById("connection");
  const panels = { learning: document.getElementById("learning"), knowledge_update: document.getElementById("knowledge_update") };
  let lastSeq = null;
  let source = null;

  function setStatus(text, cls) {
    status.textContent = text;
    status.className = "connection " + cls;
  }

  function render(event) {
    const list = panels[event.panel] || panels.learning;
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
    list.prepend(li);
    const empty = document.querySelector('[data-empty-for="' + list.id + '"]');
    if (empty) empty.hidden = true;
    while (list.children.length > MAX_ITEMS) list.lastElementChild.remove();
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

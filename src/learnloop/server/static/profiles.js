// The profile page: save hand edits (empty fields give them back to the learned patterns) and forget.
"use strict";
(function () {
  const root = document.getElementById("profiles");
  const form = document.getElementById("profile-edit");
  if (!root || !form) return;
  const user = root.dataset.user;
  const errorNode = root.querySelector(".error");
  const path = "/api/profiles/" + encodeURIComponent(user);

  function fail(error) {
    errorNode.textContent = error.message;
    errorNode.hidden = false;
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const metrics = document.getElementById("edit-metrics").value.split(",").map((s) => s.trim()).filter(Boolean);
    const range = document.getElementById("edit-range").value.trim();
    try {
      const profile = await window.learnloopApi("PUT", path, {
        favourite_metrics: metrics.length ? metrics : null,
        preferred_time_range: range || null,
      });
      errorNode.hidden = true;
      document.getElementById("favourites").textContent = profile.favourite_metrics.join(", ") || "–";
      document.getElementById("time-range").textContent = profile.preferred_time_range || "–";
    } catch (error) {
      fail(error);
    }
  });

  document.getElementById("profile-forget").addEventListener("click", async () => {
    if (!window.confirm("Forget everything learned of " + user + "? This cannot be undone.")) return;
    try {
      await window.learnloopApi("DELETE", path);
      window.location.reload();
    } catch (error) {
      fail(error);
    }
  });
})();

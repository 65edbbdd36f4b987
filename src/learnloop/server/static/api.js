// Calls to the JSON API from the pages. The http-only cookie authenticates; the X-Requested-With header
// is what the server requires of cookie-authenticated writes (a cross-site form cannot send it).
"use strict";
window.learnloopApi = async function (method, path, body) {
  const options = { method, credentials: "same-origin", headers: { "X-Requested-With": "learnloop" } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
  if (!response.ok) {
    const message = data && data.error ? data.error.message : response.status + " " + response.statusText;
    throw new Error(message);
  }
  return data;
};

// The cases page: import a case from files (read in the browser, sent as text to POST /api/cases).
import { call, say } from "./api.js";

export function setupCases() {
  const form = document.getElementById("import");
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const file = form.elements.file.files[0];
    if (!file) return;
    const body = { filename: file.name, content: await file.text(), format: form.elements.format.value };
    const results = form.elements.results.files[0];
    if (results) {
      body.results = { kind: form.elements.results_kind.value, filename: results.name, content: await results.text() };
    }
    if (form.elements.name.value.trim()) body.name = form.elements.name.value.trim();
    if (form.elements.scale.value.trim()) body.scale = form.elements.scale.value.trim();
    say("importing\u2026");
    try {
      const created = await call("POST", "/api/cases", body);
      window.location.assign(`/cases/${encodeURIComponent(created.id)}`);
    } catch (error) {
      say(error.message, "error");
    }
  });
}

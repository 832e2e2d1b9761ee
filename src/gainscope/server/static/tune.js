// The tune page: set the try's knobs and template, rerun the case (a job, throttled, with progress).
import { el, fmt, runJob, say } from "./api.js";

function knobValue(text) {
  const trimmed = text.trim();
  if (trimmed === "true" || trimmed === "false") return trimmed === "true";
  const number = Number(trimmed);
  return trimmed !== "" && Number.isFinite(number) ? number : trimmed;
}

export function setupTune() {
  const form = document.getElementById("rerun");
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const knobs = {};
    for (const input of form.querySelectorAll("input[data-knob]")) knobs[input.dataset.knob] = knobValue(input.value);
    const body = { knobs, concurrency: Number.parseInt(form.elements.concurrency.value, 10) || 4 };
    const template = form.elements.template.value.trim();
    if (template) {
      try {
        body.template = JSON.parse(template);
      } catch (error) {
        say(`the template overrides are not JSON: ${error.message}`, "error");
        return;
      }
    } else {
      body.template = {};
    }
    if (form.elements.note.value.trim()) body.note = form.elements.note.value.trim();
    if (form.elements.qps.value.trim()) body.qps = Number(form.elements.qps.value);
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    say("rerunning\u2026");
    try {
      await runJob(`/api/cases/${encodeURIComponent(form.dataset.case)}/rerun`, body,
        document.getElementById("rerun-result"), "rerun", (r) => [
          `Snapshot ${r.snapshot}: ${Object.entries(r.scores || {}).map(([n, v]) => `${n} ${fmt(v)}`).join(", ")}. `,
          el("a", { href: `/cases/${encodeURIComponent(form.dataset.case)}` }, "See the queries")]);
    } catch (error) {
      say(error.message, "error");
    } finally {
      button.disabled = false;
    }
  });
}

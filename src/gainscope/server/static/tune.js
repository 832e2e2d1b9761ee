// The tune page: set the try's knobs and template, rerun the case (a job, throttled, with progress).
import { call, el, fmt, follow, say, showProgress } from "./api.js";

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
      const started = await call("POST", `/api/cases/${encodeURIComponent(form.dataset.case)}/rerun`, body);
      const job = await follow(started.job.id, showProgress);
      const out = document.getElementById("rerun-result");
      if (job.state === "done") {
        const scores = Object.entries(job.result.scores || {}).map(([name, value]) => `${name} ${fmt(value)}`);
        out.replaceChildren(el("p", { class: "ok" }, `Snapshot ${job.result.snapshot}: ${scores.join(", ")}. `,
          el("a", { href: `/cases/${encodeURIComponent(form.dataset.case)}` }, "See the queries")));
        say("rerun done", "ok");
      } else {
        out.replaceChildren(el("pre", { class: "error" }, job.message));
        say("the rerun failed", "error");
      }
    } catch (error) {
      say(error.message, "error");
    } finally {
      button.disabled = false;
    }
  });
}

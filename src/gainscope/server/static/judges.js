// The judges page: label the case's results with an LLM judge (a job with progress), then show the agreement.
import { call, el, follow, say, showProgress } from "./api.js";

export function setupJudges() {
  const form = document.getElementById("judge");
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {
      base_url: form.elements.base_url.value.trim(), model: form.elements.model.value.trim(),
      prompt: form.elements.prompt.value, scope: form.elements.scope.value, apply: form.elements.apply.checked,
    };
    if (form.elements.max_requests.value) body.max_requests = Number.parseInt(form.elements.max_requests.value, 10);
    say("labelling\u2026");
    try {
      const started = await call("POST", `/api/cases/${encodeURIComponent(form.dataset.case)}/judge`, body);
      const job = await follow(started.job.id, showProgress);
      const out = document.getElementById("judge-result");
      if (job.state === "done") {
        const r = job.result;
        out.replaceChildren(el("p", { class: "ok" }, `${r.labelled} of ${r.pairs} pairs labelled (${r.failed} failed, ` +
          `${r.applied} ratings added) by judge ${r.judge}. `, el("a", { href: window.location.pathname }, "Show the agreement")));
        say("labelling done", "ok");
      } else {
        out.replaceChildren(el("pre", { class: "error" }, job.message));
        say("the judge failed", "error");
      }
    } catch (error) {
      say(error.message, "error");
    }
  });
}

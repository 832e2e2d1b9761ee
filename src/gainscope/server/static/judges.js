// The judges page: label the case's results with an LLM judge (a job with progress), then show the agreement.
import { el, runJob, say } from "./api.js";

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
      await runJob(`/api/cases/${encodeURIComponent(form.dataset.case)}/judge`, body,
        document.getElementById("judge-result"), "labelling", (r) => [
          `${r.labelled} of ${r.pairs} pairs labelled (${r.failed} failed, ${r.applied} ratings added) by judge ` +
          `${r.judge}. `, el("a", { href: window.location.pathname }, "Show the agreement")]);
    } catch (error) {
      say(error.message, "error");
    }
  });
}

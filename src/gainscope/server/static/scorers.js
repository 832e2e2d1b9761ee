// The scorers page: write a JavaScript (Quepid's scorer API) or Python scorer, test it on one query, save it.
import { call, el, fmt, say } from "./api.js";

const EXAMPLES = {
  javascript: "// Quepid's scorer API: docs, bestDocs, docRating(i), hasDocRating(i), avgRating100(), ...\n" +
    "var k = 10;\nvar dcg = 0;\neachDoc(function (doc, i) {\n  dcg += (Math.pow(2, docRating(i) || 0) - 1) / Math.log2(i + 2);\n}, k);\n" +
    "console.log('DCG@' + k + ' = ' + dcg);\nsetScore(dcg);\n",
  python: "def score(q):\n    \"\"\"Share of the top 5 rated 2 or more.\"\"\"\n    top = [q.doc_rating(i) or 0 for i in range(min(5, q.num_returned))]\n" +
    "    return sum(1 for r in top if r >= 2) / 5\n",
};

async function fillQueries(caseSelect, querySelect) {
  if (!caseSelect.value) return;
  try {
    const detail = await call("GET", `/api/cases/${encodeURIComponent(caseSelect.value)}`);
    querySelect.replaceChildren(...detail.queries.map((q) => el("option", { value: q.id }, q.text)));
  } catch (error) {
    say(error.message, "error");
  }
}

function body(form) {
  const out = { language: form.elements.language.value, code: form.elements.code.value };
  const scale = form.elements.scale.value.trim();
  if (scale) out.scale = scale.includes(",") ? scale.split(",").map((v) => Number(v.trim())) : scale;
  return out;
}

export function setupScorers() {
  const form = document.getElementById("scorer-editor");
  if (!form) return;
  const code = form.elements.code;
  if (!code.value.trim()) code.value = EXAMPLES[form.elements.language.value];
  form.elements.language.addEventListener("change", () => {
    if (!code.value.trim() || Object.values(EXAMPLES).includes(code.value)) code.value = EXAMPLES[form.elements.language.value];
  });
  code.addEventListener("keydown", (event) => {
    if (event.key !== "Tab" || event.shiftKey) return;
    event.preventDefault();
    const start = code.selectionStart;
    code.setRangeText("  ", start, code.selectionEnd, "end");
  });
  const caseSelect = document.getElementById("test-case");
  const querySelect = document.getElementById("test-query");
  caseSelect.addEventListener("change", () => fillQueries(caseSelect, querySelect));
  fillQueries(caseSelect, querySelect);
  document.getElementById("test").addEventListener("click", async () => {
    say("running the scorer\u2026");
    try {
      const answer = await call("POST", "/api/scorers/test", {
        ...body(form), name: form.elements.name.value.trim() || "ad hoc scorer", case: caseSelect.value,
        query_id: querySelect.value,
      });
      document.getElementById("test-result").hidden = false;
      const value = document.getElementById("test-value");
      value.textContent = fmt(answer.value);
      value.dataset.value = answer.value === null ? "" : String(answer.value);
      document.getElementById("test-status").textContent = `${answer.status}${answer.reason ? `: ${answer.reason}` : ""}` +
        ` (query ${answer.query})`;
      document.getElementById("test-logs").textContent = answer.logs.join("\n");
      say("scored", "ok");
    } catch (error) {
      document.getElementById("test-result").hidden = false;
      document.getElementById("test-value").textContent = "error";
      document.getElementById("test-status").textContent = "";
      document.getElementById("test-logs").textContent = error.message;
      say("the scorer failed", "error");
    }
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const name = form.elements.name.value.trim();
    try {
      await call("PUT", `/api/scorers/${encodeURIComponent(name)}`, body(form));
      say(`saved ${name}`, "ok");
      window.location.assign(`/scorers?name=${encodeURIComponent(name)}`);
    } catch (error) {
      say(error.message, "error");
    }
  });
  for (const button of document.querySelectorAll("button.delete-scorer")) {
    button.addEventListener("click", async () => {
      try {
        await call("DELETE", `/api/scorers/${encodeURIComponent(button.dataset.name)}`);
        window.location.assign("/scorers");
      } catch (error) {
        say(error.message, "error");
      }
    });
  }
}

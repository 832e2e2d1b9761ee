// The query page: rate documents with the keyboard (digits for grades, j/k or the arrows to move, u to remove)
// or the mouse; every rating goes to PUT /api/cases/{case}/ratings and the scores it answers replace the shown
// ones at once. Also: find and rate documents the engine did not return, and the score explained position by
// position.
import { author, band, call, el, fmt, gradeKeys, notForUs, say, setAuthor, setBand } from "./api.js";

let items = [];
let current = -1;
let busy = Promise.resolve();

function root() {
  return document.getElementById("query");
}

function collect() {
  items = Array.from(document.querySelectorAll("li.doc"));
}

function select(index) {
  if (!items.length) return;
  const next = Math.max(0, Math.min(items.length - 1, index));
  if (current >= 0 && items[current]) items[current].classList.remove("selected");
  current = next;
  const item = items[current];
  item.classList.add("selected");
  item.scrollIntoView({ block: "nearest" });
}

function showRating(item, rating, source, who) {
  item.dataset.rating = rating === null ? "" : String(rating);
  item.classList.toggle("rated", rating !== null);
  for (const button of item.querySelectorAll("button.grade")) {
    button.classList.toggle("active", rating !== null && button.dataset.grade !== "" &&
      Number(button.dataset.grade) === Number(rating));
  }
  const provenance = item.querySelector(".provenance");
  if (provenance) {
    provenance.textContent = rating === null ? "unrated" : `rated ${rating} by ${who || source} \u00b7 just now`;
  }
}

function showScores(scores) {
  for (const [scorer, s] of Object.entries(scores)) {
    const box = document.querySelector(`#query-scores [data-scorer="${CSS.escape(scorer)}"]`);
    if (!box) continue;
    const value = box.querySelector(".query-value");
    const q = s.query || {};
    value.dataset.value = q.value === null || q.value === undefined ? "" : String(q.value);
    value.dataset.status = q.status || "";
    value.textContent = q.status === "zsr" ? "zsr" : q.status === "unrated" ? "--" : fmt(q.value);
    value.title = q.reason || "";
    setBand(box, q.value);
    const caseValue = box.querySelector(".case-value");
    caseValue.dataset.value = s.case === null || s.case === undefined ? "" : String(s.case);
    caseValue.textContent = `case ${fmt(s.case)}`;
  }
}

/** The scores of the snapshot shown (the rating answer holds those of the results in force), as the rating
 * answer gives them: ``{scorer: {query, case}}``. */
async function snapshotScores(data) {
  const detail = await call("GET", `/api/cases/${encodeURIComponent(data.case)}/queries/` +
    `${encodeURIComponent(data.query)}?snapshot=${encodeURIComponent(data.snapshot)}`);
  const out = {};
  for (const [scorer, q] of Object.entries(detail.scores)) {
    out[scorer] = { query: q, case: (detail.case_scores[scorer] || {}).score ?? null };
  }
  return out;
}

/** Rate the document of ``item`` (null removes its rating). Ratings are sent one after the other, in order. */
function rate(item, rating) {
  const data = root().dataset;
  const doc = item.dataset.doc;
  busy = busy.then(async () => {
    try {
      const answer = await call("PUT", `/api/cases/${encodeURIComponent(data.case)}/ratings`, {
        query_id: data.query, doc, rating, author: author() || undefined,
      });
      showRating(item, answer.rating, "human", author());
      const scores = data.snapshot ? await snapshotScores(data) : answer.scores;
      showScores(scores);
      const first = Object.entries(scores)[0];
      const was = answer.previous === null ? "unrated" : answer.previous;
      say(`${doc}: ${answer.rating === null ? "rating removed" : answer.rating} (was ${was})` +
        (first ? ` \u2014 ${first[0]} ${fmt(first[1].query.value)}, case ${fmt(first[1].case)}` : ""), "ok");
    } catch (error) {
      say(error.message, "error");
    }
  });
  return busy;
}

function onKey(event, keys) {
  if (notForUs(event)) return;
  const key = event.key;
  if (key === "j" || key === "ArrowDown") {
    select(current + 1);
  } else if (key === "k" || key === "ArrowUp") {
    select(current - 1);
  } else if (keys.has(key) && current >= 0) {
    rate(items[current], keys.get(key));
  } else if (key === "u" && current >= 0) {
    rate(items[current], null);
  } else {
    return;
  }
  event.preventDefault();
}

function onClick(event) {
  const button = event.target.closest("button.grade");
  if (!button) return;
  const item = button.closest("li.doc");
  select(items.indexOf(item));
  rate(item, button.dataset.grade === "" ? null : Number(button.dataset.grade));
}

function docItem(hit, keys) {
  const grades = el("span", { class: "grades", role: "group", "aria-label": "rating" });
  for (const [key, value] of keys) {
    grades.append(el("button", { type: "button", class: "grade", "data-grade": value, title: key ? `key ${key}` : "" },
      String(value)));
  }
  grades.append(el("button", { type: "button", class: "grade clear", "data-grade": "", title: "remove the rating" },
    "\u00d7"));
  const item = el("li", { class: "doc", "data-doc": hit.doc },
    el("span", { class: "rank" }, hit.rank),
    grades,
    el("div", { class: "doc-main" },
      hit.title ? el("span", { class: "title" }, hit.title) : null, " ",
      el("code", { class: hit.title ? "doc-id" : "doc-id alone" }, hit.doc), " ",
      el("span", { class: "provenance muted" }, hit.returned ? "returned" : "not returned")));
  showRating(item, hit.rating === undefined ? null : hit.rating, "", "");
  const provenance = item.querySelector(".provenance");
  provenance.textContent = (hit.returned ? "returned" : "not returned") +
    (hit.rating === null || hit.rating === undefined ? ", unrated" : `, rated ${hit.rating}`);
  return item;
}

function setupFind(keys) {
  const form = document.getElementById("find");
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = root().dataset;
    say("searching\u2026");
    try {
      const answer = await call("POST", `/api/cases/${encodeURIComponent(data.case)}/search`, {
        q: form.elements.q.value, query_id: data.query, top: 20,
      });
      const list = document.getElementById("found");
      list.replaceChildren(...answer.hits.map((hit) => docItem(hit, keys)));
      collect();
      say(`${answer.hits.length} documents (of ${answer.total ?? "?"} found)`, "ok");
    } catch (error) {
      say(error.message, "error");
    }
  });
}

function setupExplain() {
  const form = document.getElementById("explain");
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = root().dataset;
    const scorer = form.elements.scorer.value;
    try {
      const answer = await call("GET", `/api/cases/${encodeURIComponent(data.case)}/queries/` +
        `${encodeURIComponent(data.query)}/explain?scorer=${encodeURIComponent(scorer)}` +
        (data.snapshot ? `&snapshot=${encodeURIComponent(data.snapshot)}` : ""));
      const table = document.getElementById("explanation");
      const rows = answer.positions.map((p) => el("tr", {},
        el("td", { class: "num" }, p.rank),
        el("td", {}, el("code", {}, p.doc)),
        el("td", { class: "num" }, p.rating === null ? "unrated" : p.rating),
        el("td", { class: `num ${band(p.score)}`, "data-value": p.score ?? "" }, fmt(p.score)),
        el("td", { class: "num" }, p.change === null ? "" : (p.change >= 0 ? "+" : "") + Number(p.change).toFixed(3))));
      table.tBodies[0].replaceChildren(...rows);
      document.getElementById("explanation-wrap").hidden = false;
      say(`${scorer}: ${fmt(answer.score)} for the whole list`, "ok");
    } catch (error) {
      say(error.message, "error");
    }
  });
}

export function setupQuery() {
  const node = root();
  if (!node) return;
  const keys = JSON.parse(node.dataset.keys);
  collect();
  if (items.length) select(0);
  document.addEventListener("keydown", (event) => onKey(event, gradeKeys(root())));
  document.addEventListener("click", onClick);
  const who = document.getElementById("author");
  if (who) {
    who.value = author();
    who.addEventListener("change", () => setAuthor(who.value.trim()));
  }
  setupFind(keys);
  setupExplain();
}

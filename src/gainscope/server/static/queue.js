// The rating queue: one (query, document) pair at a time, in the order of the queue's pairs file. Keys: the digits
// of the case's scale rate and move on, s skips (the pair comes back when the others are rated), u undoes the last
// rating or skip, the left and right arrows go to the previous and next pair. Every action is a call to
// /api/cases/{case}/queues/{queue}/...; the state it answers (counts, the pair to show, the scores the rating
// moved) is what the page shows, so a reload -- or another day -- resumes where the person stopped. The root's
// data-acted counts the actions answered (a test waits for it).
// The queues page: add a queue from a pairs file (read in the browser, sent as text).
import { author, call, fmt, gradeKeys, notForUs, say, setAuthor, setBand } from "./api.js";

let state = null;
let busy = Promise.resolve();

function root() {
  return document.getElementById("queue");
}

function base() {
  const data = root().dataset;
  return `/api/cases/${encodeURIComponent(data.case)}/queues/${encodeURIComponent(data.queue)}`;
}

function text(id, value) {
  const node = document.getElementById(id);
  node.textContent = value === null || value === undefined ? "" : String(value);
  return node;
}

function when(at) {
  return (at || "").slice(0, 19).replace("T", " ");
}

/** Show ``next`` (the state an API call answered): the counts, the pair (or the end of the queue). */
function show(next) {
  state = next;
  const q = state.queue;
  const item = state.item;
  const bar = document.getElementById("queue-bar");
  bar.max = Math.max(q.total, 1);
  bar.value = q.rated;
  text("queue-counts", `${item ? `pair ${item.position + 1} of ${q.total}` : `${q.total} pairs`} \u00b7 ` +
    `${q.rated} rated \u00b7 ${q.remaining} remaining` + (q.skipped ? ` (${q.skipped} skipped)` : ""));
  root().dataset.position = String(q.position);
  const pair = document.getElementById("pair");
  document.getElementById("queue-done").hidden = item !== null;
  pair.hidden = item === null;
  if (!item) return;
  pair.classList.toggle("skipped", item.skipped && !item.rated);
  text("pair-where", `query ${item.qid}` + (item.rank ? ` \u00b7 rank ${item.rank} in the results in force` :
    " \u00b7 not in the results in force"));
  text("pair-query", item.query);
  text("pair-title", item.title);
  const doc = text("pair-doc", item.doc);
  doc.className = item.title ? "doc-id" : "doc-id alone";
  const fields = document.getElementById("pair-fields");
  fields.replaceChildren();
  for (const [name, value] of Object.entries(item.fields)) {
    const dt = document.createElement("dt");
    dt.textContent = name;
    const dd = document.createElement("dd");
    dd.textContent = value === null ? "" : value;
    fields.append(dt, dd);
  }
  document.getElementById("pair-unknown").hidden = item.known;
  for (const button of document.querySelectorAll("#pair-grades button.grade")) {
    button.classList.toggle("active", item.rating !== null && Number(button.dataset.grade) === Number(item.rating));
  }
  text("pair-provenance", item.rating === null ? (item.skipped ? "skipped, unrated" : "unrated") :
    `rated ${item.rating} by ${item.author || item.source} \u00b7 ${when(item.rated_at)}` +
    (item.rated ? "" : " (an LLM label: rate it to confirm or correct it)"));
}

function showScores(scores, query) {
  for (const [scorer, s] of Object.entries(scores || {})) {
    const box = document.querySelector(`#queue-scores [data-scorer="${CSS.escape(scorer)}"]`);
    if (!box) continue;
    const value = box.querySelector(".value");
    value.dataset.value = s.case === null || s.case === undefined ? "" : String(s.case);
    value.textContent = fmt(s.case);
    setBand(box, s.case);
    const q = s.query || {};
    const small = box.querySelector(".query-value");
    small.dataset.value = q.value === null || q.value === undefined ? "" : String(q.value);
    small.textContent = `${query}: ${q.status === "unrated" ? "--" : fmt(q.value)}`;
  }
}

/** Send one action (actions go one after the other, in order) and show the state it answers. */
function act(method, path, body, describe) {
  busy = busy.then(async () => {
    try {
      const answer = await call(method, `${base()}${path}`, body);
      show(answer);
      if (answer.scores) showScores(answer.scores, (answer.rated || answer.undone || {}).query || "");
      if (describe) say(describe(answer), "ok");
    } catch (error) {
      say(error.message, "error");
    }
    root().dataset.acted = String(Number(root().dataset.acted || "0") + 1);
  });
  return busy;
}

function rate(rating) {
  if (!state.item) return;
  act("POST", "/rate", { position: state.item.position, rating, author: author() || undefined }, (a) =>
    `${a.rated.doc}: ${a.rated.rating}` + (a.rated.previous === null ? "" : ` (was ${a.rated.previous})`));
}

function skip() {
  if (!state.item) return;
  act("POST", "/skip", { position: state.item.position }, (a) => `${a.skipped.doc}: skipped, it comes back later`);
}

function undo() {
  act("POST", "/undo", { author: author() || undefined }, (a) =>
    `undone: the ${a.undone.action === "rate" ? "rating" : "skip"} of ${a.undone.doc}`);
}

function move(step) {
  const from = state.item ? state.item.position : state.queue.total;
  const to = Math.max(0, Math.min(state.queue.total - 1, from + step));
  if (state.item && to === state.item.position) return;
  act("PUT", "/position", { position: to }, null);
}

function onKey(event, keys) {
  if (notForUs(event)) return;
  const key = event.key;
  if (keys.has(key)) {
    rate(keys.get(key));
  } else if (key === "s") {
    skip();
  } else if (key === "u") {
    undo();
  } else if (key === "ArrowLeft") {
    move(-1);
  } else if (key === "ArrowRight") {
    move(1);
  } else {
    return;
  }
  event.preventDefault();
}

export function setupQueue() {
  const node = root();
  if (!node) return;
  show(JSON.parse(node.dataset.state));
  const keys = gradeKeys(root());
  if (document.body.dataset.writable === "yes") {
    document.addEventListener("keydown", (event) => onKey(event, keys));
    document.getElementById("pair-grades").addEventListener("click", (event) => {
      const button = event.target.closest("button");
      if (!button) return;
      if (button.id === "pair-skip") skip();
      else if (button.id === "pair-undo") undo();
      else if (button.dataset.grade !== undefined) rate(Number(button.dataset.grade));
    });
  } else {
    for (const button of document.querySelectorAll("#pair-grades button")) button.disabled = true;
  }
  const who = document.getElementById("author");
  who.value = author();
  who.addEventListener("change", () => setAuthor(who.value.trim()));
}

export function setupQueues() {
  const form = document.getElementById("add-queue");
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const file = form.elements.file.files[0];
    if (!file) return;
    const body = { filename: file.name, content: await file.text() };
    if (form.elements.name.value.trim()) body.name = form.elements.name.value.trim();
    say("adding\u2026");
    try {
      const created = await call("POST", `/api/cases/${encodeURIComponent(form.dataset.case)}/queues`, body);
      const where = `/cases/${encodeURIComponent(form.dataset.case)}/queues/${encodeURIComponent(created.id)}`;
      window.location.assign(where);
    } catch (error) {
      say(error.message, "error");
    }
  });
}

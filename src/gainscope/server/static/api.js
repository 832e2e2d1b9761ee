// What every page's script shares: calls to the JSON API (with the workspace token), messages, DOM helpers.
// Nothing here ever writes HTML from data: elements are built with createElement and text with textContent.

/** The workspace token the page was given (only when the request held it), or "". */
export function token() {
  const meta = document.querySelector('meta[name="gainscope-token"]');
  return meta ? meta.content : "";
}

/** The name ratings are recorded under (remembered in this browser). */
export function author() {
  try {
    return localStorage.getItem("gainscope-author") || "";
  } catch {
    return "";
  }
}

export function setAuthor(name) {
  try {
    localStorage.setItem("gainscope-author", name);
  } catch {
    /* storage refused: the name is simply not remembered */
  }
}

/** Call the API: resolves to the answer's JSON, rejects with an Error carrying the server's message. */
export async function call(method, path, body) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const secret = token();
  if (secret) headers["X-Gainscope-Token"] = secret;
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = { error: text };
  }
  if (!response.ok) {
    throw new Error((data && data.error) || `${response.status} ${response.statusText}`);
  }
  return data;
}

/** Show a message in the header's status line ("info", "ok" or "error"). */
export function say(message, kind = "info") {
  const status = document.getElementById("status");
  if (!status) return;
  status.textContent = message;
  status.className = kind;
}

/** An element with attributes and children (strings become text nodes). */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** A score for display: 3 decimals, an en dash for none. */
export function fmt(value) {
  return value === null || value === undefined || Number.isNaN(value) ? "\u2013" : Number(value).toFixed(3);
}

/** The colour band of a score in [0, 1]: s0 (red) .. s4 (green); "" outside. */
export function band(value) {
  if (value === null || value === undefined || value < 0 || value > 1) return "";
  return `s${Math.min(4, Math.floor(value * 5))}`;
}

/** Replace a class of the s0..s4 family. */
export function setBand(node, value) {
  for (const c of ["s0", "s1", "s2", "s3", "s4"]) node.classList.remove(c);
  const b = band(value);
  if (b) node.classList.add(b);
}

/** Poll a job until it ends; onProgress(job) after every answer. Resolves to the ended job. */
export async function follow(jobId, onProgress) {
  for (;;) {
    const job = await call("GET", `/api/jobs/${encodeURIComponent(jobId)}`);
    onProgress(job);
    if (job.state !== "running") return job;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Show a job's progress in the page's #progress block. */
export function showProgress(job) {
  const block = document.getElementById("progress");
  const bar = document.getElementById("progress-bar");
  const text = document.getElementById("progress-text");
  if (!block || !bar || !text) return;
  block.hidden = false;
  bar.max = Math.max(job.total, 1);
  bar.value = job.done;
  text.textContent = `${job.done} of ${job.total}` + (job.failed ? `, ${job.failed} failed` : "") +
    (job.state === "running" ? "" : ` \u2014 ${job.state}`);
}

/**
 * Start a job with POST ``path`` and follow it to its end, showing its progress; then show ``done(result)`` (a list
 * of nodes) or the job's error in the element ``out``, and say ``what`` finished or failed. Resolves to the job.
 */
export async function runJob(path, body, out, what, done) {
  const started = await call("POST", path, body);
  const job = await follow(started.job.id, showProgress);
  if (job.state === "done") {
    out.replaceChildren(el("p", { class: "ok" }, ...done(job.result)));
    say(`${what} done`, "ok");
  } else {
    out.replaceChildren(el("pre", { class: "error" }, job.message));
    say(`the ${what} failed`, "error");
  }
  return job;
}

/** The keys that give grades, from an element's ``data-keys`` (``[[key, grade], ...]`` as the page wrote them):
 * a Map from key to grade (grades without a key are left out). */
export function gradeKeys(node) {
  const map = new Map();
  for (const [key, value] of JSON.parse(node.dataset.keys)) {
    if (key) map.set(key, value);
  }
  return map;
}

/** True when a key press is not the page's to handle: typed into a field, or with Alt, Ctrl or Meta. */
export function notForUs(event) {
  const target = event.target;
  if (target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return true;
  return event.altKey || event.ctrlKey || event.metaKey;
}

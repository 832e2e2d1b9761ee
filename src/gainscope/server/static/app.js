// The dashboard's one script entry (loaded with the page's nonce): set up the page named by <body data-page>.
import { setupCases } from "./cases.js";
import { setupForms } from "./forms.js";
import { setupJudges } from "./judges.js";
import { setupQuery } from "./query.js";
import { setupQueue, setupQueues } from "./queue.js";
import { setupScorers } from "./scorers.js";
import { setupTune } from "./tune.js";

const pages = {
  cases: setupCases, query: setupQuery, tune: setupTune, judges: setupJudges, scorers: setupScorers,
  queue: setupQueue, queues: setupQueues,
};

function start() {
  setupForms();
  const setup = pages[document.body.dataset.page];
  if (setup) setup();
  document.body.dataset.ready = "yes";
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", start);
} else {
  start();
}

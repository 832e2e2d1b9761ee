// Forms that call the API: <form data-api-method="PATCH" data-api-path="/api/..."> sends its named fields as
// JSON and reloads the page when the call succeeds. Field conventions: data-list (comma separated -> a list),
// data-int (an integer), data-optional (left out when empty; an empty engine removes it), checkboxes (true/false).
import { call, say } from "./api.js";

export function fields(form) {
  const body = {};
  for (const input of form.elements) {
    if (!input.name || input.disabled || input.type === "submit" || input.type === "button") continue;
    let value = input.type === "checkbox" ? input.checked : input.value;
    if (input.dataset.list !== undefined) {
      value = value.split(",").map((v) => v.trim()).filter((v) => v);
    } else if (input.dataset.int !== undefined) {
      value = Number.parseInt(value, 10);
    } else if (typeof value === "string" && value.trim() === "" && input.dataset.optional !== undefined) {
      value = null;
    }
    body[input.name] = value;
  }
  return body;
}

export function setupForms() {
  for (const form of document.querySelectorAll("form[data-api-path]")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      say("saving\u2026");
      try {
        await call(form.dataset.apiMethod || "POST", form.dataset.apiPath, fields(form));
        say("saved", "ok");
        window.location.reload();
      } catch (error) {
        say(error.message, "error");
      }
    });
  }
  if (document.body.dataset.writable !== "yes") {
    for (const node of document.querySelectorAll("[data-needs-token]")) {
      const controls = node.tagName === "FORM" ? node.querySelectorAll("button[type=submit]") : [node];
      for (const control of controls) {
        control.disabled = true;
        control.title = "read-only: open the URL gainscope serve printed";
      }
    }
  }
}

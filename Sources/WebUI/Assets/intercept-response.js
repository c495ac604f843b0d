// A held response's editor (mitmweb's intercepted response, Charles's and Proxyman's response
// breakpoints), at the top of the detail pane: the request went, the origin answered, and the
// client gets nothing until Resume sends the response on (as it came, or with its status, header
// fields and body edited) or Abort answers it 502. The keys are the request editor's: `a` clicks
// Resume, `x` aborts (app.js). Every value goes in as an input's value, never as markup.

import { h } from "./dom.js";
import { abortHeld, editorParts, submitEdit } from "./intercept.js";
import { parseHeaderLines } from "./resend-dialog.js";
import { store } from "./store.js";

/** The edit Resume sends: the parts that differ from what came, `{status, headers, body}`; throws
 * the reason when a part cannot be read (a status that is not a number, a header line without `:`). */
function editOf(held, fields, { status, headers }, bodyEdit) {
    const edit = {};
    const typed = status.value.trim();
    if (typed !== String(held.status)) {
        const number = Number(typed);
        if (!typed || !Number.isInteger(number)) {
            throw new Error(`status: "${typed}" is not a final response's status (200 to 599)`);
        }
        edit.status = number;
    }
    if (headers.value !== fields) edit.headers = parseHeaderLines(headers.value);
    return bodyEdit(edit);
}

/**
 * The editor of a held response (`GET /api/intercept/ID`, `phase` `response`): its status, header
 * fields (one `Name: value` a line) and body as text when it is UTF-8 (else it goes on unchanged,
 * as a held request's). Resume says "Resume edited" once anything differs, and sends only that.
 */
export function responseEditor(held) {
    const status = h("input", { id: "intercept-status", name: "status", type: "number", min: 200, max: 599,
        step: 1, inputmode: "numeric", autocomplete: "off", "aria-label": "Status", value: held.status });
    const { fields, headers, body, error, say, bodyView, bodyEdit } = editorParts(held, "Response ");
    const resume = h("button", { type: "button", id: "intercept-resume",
        title: "Resume (a): the client gets the response, with what changed" }, "Resume");
    const abort = h("button", { type: "button", id: "intercept-abort", class: "danger",
        title: "Abort (x): the client gets a 502, the origin's response is not delivered" }, "Abort");
    const parts = { status, headers };
    // The button says whether what goes on is what came.
    const relabel = () => {
        let edited;
        try {
            edited = Object.keys(editOf(held, fields, parts, bodyEdit)).length > 0;
        } catch {
            edited = true;
        }
        resume.textContent = edited ? "Resume edited" : "Resume";
    };
    for (const input of [status, headers, body]) input?.addEventListener("input", relabel);
    resume.addEventListener("click", async () => {
        let edit;
        try {
            edit = editOf(held, fields, parts, bodyEdit);
        } catch (problem) {
            say(problem.message);
            return;
        }
        await submitEdit(held, edit, resume, say);
    });
    abort.addEventListener("click", () => abortHeld(held.id, "response"));
    const since = Date.parse(held.since);
    return h("section", { class: "intercept-editor intercept-response", "aria-label": "Response held at a breakpoint" },
        h("h3", {}, "‖ Response held at a breakpoint"),
        h("p", { class: "muted intercept-facts" },
            `${held.http_version} · filter ${held.filter ?? store.intercept.filter ?? ""}`
            + (Number.isFinite(since) ? ` · held since ${new Date(since).toLocaleTimeString()}` : "")
            + ` · the origin answered ${held.method} ${held.url}; edit, then Resume (a) sends the client what`
            + " changed; Abort (x) answers the client 502"),
        h("div", { class: "intercept-line" },
            h("label", { class: "field" }, h("span", {}, "Status"), status)),
        h("label", { class: "field" }, h("span", {}, "Response header fields (one Name: value a line)"), headers),
        bodyView,
        error,
        h("div", { class: "dialog-buttons intercept-buttons" }, abort, resume));
}

// "New request": a request written from scratch, or pasted as a curl command, sent through the
// proxy (`POST /api/replay` without `replay_of`), as Proxyman's Compose, HTTP Toolkit's Send and
// Postman's "import cURL" do. Its flow arrives in the list like any other.

import { h, replaceChildren } from "./dom.js";
import { parseCurl } from "./curl-import.js";
import { headerLines, parseHeaderLines, sendFromDialog } from "./resend-dialog.js";

/** Opens the dialog, empty (GET, https://), or filled from `curl` (a command line) when given. */
export function openNewRequest(curl = "") {
    const dialog = document.getElementById("resend-dialog");
    if (!dialog || dialog.open) return;
    const field = (label, control) => h("label", { class: "field" }, h("span", {}, label), control);
    const pasted = h("textarea", {
        name: "curl", rows: 3, spellcheck: "false", "aria-label": "curl command",
        placeholder: "curl 'https://api.example.com/v1/items' -H 'Authorization: Bearer …' --data-raw '{\"a\":1}'",
    });
    const fill = h("button", { type: "button", id: "new-request-fill" }, "Fill from curl");
    const method = h("input", { name: "method", "aria-label": "Method", spellcheck: "false", required: true, value: "GET" });
    const url = h("input", { name: "url", "aria-label": "URL", spellcheck: "false", required: true,
        placeholder: "https://api.example.com/v1/items" });
    const headers = h("textarea", { name: "headers", rows: 6, "aria-label": "Headers", spellcheck: "false" });
    const body = h("textarea", { name: "body", rows: 6, "aria-label": "Body", spellcheck: "false" });
    const note = h("p", { class: "muted new-request-note", role: "status" });
    const error = h("p", { class: "error-text", role: "alert" });
    const send = h("button", { type: "submit", id: "new-request-send" }, "Send");
    const fillFrom = (text) => {
        error.textContent = "";
        note.textContent = "";
        try {
            const request = parseCurl(text);
            method.value = request.method;
            url.value = request.url;
            headers.value = headerLines(request.headers);
            body.value = request.body ?? "";
            if (request.ignored.length) {
                note.textContent = `Left out (they say how curl runs, not what it sends): ${request.ignored.join(" ")}`;
            }
            url.focus();
        } catch (failure) {
            error.textContent = `curl command: ${failure.message}`;
        }
    };
    fill.addEventListener("click", () => fillFrom(pasted.value));
    // Pasting a command fills the fields at once; typing waits for the button.
    pasted.addEventListener("paste", () => setTimeout(() => fillFrom(pasted.value), 0));
    const form = h("form", { class: "resend new-request" },
        h("h2", { id: "resend-title" }, "New request"),
        field("Paste a curl command (as a browser's “Copy as cURL (bash)” or API docs give it)", pasted),
        h("div", { class: "dialog-buttons" }, fill),
        h("div", { class: "resend-line" }, field("Method", method), field("URL", url)),
        field("Headers (one “Name: value” a line)", headers),
        field("Body (sent as UTF-8 text)", body), note, error,
        h("div", { class: "dialog-buttons" },
            h("button", { type: "button", on: { click: () => dialog.close() } }, "Cancel"), send));
    form.addEventListener("submit", async (event) => {
        event.preventDefault();
        error.textContent = "";
        await sendFromDialog(dialog, send, error, () => ({
            method: method.value.trim(), url: url.value.trim(), headers: parseHeaderLines(headers.value),
            ...(body.value ? { body: body.value } : {}),
        }));
    });
    replaceChildren(dialog, form);
    dialog.showModal();
    if (curl) {
        pasted.value = curl;
        fillFrom(curl);
    } else {
        pasted.focus();
    }
}

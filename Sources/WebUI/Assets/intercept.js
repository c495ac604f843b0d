// Breakpoints (mitmweb's intercept, Charles's and Proxyman's breakpoints): <intercept-box> in the
// top bar sets the filter and resumes everything held; `interceptEditor` is the held request's
// editor at the top of the detail pane (a held response's is in intercept-response.js); the
// actions below are what the keys `a`, `A` and `x` do. Which flows are held, and whether at their
// request or their response, comes from `GET /api/intercept` and the live `intercept` event (store.js).

import { api } from "./api.js";
import { h, setSafeAttribute } from "./dom.js";
import { liveEvents } from "./events.js";
import { formatDuration, formatSize } from "./format.js";
import { headerLines, parseHeaderLines } from "./resend-dialog.js";
import { store } from "./store.js";

/** Asks for the board; beside no proxy (404) breakpoints are not offered. */
async function loadBoard() {
    try {
        const board = await api.intercept();
        const held = board.held ?? [];
        store.setIntercept({ filter: board.filter ?? null, held: held.map((item) => item.id),
            responses: held.filter((item) => item.phase === "response").map((item) => item.id) });
    } catch (error) {
        if (error.status === 404) store.setIntercept({ available: false });
    }
}

liveEvents.addEventListener("intercept", (event) => {
    const { filter = null, held = [], responses = [] } = event.detail ?? {};
    store.setIntercept({ filter, held, responses });
});
// A stream that (re)opened may have missed changes: the board is asked again.
liveEvents.addEventListener("state", (event) => {
    if (event.detail === "live") loadBoard();
});
liveEvents.addEventListener("reset", () => loadBoard());

/** Takes `id` off the held list at once (the live event confirms it). */
function released(id) {
    const { filter, held, responses } = store.intercept;
    store.setIntercept({ filter, held: held.filter((other) => other !== id), responses });
}

/** `id`, or `the response of id` when its response is what is held: what the status line names. */
function heldName(id, phase = store.heldPhase(id)) {
    return phase === "response" ? `the response of ${id}` : id;
}

/**
 * Sends held request or response `id` on with `edit` (only the parts changed); resolves to true
 * when it went. A refused edit (400) throws its reason for the editor to show. `phase` is what the
 * page shows held (the editor's, else the list's): a request that went on meanwhile does not have
 * its response sent on instead (the server answers 404, and the board is asked again).
 */
export async function resumeHeld(id, edit, phase = store.heldPhase(id)) {
    const name = heldName(id, phase);
    try {
        await api.resumeHeld(id, edit, phase ?? undefined);
    } catch (error) {
        if (error.status === 400) throw error;
        store.notify(`could not resume ${name}: ${error.message}`, "error");
        if (error.status === 404) loadBoard();
        return false;
    }
    const parts = Object.keys(edit ?? {}).map((part) => (part === "body_base64" ? "body" : part));
    store.notify(parts.length ? `resumed ${name}, edited: ${parts.join(", ")}` : `resumed ${name}`);
    released(id);
    return true;
}

/**
 * Answers held request `id` with `answer` (`{status, headers, body}`) typed in the page, never
 * sending it upstream; resolves to true when it went. A refused answer (400) throws its reason.
 */
export async function respondHeld(id, answer) {
    try {
        await api.respondHeld(id, answer);
    } catch (error) {
        if (error.status === 400) throw error;
        store.notify(`could not answer ${id}: ${error.message}`, "error");
        if (error.status === 404) released(id);
        return false;
    }
    store.notify(`answered ${id} here with ${answer.status}: nothing was sent upstream`);
    released(id);
    return true;
}

/**
 * Aborts held request or response `id`: its client gets a 502 saying it was aborted here. `phase` is
 * what the page shows held (the editor's, else the list's), so that an abort meant for a request
 * that went on meanwhile does not abort its response (the server answers 404 then).
 */
export async function abortHeld(id, phase = store.heldPhase(id)) {
    const response = phase === "response";
    const name = heldName(id, phase);
    try {
        await api.abortHeld(id, phase ?? undefined);
        store.notify(`aborted ${name}: its client got a 502, `
            + (response ? "the origin's response was not delivered" : "nothing was sent"));
        released(id);
    } catch (error) {
        store.notify(`could not abort ${name}: ${error.message}`, "error");
        // What is held now (the flow's response, say) is asked again rather than guessed.
        loadBoard();
    }
}

/** Sends every held request and response on as it came. */
export async function resumeAllHeld() {
    try {
        const answer = await api.resumeAllHeld();
        store.notify(`resumed everything held as it came (${answer.resumed})`);
        store.setIntercept({ filter: store.intercept.filter, held: [] });
    } catch (error) {
        store.notify(`could not resume them: ${error.message}`, "error");
    }
}

/**
 * What a held request's and a held response's editors share: the header fields (one `Name: value`
 * a line), the body as text (decoded of its content codings and charset when the server offers
 * `body_decoded_text`, as mitmproxy's `message.text`; else when it is UTF-8; else null: it goes on
 * unchanged), the line under it (`bodyView`: its size and how it is shown, or why it is sent
 * unchanged), and the line that says why an edit was refused. `what` prefixes the labels
 * ("Response "). `bodyEdit(edit)` adds the body to `edit` when it was changed: `body_decoded`
 * for decoded text (the server codes it again), `body` otherwise.
 */
export function editorParts(held, what) {
    const fields = headerLines(held.headers);
    const headers = h("textarea", { id: "intercept-headers", name: "headers", spellcheck: "false",
        rows: Math.min(12, Math.max(3, held.headers.length + 1)),
        "aria-label": `${what}${what ? "header" : "Header"} fields, one Name: value a line` });
    headers.value = fields;
    const decoded = typeof held.body_decoded_text === "string";
    // A coded body that did not decode goes on as it came, whatever its bytes look like.
    const undecodable = !decoded && (held.content_encoding ?? []).length > 0;
    const shownText = decoded ? held.body_decoded_text : undecodable ? null : held.body_text;
    const isText = typeof shownText === "string";
    let body = null;
    if (isText) {
        body = h("textarea", { id: "intercept-body", name: "body", spellcheck: "false", rows: 8,
            "aria-label": `${what}${what ? "body" : "Body"}` });
        body.value = shownText;
    }
    const error = h("p", { id: "intercept-edit-error", class: "error-text", role: "alert", hidden: true });
    const say = (message) => {
        error.textContent = message;
        error.hidden = !message;
    };
    const label = `${what}${what ? "body" : "Body"}`;
    const bodyView = isText
        ? h("div", { class: "intercept-body-field" },
            h("label", { class: "field" },
                h("span", {}, decoded ? `${label} (${formatSize(held.body_size)}, ${formatSize(held.body_decoded_size)}`
                    + " decoded)" : `${label} (${formatSize(held.body_size)})`), body),
            decoded && held.body_shown
                ? h("p", { class: "muted intercept-coding", id: "intercept-coding" }, held.body_shown) : null)
        : h("p", { class: "muted intercept-binary" }, `binary body, ${held.body_size} bytes: sent unchanged`
            + (held.body_note ? ` (${held.body_note})` : ""));
    const bodyEdit = (edit) => {
        if (!body || body.value === shownText) return edit;
        edit[decoded ? "body_decoded" : "body"] = body.value;
        return edit;
    };
    return { fields, headers, body, isText, error, say, bodyView, bodyEdit };
}

/** Resumes `held` with `edit` from its editor: Resume disabled meanwhile, a refusal said by `say`. */
export async function submitEdit(held, edit, resume, say) {
    say("");
    resume.disabled = true;
    try {
        await resumeHeld(held.id, edit, held.phase);
    } catch (refused) {
        say(refused.message);
    } finally {
        resume.disabled = false;
    }
}

/**
 * The form "Respond…" opens under a held request's editor (HTTP Toolkit's "respond directly",
 * Charles's breakpoint response): a status, header fields (one `Name: value` a line) and a body
 * typed here; Send response answers the client with exactly them (`POST /api/intercept/ID/respond`)
 * and sends nothing upstream. A status that is not a number or a header line without a colon is
 * said before anything is sent, a 400's reason (a status outside 200 to 599, a body for a 204 or
 * 304, a name or value the wire cannot carry) after.
 */
function respondForm(held, say) {
    const status = h("input", { id: "intercept-respond-status", name: "respond-status", type: "number", min: 200,
        max: 599, step: 1, inputmode: "numeric", autocomplete: "off", "aria-label": "Response status", value: "200" });
    const headers = h("textarea", { id: "intercept-respond-headers", name: "respond-headers", spellcheck: "false",
        rows: 3, "aria-label": "Response header fields, one Name: value a line" });
    headers.value = "Content-Type: text/plain; charset=utf-8";
    const body = h("textarea", { id: "intercept-respond-body", name: "respond-body", spellcheck: "false", rows: 6,
        "aria-label": "Response body" });
    const send = h("button", { type: "button", id: "intercept-respond-send",
        title: "The client gets this response; the request is not sent upstream" }, "Send response");
    const cancel = h("button", { type: "button", id: "intercept-respond-cancel" }, "Cancel");
    const form = h("fieldset", { class: "intercept-respond", hidden: true },
        h("legend", {}, "Respond directly: the client gets this response, nothing is sent upstream"),
        h("div", { class: "intercept-line" }, h("label", { class: "field" }, h("span", {}, "Status"), status)),
        h("label", { class: "field" }, h("span", {}, "Response header fields (one Name: value a line)"), headers),
        h("label", { class: "field" }, h("span", {}, "Response body"), body),
        h("div", { class: "dialog-buttons" }, cancel, send));
    send.addEventListener("click", async () => {
        say("");
        const typed = status.value.trim();
        const number = Number(typed);
        if (!typed || !Number.isInteger(number)) {
            say(`status: "${typed}" is not a final response's status (200 to 599)`);
            return;
        }
        let fields;
        try {
            fields = parseHeaderLines(headers.value);
        } catch (problem) {
            say(problem.message);
            return;
        }
        send.disabled = true;
        try {
            await respondHeld(held.id, { status: number, headers: fields, body: body.value });
        } catch (refused) {
            say(refused.message);
        } finally {
            send.disabled = false;
        }
    });
    return { form, cancel, status };
}

/**
 * The editor of a held request (`GET /api/intercept/ID`): method, URL, header fields (one
 * `Name: value` a line) and the body as text when it is text; Resume sends only what changed.
 * Every value goes in as an input's value, never as markup.
 */
export function interceptEditor(held) {
    const method = h("input", { id: "intercept-method", name: "method", spellcheck: "false", autocomplete: "off",
        "aria-label": "Method", value: held.method });
    const url = h("input", { id: "intercept-url", name: "url", spellcheck: "false", autocomplete: "off",
        "aria-label": "URL", value: held.url });
    const { fields, headers, error, say, bodyView, bodyEdit } = editorParts(held, "");
    const resume = h("button", { type: "button", id: "intercept-resume", title: "Resume (a): sends what changed" },
        "Resume");
    const abort = h("button", { type: "button", id: "intercept-abort", class: "danger",
        title: "Abort (x): the client gets a 502, nothing is sent" }, "Abort");
    resume.addEventListener("click", async () => {
        const edit = {};
        if (method.value.trim() !== held.method) edit.method = method.value.trim();
        if (url.value.trim() !== held.url) edit.url = url.value.trim();
        if (headers.value !== fields) {
            try {
                edit.headers = parseHeaderLines(headers.value);
            } catch (problem) {
                say(problem.message);
                return;
            }
        }
        bodyEdit(edit);
        await submitEdit(held, edit, resume, say);
    });
    abort.addEventListener("click", () => abortHeld(held.id, "request"));
    const respond = respondForm(held, say);
    const opener = h("button", { type: "button", id: "intercept-respond", "aria-expanded": "false",
        title: "Answer the client with a response typed here, without sending the request upstream" }, "Respond…");
    const show = (open) => {
        respond.form.hidden = !open;
        setSafeAttribute(opener, "aria-expanded", String(open));
        if (open) respond.status.focus();
    };
    opener.addEventListener("click", () => show(respond.form.hidden));
    respond.cancel.addEventListener("click", () => show(false));
    const since = Date.parse(held.since);
    return h("section", { class: "intercept-editor", "aria-label": "Held at a breakpoint" },
        h("h3", {}, "‖ Held at a breakpoint"),
        h("p", { class: "muted intercept-facts" },
            `${held.http_version} · filter ${held.filter ?? store.intercept.filter ?? ""}`
            + (Number.isFinite(since) ? ` · held since ${new Date(since).toLocaleTimeString()}` : "")
            + " · edit, then Resume (a) sends what changed; Abort (x) answers the client 502"),
        h("div", { class: "intercept-line" },
            h("label", { class: "field" }, h("span", {}, "Method"), method),
            h("label", { class: "field" }, h("span", {}, "URL"), url)),
        h("label", { class: "field" }, h("span", {}, "Header fields (one Name: value a line)"), headers),
        bodyView,
        error,
        h("div", { class: "dialog-buttons intercept-buttons" }, abort, opener, resume),
        respond.form);
}

/**
 * What the flow's `intercept` record (or, `response` true, its `intercept_response`) says, for the
 * pane's facts: held how long, and what became of it.
 */
export function interceptFacts(intercept, response = false) {
    if (!intercept) return "";
    const held = `held ${formatDuration(intercept.paused_ms) || "0 ms"} at a breakpoint (${intercept.filter})`;
    const lost = response ? "the origin's response was not delivered" : "nothing was sent";
    switch (intercept.outcome) {
    case "resumed": {
        const edited = intercept.edited ?? [];
        const was = [intercept.original_method ? `the client sent ${intercept.original_method}` : "",
            intercept.original_url ? `the client asked for ${intercept.original_url}` : ""].filter(Boolean);
        return `${held}, resumed ${edited.length ? `edited: ${edited.join(", ")}` : "as it came"}`
            + (Number.isInteger(intercept.original_status) ? ` (was ${intercept.original_status})` : "")
            + (was.length ? `; ${was.join(", ")}` : "");
    }
    case "aborted": return `${held}, aborted: the client got a 502, ${lost}`;
    case "answered": return `${held}, answered here: ${intercept.answered_status}`;
    case "client_gone": return `${held}; the client left before it was resumed`;
    case "stopped": return `${held}; DevProxy stopped: the client got a 502, ${lost}`;
    case "not_held": return `the filter ${intercept.filter} passed it, but it went on at once: ${intercept.note ?? ""}`;
    default: return `${held}, ${intercept.outcome}`;
    }
}

/** <intercept-box>: the Intercept filter (Enter sets it; the server's reason beside it when refused)
 * and, while any are held, "‖ N held · Resume all". Hidden beside no proxy. */
class InterceptBox extends HTMLElement {
    #input;
    #error;
    #resumeAll;

    connectedCallback() {
        if (this.#input) return;
        setSafeAttribute(this, "role", "group");
        setSafeAttribute(this, "aria-label", "Breakpoints");
        this.hidden = true;
        this.#input = h("input", {
            type: "search", id: "intercept-filter", name: "intercept", autocomplete: "off", spellcheck: "false",
            placeholder: "intercept: ~d api.example.com (& ~q requests, & ~s responses)",
            "aria-describedby": "intercept-error",
            title: "Hold the requests and the responses this filter passes, as mitmproxy does: it is asked of "
                + "the request, then of the response's head; & ~q holds requests only, & ~s responses only "
                + "(Enter sets it; empty clears it)",
        });
        this.#error = h("p", { id: "intercept-error", class: "filter-error", role: "alert", hidden: true });
        this.#resumeAll = h("button", { type: "button", id: "intercept-resume-all", hidden: true,
            title: "Resume every held request and response as it came (A)", on: { click: () => resumeAllHeld() } });
        this.append(h("label", { for: "intercept-filter", class: "intercept-label" }, "Intercept"), this.#input,
            this.#error, this.#resumeAll);
        this.#input.addEventListener("keydown", (event) => {
            if (event.key === "Enter") this.#set();
            else if (event.key === "Escape") {
                this.#input.value = store.intercept.filter ?? "";
                this.#say(null);
                this.#input.blur();
            }
        });
        store.addEventListener("intercept", () => this.#show());
        store.addEventListener("info", () => {
            if (store.info?.mode === "viewer") store.setIntercept({ available: false });
        });
        loadBoard();
    }

    #show() {
        const { available, filter, held } = store.intercept;
        this.hidden = !available;
        // The user's typing is left alone; otherwise the box shows the filter in force.
        if (document.activeElement !== this.#input) this.#input.value = filter ?? "";
        setSafeAttribute(this.#input, "aria-label",
            filter ? `Intercept filter, holding ${filter}` : "Intercept filter, off");
        this.#input.classList.toggle("active", Boolean(filter));
        this.#resumeAll.hidden = held.length === 0;
        this.#resumeAll.textContent = `‖ ${held.length} held · Resume all`;
    }

    async #set() {
        const text = this.#input.value.trim();
        try {
            const answer = await api.setInterceptFilter(text);
            this.#say(null);
            store.setIntercept({ filter: answer.filter ?? null, held: store.intercept.held,
                responses: store.intercept.responses });
            store.notify(answer.filter ? `intercepting ${answer.filter}` : "intercept off: nothing more is held");
        } catch (error) {
            this.#say(error.message);
        }
    }

    #say(message) {
        setSafeAttribute(this.#input, "aria-invalid", message ? "true" : false);
        this.#error.textContent = message ?? "";
        this.#error.hidden = !message;
    }
}

customElements.define("intercept-box", InterceptBox);

// A request or response body in the detail pane: fetched from the API (decoded), the first
// MiB only until "show all", and shown by type — JSON, XML and HTML pretty-printed and foldable
// (the body as sent one click away: "raw"), text as it is, images inline from a blob: URL, hex for
// the rest. Everything but images is fetched, formatted and kept by the format worker
// (line-view.js); the page only ever holds the lines in view.

import { api } from "./api.js";
import { copyBody } from "./clipboard.js";
import { apiLink, h, replaceChildren } from "./dom.js";
import { countOf, formatSize, headerValue, mediaType } from "./format.js";
import "./line-view.js";

/** Bodies up to this are shown whole; larger ones show this much first. */
export const FIRST_PART = 1024 * 1024;
/** Images larger than this are offered as a download, not decoded in the page. */
const IMAGE_LIMIT = 32 * 1024 * 1024;

/** Formats shown pretty-printed, with the text as sent a click away. */
const PRETTY = new Set(["json", "xml", "html"]);

/** How to show a body of this media type: "json", "xml", "html", "text", "image", "binary" or "sniff". */
export function viewKind(type) {
    if (!type) return "sniff";
    // gRPC and gRPC-Web bodies are framed, `+json` ones too; the gRPC view shows their messages.
    if (type.startsWith("application/grpc")) return "binary";
    // `text/json` is an old spelling servers still send.
    if (type === "application/json" || type === "text/json" || type.endsWith("+json") || type === "application/x-ndjson") {
        return "json";
    }
    // SVG is shown as its source, never drawn: it can hold script and fetch.
    if (type === "image/svg+xml") return "xml";
    if (type.startsWith("image/")) return "image";
    if (type === "text/html" || type === "application/xhtml+xml") return "html";
    if (type.endsWith("+xml") || type.endsWith("/xml")) return "xml";
    if (type.startsWith("text/") ||
        type.includes("javascript") || type === "application/x-www-form-urlencoded" ||
        type === "application/graphql") return "text";
    if (type.startsWith("application/grpc") || type === "application/octet-stream" ||
        type.startsWith("application/x-protobuf") || type === "application/protobuf") return "binary";
    return "sniff";
}

/**
 * The element for one side's body of flow `id`. `message` is the flow's `request` or
 * `response` record (headers and the logged `body`). `signal` aborts when the pane moves on.
 */
export function bodyView(id, side, message, signal) {
    const logged = message?.body;
    const container = h("section", { class: "body", "aria-label": `${side} body` });
    if (!logged || logged.size === 0) {
        container.append(h("p", { class: "muted" }, "no body"));
        return container;
    }
    const type = mediaType(headerValue(message.headers, "content-type"));
    const facts = [`${formatSize(logged.size)} on the wire`];
    if (logged.decoded) facts.push(`decoded from ${logged.decoded}`);
    if (logged.charset) facts.push(`text read as ${logged.charset}`);
    if (logged.decode_error) facts.push(`not decoded: ${logged.decode_error}`);
    if (type) facts.push(type);
    const noteLine = h("p", { class: "body-note", role: "status" });
    const actions = h("div", { class: "body-actions" },
        apiLink(api.paths.body(id, side, true), "download", { download: `${side}-body-${id}`, class: "button" }),
        // Decoded differs from the bytes only for a content-coding undone or a charset read as
        // text: beside a plain body it was a second button giving the same file.
        logged.decoded || logged.charset ? apiLink(api.paths.body(id, side, false), "download decoded",
            { download: `${side}-body-${id}-decoded`, class: "button" }) : null,
        // Text goes to the clipboard as the pane reads it; an image or bytes only as a download.
        ["image", "binary"].includes(viewKind(type)) ? null : h("button", {
            type: "button", class: "body-copy", title: `Copy the ${side} body as text`,
            on: { click: () => copyBody(id, side, logged) },
        }, "copy"));
    const content = h("div", { class: "body-content" }, h("p", { class: "muted" }, "loading…"));
    container.append(h("p", { class: "body-facts" }, facts.join(" · ")));
    if (isForm(type)) {
        // The fields first, as the form was filled in; the bytes below for the rest.
        const form = h("div", { class: "form-fields" }, h("p", { class: "muted" }, "reading the form…"));
        container.append(form);
        loadForm(id, side, form, signal);
    } else if (isProtobuf(type)) {
        const decoded = h("div", { class: "protobuf" }, h("p", { class: "muted" }, "decoding…"));
        container.append(decoded);
        loadProtobuf(id, side, decoded, signal);
    } else if (type === "text/event-stream") {
        // Each event as EventSource hands it to the page; the text below for the rest.
        const events = h("div", { class: "event-stream" }, h("p", { class: "muted" }, "reading the events…"));
        container.append(events);
        loadEvents(id, side, events, signal);
    }
    container.append(actions, noteLine, content);
    load(id, side, type, logged, { content, noteLine, actions, raw: false }, signal, false);
    return container;
}

/** Whether a body of this media type is a form the server reads into fields. */
export function isForm(type) {
    return type === "application/x-www-form-urlencoded" || type === "multipart/form-data";
}

/** Whether a body of this media type is protobuf outside gRPC (the server's `isProtobuf`). */
export function isProtobuf(type) {
    if (!type) return false;
    return ["application/x-protobuf", "application/protobuf", "application/vnd.google.protobuf",
        "application/x-google-protobuf", "application/x-protobuffer"].includes(type)
        || type.endsWith("+protobuf") || type.endsWith("+proto");
}

/** Fills `container` with the body decoded as protobuf without a schema, in `protoc --decode_raw`'s layout. */
async function loadProtobuf(id, side, container, signal) {
    try {
        const answer = await api.protobuf(id, side, signal);
        if (signal.aborted) return;
        const lines = protobufLines(answer.decoded, 0);
        replaceChildren(container,
            h("p", { class: "caption" }, "Protobuf, decoded without a schema (field numbers, as protoc --decode_raw)"),
            h("pre", { class: "protobuf-text" }, lines.length ? lines.join("\n") : "(no fields)"),
            answer.complete ? null : h("p", { class: "muted" }, `the first ${formatSize(answer.read_bytes)} of the body`));
    } catch (error) {
        if (signal.aborted) return;
        replaceChildren(container, h("p", { class: "muted" }, `not decoded as protobuf: ${error.message}`));
    }
}

/** One decoded message as text lines: `N: value`, nested messages as `N { … }`. */
export function protobufLines(message, depth = 0) {
    const pad = "  ".repeat(depth);
    const lines = [];
    for (const field of message?.fields ?? []) {
        const nested = field.message ?? field.group;
        if (nested && field.string !== undefined) {
            // Bytes that read as text and parse as a message: the text first (short strings
            // often parse as messages), the message after.
            lines.push(`${pad}${field.number}: ${JSON.stringify(field.string)}`,
                `${pad}${field.number} { (the same bytes read as a message)`, ...protobufLines(nested, depth + 1), `${pad}}`);
        } else if (nested) {
            lines.push(`${pad}${field.number} {`, ...protobufLines(nested, depth + 1), `${pad}}`);
        } else if (field.string !== undefined) {
            lines.push(`${pad}${field.number}: ${JSON.stringify(field.string)}`);
        } else if (field.bytes !== undefined) {
            lines.push(`${pad}${field.number}: bytes ${field.bytes} (base64)`);
        } else if (field.varint !== undefined) {
            lines.push(`${pad}${field.number}: ${field.varint}${field.int !== undefined ? ` (int ${field.int})` : ""}`);
        } else if (field.fixed64 !== undefined) {
            lines.push(`${pad}${field.number}: ${hex(field.fixed64, 16)}${field.double !== undefined ? ` (double ${field.double})` : ""}`);
        } else if (field.fixed32 !== undefined) {
            lines.push(`${pad}${field.number}: ${hex(field.fixed32, 8)}${field.float !== undefined ? ` (float ${field.float})` : ""}`);
        }
    }
    if (message?.error) lines.push(`${pad}# ${message.error}`);
    return lines;
}

/** `0x` and `digits` hex digits of an unsigned integer given as a number or a decimal string. */
function hex(value, digits) {
    return `0x${BigInt(value).toString(16).padStart(digits, "0")}`;
}

/**
 * The events of a `text/event-stream` body as an EventSource dispatches them (HTML, "Interpreting
 * an event stream"): `{type, id, data, retry}` each; `data` lines joined with newlines, one space
 * after the colon dropped, comments (`:`) skipped; an event is dispatched at a blank line, so
 * the text after the last one (a stream cut short) is no event.
 */
export function eventStreamEvents(text) {
    const events = [];
    let data = [];
    let type = "";
    let lastID = "";
    let retry;
    for (const line of text.replace(/^\uFEFF/, "").split(/\r\n|\r|\n/)) {
        if (line === "") {
            if (data.length) events.push({ type: type || "message", id: lastID, data: data.join("\n"), retry });
            data = [];
            type = "";
            retry = undefined;
            continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "data") data.push(value);
        else if (field === "event") type = value;
        else if (field === "id" && !value.includes("\0")) lastID = value;
        else if (field === "retry" && /^[0-9]+$/.test(value)) retry = Number(value);
    }
    return events;
}

/** The most server-sent events listed as rows (a table of tens of thousands would stall the page). */
const EVENT_ROWS = 2000;

/** Fills `container` with a table of the server-sent events in the body's first 1 MiB. */
async function loadEvents(id, side, container, signal) {
    try {
        const response = await api.body(id, side, { signal });
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let text = "";
        let bytes = 0;
        let cut = false;
        for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            bytes += value.length;
            text += decoder.decode(value, { stream: true });
            if (bytes >= FIRST_PART) {
                cut = true;
                reader.cancel();
                break;
            }
        }
        if (signal.aborted) return;
        const events = eventStreamEvents(text);
        replaceChildren(container, ...eventsTable(events, `Server-sent events (${events.length}${cut ? " in the first 1 MiB" : ""})`));
    } catch (error) {
        if (signal.aborted) return;
        replaceChildren(container, h("p", { class: "muted" }, `the events could not be read: ${error.message}`));
    }
}

/**
 * A table of server-sent events (each numbered from the stream's first) and, past `EVENT_ROWS`,
 * a note: a finished stream lists its first events (the text below has the rest), a running one
 * (`latest`) its latest, since those are the ones arriving.
 */
export function eventsTable(events, caption, latest = false) {
    const first = latest ? Math.max(0, events.length - EVENT_ROWS) : 0;
    const rows = events.slice(first, first + EVENT_ROWS).map((event, index) => h("tr", {},
        h("td", {}, String(first + index + 1)), h("td", {}, event.type), h("td", { class: "data" }, event.id),
        h("td", { class: "data" }, h("div", {}, event.data,
            event.retry !== undefined ? h("span", { class: "muted" }, ` (retry ${event.retry} ms)`) : null))));
    const count = EVENT_ROWS.toLocaleString("en");
    return [
        h("table", { class: "messages events" },
            h("caption", {}, caption),
            h("thead", {}, h("tr", {}, ["#", "Event", "ID", "Data"].map((title) => h("th", { scope: "col" }, title)))),
            h("tbody", {}, rows)),
        events.length > EVENT_ROWS
            ? h("p", { class: "muted" }, latest ? `the latest ${count} events are listed`
                : `the first ${count} events are listed; the text below shows the rest`)
            : null,
    ];
}

/** Fills `container` with the form's fields: a table of name and value (files: name, type, size). */
async function loadForm(id, side, container, signal) {
    try {
        const form = await api.form(id, side, signal);
        if (signal.aborted) return;
        const rows = form.fields.map((field) => {
            let value;
            if (field.file_name != null || field.value == null) {
                const facts = [field.content_type, formatSize(field.size)].filter(Boolean).join(", ");
                value = h("span", { class: "form-file" },
                    field.file_name != null ? h("span", { class: "file-name" }, field.file_name) : "(binary)",
                    h("span", { class: "muted" }, ` ${facts}`));
            } else {
                value = h("span", { class: "form-value" }, field.value,
                    field.value_cut ? h("span", { class: "muted" }, ` … (${formatSize(field.size)})`) : "");
            }
            return h("tr", {}, h("th", { scope: "row" }, field.name),
                h("td", {}, value, field.cut ? h("span", { class: "muted" }, " (cut: the body goes on)") : ""));
        });
        const count = form.fields.length;
        const title = `${form.kind === "multipart/form-data" ? "Multipart form" : "Form"} (${countOf(count, "field", "fields")})`;
        replaceChildren(container, h("table", { class: "headers form" }, h("caption", {}, title), h("tbody", {}, rows)),
            form.complete ? null : h("p", { class: "muted" },
                `fields from the first ${formatSize(form.read_bytes)} of the body; the rest is not shown here`));
    } catch (error) {
        if (signal.aborted) return;
        replaceChildren(container, h("p", { class: "muted" }, `the form could not be read: ${error.message}`));
    }
}

async function load(id, side, type, logged, parts, signal, whole) {
    const { content, noteLine, actions } = parts;
    const kind = viewKind(type);
    try {
        if (kind === "image") {
            const response = await api.body(id, side, { signal });
            if (logged.size > IMAGE_LIMIT) {
                replaceChildren(content, h("p", { class: "muted" }, "a large image: use download"));
                return;
            }
            const blob = new Blob([await response.arrayBuffer()], { type });
            const url = URL.createObjectURL(blob);
            signal.addEventListener("abort", () => URL.revokeObjectURL(url));
            const image = h("img", { class: "body-image", alt: `${side} image, ${type}, ${formatSize(blob.size)}` });
            // Its size in pixels, as DevTools and Proxyman show it, or why nothing shows (a body
            // that does not decode drew an empty box and said nothing).
            const facts = h("p", { class: "muted image-facts" });
            image.addEventListener("load", () => {
                facts.textContent = `${image.naturalWidth} × ${image.naturalHeight} px`;
            }, { once: true });
            image.addEventListener("error", () => {
                facts.textContent = `the body does not decode as ${type}: download it to look at its bytes`;
            }, { once: true });
            image.src = url;
            replaceChildren(content, facts, image);
            return;
        }
        // The worker fetches, formats and keeps the body; the view asks it for the lines in view.
        let view = content.querySelector("line-view");
        if (!view) {
            view = document.createElement("line-view");
            replaceChildren(content, view);
            signal.addEventListener("abort", () => view.close());
        }
        // "raw": the body as sent, as text, instead of pretty-printed.
        const wanted = parts.raw ? "text" : kind === "binary" ? "hex" : kind;
        view.className = `body-lines kind-${wanted}`;
        const request = api.bodyRequest(id, side, whole ? undefined : FIRST_PART);
        const progress = (state) => {
            view.className = `body-lines kind-${state.kind}`;
            if (!state.done) {
                noteLine.textContent = `loading… ${formatSize(state.bytes)} of ${formatSize(logged.size)}`;
            }
        };
        const state = await view.open({ ...request, kind: wanted, onProgress: progress });
        if (signal.aborted) return;
        const notes = [];
        if (state.more) notes.push("showing the first 1 MiB");
        if (state.note) notes.push(state.note);
        if (state.storedCut) {
            // Said whenever the store cut it (`--store-body-limit`), not only when the flow log did.
            notes.push(`the session kept the first ${formatSize(state.storedCut.stored)} of ${formatSize(state.storedCut.size)}`);
        } else if (logged.truncated && whole && logged.size > state.bytes) {
            notes.push("the session kept only the first part of this body");
        }
        if (parts.raw) notes.push("as sent");
        notes.push(countOf(state.lines, "line", "lines"));
        noteLine.textContent = notes.join("; ");
        actions.querySelector(".show-all")?.remove();
        actions.querySelector(".body-raw")?.remove();
        // Broken JSON or XML is shown as sent already (the note says why): nothing to switch to.
        if (parts.raw || PRETTY.has(state.kind)) {
            actions.prepend(h("button", {
                type: "button", class: "body-raw", "aria-pressed": String(parts.raw),
                title: parts.raw ? "show the body pretty-printed" : "show the body as sent", on: {
                    click: (event) => {
                        event.currentTarget.disabled = true;
                        parts.raw = !parts.raw;
                        load(id, side, type, logged, parts, signal, whole);
                    },
                },
            }, parts.raw ? "pretty" : "raw"));
        }
        if (state.more) {
            actions.prepend(h("button", {
                type: "button", class: "show-all", on: {
                    click: (event) => {
                        event.currentTarget.disabled = true;
                        noteLine.textContent = "loading the whole body…";
                        load(id, side, type, logged, parts, signal, true);
                    },
                },
            }, "show all"));
        }
        addFind(view, actions);
    } catch (error) {
        if (signal.aborted) return;
        showLogged(logged, content, noteLine, error);
    }
}

/** A find box for the body: the worker searches; the view marks the lines and walks them. */
function addFind(view, actions) {
    if (actions.querySelector(".body-find")) return;
    const hex = view.kind === "hex";
    const input = h("input", {
        type: "search", class: "body-find", placeholder: hex ? "find text or hex bytes (de ad be ef)" : "find in body",
        spellcheck: "false", "aria-label": hex ? "find text or hex bytes in body" : "find in body",
    });
    const status = h("span", { class: "body-find-status muted", role: "status" });
    let query = "";
    let found = "";
    // The document searched: the raw/pretty switch and "show all" open a new one.
    let searched = 0;
    const step = async (direction) => {
        if (input.value !== query || view.generation !== searched) {
            query = input.value;
            searched = view.generation;
            status.textContent = query ? "searching…" : "";
            const answer = await view.search(query);
            if (query !== input.value) return;
            if (answer.total === 0) found = "no match";
            else if (answer.starts) found = `${answer.total.toLocaleString("en")}${answer.capped ? "+" : ""}`;
            else found = `${countOf(answer.matches.length, "line", "lines")}`
                + `${answer.capped ? "+" : ""} (${countOf(answer.total, "match", "matches")})`;
            status.textContent = query ? found : "";
        }
        const number = view.next(direction);
        const match = view.currentMatch;
        if (number && match?.offset !== undefined) {
            // A hex dump's match by its place in the body, as hex editors give it.
            status.textContent = `match ${number.toLocaleString("en")} of ${found} at offset `
                + `0x${match.offset.toString(16).padStart(8, "0")}`;
        } else if (number) {
            status.textContent = `line ${number.toLocaleString("en")} of ${found}`;
        }
    };
    input.addEventListener("keydown", (event) => {
        if (event.key === "Enter") {
            event.preventDefault();
            step(event.shiftKey ? -1 : 1);
        } else if (event.key === "Escape") {
            event.stopPropagation();
            input.blur();
            view.focus();
        }
    });
    actions.append(input,
        h("button", { type: "button", class: "find-prev", on: { click: () => step(-1) } }, "prev"),
        h("button", { type: "button", class: "find-next", on: { click: () => step(1) } }, "next"), status);
}

/** When the store has no body, the flow record's own prefix (text or base64) is all there is. */
function showLogged(logged, content, noteLine, error) {
    const text = logged.text ?? (logged.base64 ? `(base64) ${logged.base64}` : "");
    noteLine.textContent = `the body could not be loaded (${error.message}); the flow record's first part follows`;
    replaceChildren(content, h("pre", { class: "body-fallback" }, text || "(nothing recorded)"));
}

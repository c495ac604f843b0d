// A request or response body in the detail pane: fetched from the API (decoded), the first
// MiB only until "show all", formatted in the worker and shown by type — JSON pretty-printed
// and foldable, XML/HTML/text as source, images inline from a blob: URL, hex for the rest.

import { api } from "./api.js";
import { apiLink, h, replaceChildren } from "./dom.js";
import { formatSize, headerValue, mediaType } from "./format.js";
import "./line-view.js";

/** Bodies up to this are shown whole; larger ones show this much first. */
export const FIRST_PART = 1024 * 1024;
/** Images larger than this are offered as a download, not decoded in the page. */
const IMAGE_LIMIT = 32 * 1024 * 1024;

let worker = null;
let nextJob = 1;
const jobs = new Map();

/** Formats `bytes` as `kind` in the worker; resolves to `{text, starts, ends, note}`. */
function formatInWorker(kind, bytes, partial) {
    if (!worker) {
        worker = new Worker("format-worker.js");
        worker.onmessage = (event) => {
            const done = jobs.get(event.data.job);
            jobs.delete(event.data.job);
            done?.(event.data);
        };
    }
    const job = nextJob++;
    return new Promise((resolve) => {
        jobs.set(job, resolve);
        worker.postMessage({ job, kind, bytes, partial }, [bytes]);
    });
}

/** How to show a body of this media type: "json", "text", "image", "svg" or "binary" (sniff). */
export function viewKind(type) {
    if (!type) return "sniff";
    if (type === "application/json" || type.endsWith("+json") || type === "application/x-ndjson") return "json";
    if (type === "image/svg+xml") return "text";
    if (type.startsWith("image/")) return "image";
    if (type.startsWith("text/") || type.endsWith("+xml") || type.endsWith("/xml") ||
        type.includes("javascript") || type === "application/x-www-form-urlencoded" ||
        type === "application/graphql") return "text";
    if (type.startsWith("application/grpc") || type === "application/octet-stream" ||
        type.startsWith("application/x-protobuf") || type === "application/protobuf") return "binary";
    return "sniff";
}

/** Text when the bytes are UTF-8 without NULs; JSON when they also start like JSON. */
function sniff(bytes) {
    const sample = bytes.subarray(0, 4096);
    if (sample.includes(0)) return "binary";
    try {
        const text = new TextDecoder("utf-8", { fatal: true }).decode(sample.subarray(0, Math.max(0, sample.length - 4)));
        return /^\s*[[{]/.test(text) ? "json" : "text";
    } catch {
        return "binary";
    }
}

/** Reads at most `limit` bytes of a streamed response; `more` says whether bytes were left. */
async function readPrefix(response, limit, controller) {
    const reader = response.body.getReader();
    const chunks = [];
    let length = 0;
    let more = false;
    while (true) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        length += value.length;
        if (length > limit) {
            more = true;
            controller.abort();
            break;
        }
    }
    const bytes = new Uint8Array(Math.min(length, limit));
    let offset = 0;
    for (const chunk of chunks) {
        const part = chunk.subarray(0, Math.min(chunk.length, bytes.length - offset));
        bytes.set(part, offset);
        offset += part.length;
        if (offset >= bytes.length) break;
    }
    return { bytes, more };
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
    if (type) facts.push(type);
    const noteLine = h("p", { class: "body-note", role: "status" });
    const actions = h("div", { class: "body-actions" },
        apiLink(api.paths.body(id, side, true), "download", { download: `${side}-body-${id}`, class: "button" }),
        apiLink(api.paths.body(id, side, false), "download decoded",
            { download: `${side}-body-${id}-decoded`, class: "button" }));
    const content = h("div", { class: "body-content" }, h("p", { class: "muted" }, "loading…"));
    container.append(h("p", { class: "body-facts" }, facts.join(" · ")), actions, noteLine, content);
    load(id, side, type, logged, { content, noteLine, actions }, signal, false);
    return container;
}

async function load(id, side, type, logged, parts, signal, whole) {
    const { content, noteLine, actions } = parts;
    let kind = viewKind(type);
    try {
        const controller = new AbortController();
        signal.addEventListener("abort", () => controller.abort());
        const response = await api.body(id, side, { signal: controller.signal });
        if (kind === "image") {
            if (logged.size > IMAGE_LIMIT) {
                replaceChildren(content, h("p", { class: "muted" }, "a large image: use download"));
                return;
            }
            const blob = new Blob([await response.arrayBuffer()], { type });
            const url = URL.createObjectURL(blob);
            signal.addEventListener("abort", () => URL.revokeObjectURL(url));
            const image = h("img", { class: "body-image", alt: `${side} image, ${type}, ${formatSize(blob.size)}` });
            image.src = url;
            replaceChildren(content, image);
            return;
        }
        const { bytes, more } = whole
            ? { bytes: new Uint8Array(await response.arrayBuffer()), more: false }
            : await readPrefix(response, FIRST_PART, controller);
        if (signal.aborted) return;
        if (kind === "sniff") kind = sniff(bytes);
        const formatted = await formatInWorker(kind === "binary" ? "hex" : kind, bytes.buffer, more);
        if (signal.aborted) return;
        const view = document.createElement("line-view");
        view.className = `body-lines kind-${kind}`;
        replaceChildren(content, view);
        view.show(formatted);
        const notes = [];
        if (more) notes.push("showing the first 1 MiB");
        if (formatted.note) notes.push(formatted.note);
        if (logged.truncated && logged.size > bytes.length && !more && whole) {
            notes.push("the session kept only the first part of this body");
        }
        noteLine.textContent = notes.join("; ");
        actions.querySelector(".show-all")?.remove();
        if (more) {
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
    } catch (error) {
        if (signal.aborted) return;
        showLogged(logged, content, noteLine, error);
    }
}

/** When the store has no body, the flow record's own prefix (text or base64) is all there is. */
function showLogged(logged, content, noteLine, error) {
    const text = logged.text ?? (logged.base64 ? `(base64) ${logged.base64}` : "");
    noteLine.textContent = `the body could not be loaded (${error.message}); the flow record's first part follows`;
    replaceChildren(content, h("pre", { class: "body-fallback" }, text || "(nothing recorded)"));
}

// "Edit and resend": a dialog with the flow's method, URL, headers and body, sent with
// `POST /api/replay`; the new flow arrives through the live stream.

import { api } from "./api.js";
import { h, replaceChildren } from "./dom.js";
import { store } from "./store.js";

/** Bodies up to this size are put in the editor; larger ones are not editable here. */
const EDITABLE = 1024 * 1024;

/** `Name: value` lines from `[[name, value]]`. */
export function headerLines(headers) {
    return (headers ?? []).map(([name, value]) => `${name}: ${value}`).join("\n");
}

/** `[[name, value]]` from `Name: value` lines; a line without a colon is an error. */
export function parseHeaderLines(text) {
    const headers = [];
    const lines = text.split("\n").map((line) => line.replace(/\r$/, ""));
    for (const [index, line] of lines.entries()) {
        if (!line.trim()) continue;
        const colon = line.indexOf(":");
        if (colon <= 0) throw new Error(`header line ${index + 1} has no "name: value"`);
        headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
    }
    return headers;
}

/** Whether a Host value names the authority of `url` (letter case and the scheme's default port aside). */
export function namesAuthorityOf(host, url) {
    try {
        const parsed = new URL(url);
        const port = parsed.protocol === "https:" ? ":443" : ":80";
        const typed = host.trim().toLowerCase();
        return (typed.endsWith(port) ? typed.slice(0, -port.length) : typed) === parsed.host.toLowerCase();
    } catch {
        return false;
    }
}

/**
 * The headers to send: a Host line left as it was filled in, naming the URL as it was filled in,
 * is dropped, so an edited URL takes its own host (as mitmproxy's editor keeps Host in step with
 * the URL); a Host the user typed, or one that already differed from the URL, goes as it is, and
 * the server sends it to the URL's host.
 */
export function headersToSend(headers, filledHost, filledURL) {
    if (filledHost === null || !namesAuthorityOf(filledHost, filledURL)) return headers;
    return headers.filter(([name, value]) => name.toLowerCase() !== "host" || value !== filledHost);
}

/**
 * The URL of the server `flow`'s request went to, as `POST /api/flows/ID/replay` sends it
 * (`ReplayTarget.swift`): its URL names the host of its Host header, and an intercepted request
 * whose Host named another host (`server.request_host`) went on the connection for `server.host`,
 * a plain request in a tunnel to the tunnel's address. With the Host line as recorded, which then
 * differs from this URL, the resend goes where the original went, as mitmproxy's does.
 */
export function connectionURL(flow) {
    const request = flow.request;
    const server = flow.server ?? {};
    let url;
    try {
        url = new URL(request.url);
    } catch {
        return request.url;
    }
    let target = null;
    if (server.request_host && server.host && server.port > 0) {
        target = [server.host, server.port];
    } else if (flow.mode === "http" && !request.target && !request.pseudo_headers && server.address
        && !(flow.listener?.mode ?? "").startsWith("reverse")) {
        const match = /^\[?(.*?)\]?:(\d+)$/.exec(server.address);
        if (match && match[1]) target = [match[1], Number(match[2])];
    }
    if (!target || target[0].toLowerCase() === url.hostname.replace(/^\[|\]$/g, "").toLowerCase()) return request.url;
    url.hostname = target[0].includes(":") ? `[${target[0]}]` : target[0];
    url.port = String(target[1]);
    return url.href;
}

/** `bytes` as text when they are UTF-8 without NUL, else null. */
export function textOf(bytes) {
    if (bytes.includes(0)) return null;
    try {
        return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
        return null;
    }
}

/** Base64 of `bytes`, in slices (one `String.fromCharCode` of a large array overflows the stack). */
export function base64Of(bytes) {
    let binary = "";
    for (let start = 0; start < bytes.length; start += 0x8000) {
        binary += String.fromCharCode(...bytes.subarray(start, start + 0x8000));
    }
    return btoa(binary);
}

/**
 * A gRPC call's request messages as JSON to edit, when every one was recorded typed (the run has
 * the method's schema: `--proto`, `--grpc-reflection`): `{type, text}`, one message as an object
 * and several as an array. Null otherwise (the body then goes as it came). The server writes the
 * edited JSON as protobuf by the same schema (`grpc_messages`).
 */
export function grpcEditable(grpc) {
    if (!grpc || grpc.protocol) return null;
    const sent = (grpc.messages ?? []).filter((message) => message.direction === "request");
    if (sent.length === 0 || sent.length !== grpc.request_messages
        || sent.some((message) => message.typed === undefined || !message.message_type)) return null;
    const typed = sent.map((message) => message.typed);
    return { type: sent[0].message_type, text: JSON.stringify(typed.length === 1 ? typed[0] : typed, null, 2) };
}

/** `grpc_messages` from the editor's text: an object is one message, an array several. */
export function grpcMessagesOf(text) {
    let parsed;
    try {
        parsed = JSON.parse(text);
    } catch (failure) {
        throw new Error(`the messages are not JSON: ${failure.message}`);
    }
    return Array.isArray(parsed) ? parsed : [parsed];
}

/**
 * Sends the request `build()` makes (`POST /api/replay`) from an open dialog: its Send button
 * disabled meanwhile, the dialog closed and the new flow announced once it went, the server's
 * reason in `error` when it did not (a request that cannot be built says why there too).
 */
export async function sendFromDialog(dialog, send, error, build) {
    try {
        send.disabled = true;
        const answer = await api.resend(build());
        dialog.close();
        store.notify(`sent as flow ${answer.id}`);
        store.announceFlow(answer.id);
    } catch (failure) {
        error.textContent = failure.message;
    } finally {
        send.disabled = false;
    }
}

/** Opens the dialog for `flow` (its record). */
export async function openResend(flow) {
    const request = flow.request;
    if (!request) return;
    const dialog = document.getElementById("resend-dialog");
    const field = (label, control) => h("label", { class: "field" }, h("span", {}, label), control);
    const method = h("input", { name: "method", "aria-label": "Method", spellcheck: "false", required: true });
    const url = h("input", { name: "url", "aria-label": "URL", spellcheck: "false", required: true });
    const headers = h("textarea", { name: "headers", rows: 8, "aria-label": "Headers", spellcheck: "false" });
    const body = h("textarea", { name: "body", rows: 8, "aria-label": "Body", spellcheck: "false" });
    const error = h("p", { class: "error-text", role: "alert" });
    method.value = request.method;
    // Where the original went (its Host line, as recorded, names any other host).
    const filledURL = connectionURL(flow);
    url.value = filledURL;
    headers.value = headerLines(request.headers);
    // The Host as filled in (the last line's value, as `parseHeaderLines` reads it back).
    const filledHost = parseHeaderLines(headers.value).findLast(([name]) => name.toLowerCase() === "host")?.[1] ?? null;
    body.value = request.body?.text ?? "";
    // A body that is not text (protobuf, an image in a multipart upload) goes as it came, as
    // base64: through the text editor its bytes became U+FFFD and it grew (16 bytes arrived as 22).
    let binary = null;
    // A body over what the editor takes goes unchanged, as the store kept it (`body_from`): the
    // editor held only the record's preview, and that was sent.
    let unchanged = false;
    // A typed gRPC call: its request messages as JSON, written as protobuf again when sent.
    const grpc = grpcEditable(flow.grpc);
    if (grpc) body.value = grpc.text;
    const send = h("button", { type: "submit", id: "resend-send" }, "Send");
    const form = h("form", { class: "resend" },
        h("h2", { id: "resend-title" }, "Edit and resend"),
        h("div", { class: "resend-line" }, field("Method", method), field("URL", url)),
        field("Headers (one “Name: value” a line)", headers),
        field(grpc ? `Request ${grpc.text.startsWith("[") ? "messages" : "message"} as JSON (${grpc.type}; `
                     + "written as protobuf when sent)" : "Body", body), error,
        h("div", { class: "dialog-buttons" },
            h("button", { type: "button", on: { click: () => dialog.close() } }, "Cancel"), send));
    form.addEventListener("submit", async (event) => {
        event.preventDefault();
        error.textContent = "";
        await sendFromDialog(dialog, send, error, () => ({
            method: method.value.trim(), url: url.value.trim(),
            headers: headersToSend(parseHeaderLines(headers.value), filledHost, filledURL),
            ...(grpc ? { grpc_messages: grpcMessagesOf(body.value) }
                : unchanged ? { body_from: flow.id } : binary ? { body_base64: base64Of(binary) } : { body: body.value }),
            replay_of: flow.id,
        }));
    });
    replaceChildren(dialog, form);
    dialog.showModal();
    method.focus();
    // The record holds only a prefix of the body; the store has it whole.
    if (grpc) {
        // Edited as JSON above.
    } else if (flow.running && request.body && request.body.size > 0) {
        // A flow still running (`flow-detail.js` `runningResend`): its body is not stored yet. Its
        // record so far holds it whole once the request was received (the server refuses before):
        // plain text is edited; anything else goes as received, from the server's copy.
        if (request.body.text == null || request.body.decoded || request.body.charset || request.body.truncated
            || request.body.size > EDITABLE) {
            unchanged = true;
            body.value = `(${request.body.size} bytes, as received: sent unchanged)`;
            body.readOnly = true;
        }
    } else if (request.body && request.body.size > 0 && request.body.size <= EDITABLE) {
        try {
            const response = await api.body(flow.id, "request");
            const bytes = new Uint8Array(await response.arrayBuffer());
            const text = textOf(bytes);
            if (text === null) {
                binary = bytes;
                body.value = `(${bytes.length} bytes that are not text: sent unchanged)`;
                body.readOnly = true;
            } else {
                body.value = text;
            }
        } catch {
            // Keep the record's text; the note below says it may be partial.
            if (request.body.truncated || request.body.preview) error.textContent = "only the first part of the body was recorded";
        }
    } else if (request.body && request.body.size > EDITABLE) {
        unchanged = true;
        body.value = `(${request.body.size} bytes, over the 1 MiB the editor takes: sent unchanged)`;
        body.readOnly = true;
    }
}

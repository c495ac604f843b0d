// Mock… in the flow pane (Proxyman's right click → Map Local, Charles's Map Local from a
// recording): the Rules view's mock form, filled from the flow: `~m METHOD` and a URL regex that
// matches this URL with any query (as Proxyman's Map Local matches it), the response's status and
// content type, and its body as the pane shows it (decoded from gzip, br, zstd): text to edit, or
// bytes (an image, a protobuf) sent as recorded. Nothing is added until the form is saved.

import { api } from "./api.js";
import { headerValue } from "./format.js";

/** The largest body a mock holds (the server's `RuleBoard.Answer.bodyLimit`): 1 MiB. */
export const MOCK_LIMIT = 1 << 20;

/** `text` with every character a regular expression (ICU's, which the proxy uses) reads as syntax escaped. */
export function escapeRegex(text) {
    return text.replace(/[\\^$.|?*+()[\]{}]/g, "\\$&");
}

/**
 * The URL regex for `url`: its scheme, host, port and path, anchored, with any query (and only a
 * query) after it; a fragment is never sent, so it is left out.
 */
export function urlRegex(url) {
    const bare = String(url).split("#")[0].split("?")[0];
    return `^${escapeRegex(bare)}(\\?.*)?$`;
}

/** A mock's text, `|~m METHOD|REGEX`, with a separator neither part holds (the first character is it). */
export function mockText(method, regex) {
    const filter = method ? `~m ${method}` : "";
    const separator = ["|", "!", ";", ",", "@", "%"]
        .find((mark) => !filter.includes(mark) && !regex.includes(mark)) ?? "|";
    return filter ? `${separator}${filter}${separator}${regex}` : `${separator}${regex}`;
}

/** Bytes as base64 (a chunk at a time: a 1 MiB body spread as arguments would overflow the stack). */
export function toBase64(bytes) {
    let binary = "";
    for (let start = 0; start < bytes.length; start += 0x8000) {
        binary += String.fromCharCode(...bytes.subarray(start, start + 0x8000));
    }
    return btoa(binary);
}

/**
 * The response body of flow `flow` as a mock holds it: `{text}` when the server reads it as text
 * (decoded), `{base64, size}` for other bytes, `{over}` (its size) past the mock's limit, `{error}`
 * when it could not be read.
 */
async function recordedBody(flow) {
    if (!flow.response || flow.response.body?.size === 0) return { text: "" };
    try {
        const response = await api.body(flow.id, "response");
        const length = Number(response.headers.get("content-length") ?? NaN);
        if (length > MOCK_LIMIT) {
            await response.body?.cancel();
            return { over: length };
        }
        const bytes = new Uint8Array(await response.arrayBuffer());
        if (bytes.length > MOCK_LIMIT) return { over: bytes.length };
        if ((response.headers.get("content-type") ?? "").startsWith("text/plain")) {
            return { text: new TextDecoder().decode(bytes) };
        }
        return { base64: toBase64(bytes), size: bytes.length };
    } catch (error) {
        return { error: error.message };
    }
}

/**
 * Opens the Rules view's mock form filled from `flow`: a flow without a response (it failed, it
 * still runs) fills what it has, status 200.
 */
export async function openMock(flow) {
    const panel = document.querySelector("rules-panel");
    if (!panel || !flow.request?.url) return;
    const body = await recordedBody(flow);
    const notes = ["URL regex: this URL with any query or none (the query is left out of the match); "
        + "edit it to match one query only, or more paths"];
    if (!flow.response) notes.push("no response was recorded: status 200 and an empty body to start from");
    if (body.over !== undefined) {
        notes.push(`the response body is ${body.over.toLocaleString("en-US")} bytes, over a mock's 1 MiB: type one`);
    }
    if (body.base64 !== undefined && flow.response?.body?.decode_error) {
        notes.push(`the body could not be decoded (${flow.response.body.decode_error}): these are the bytes as sent, `
            + "and the mock sends them without their Content-Encoding");
    }
    if (body.error) notes.push(`the response body could not be read (${body.error}): type one`);
    // A mock answers with its status, type and body alone: a page on another origin that read the
    // recorded response by its CORS header gets a mock its browser will not let it read (fetch
    // fails with a CORS error, and the flow looks fine).
    const allowed = flow.response ? headerValue(flow.response.headers, "access-control-allow-origin") : null;
    if (allowed) {
        notes.push(`the recorded Access-Control-Allow-Origin: ${allowed} is not sent by a mock (a status, a type and `
            + "a body): a browser page on another origin cannot read this answer");
    }
    document.getElementById("tab-rules")?.click();
    panel.fillMock({
        text: mockText(flow.request.method, urlRegex(flow.request.url)),
        status: flow.response?.status ?? 200,
        contentType: flow.response ? headerValue(flow.response.headers, "content-type") ?? "" : "application/json",
        body: body.text ?? "",
        binary: body.base64 !== undefined ? { base64: body.base64, size: body.size } : null,
        note: notes.join("; "),
    });
}

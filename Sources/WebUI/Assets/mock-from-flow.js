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
 * What a flow still running has of a mock, as `openMock` takes a flow: its request's method and
 * URL (the summary's), and once the response's head came its status and header fields, with the
 * body so far when the API keeps a record so far (a long stream: an event stream, gRPC) and none
 * otherwise. `pending` is `GET /api/flows/ID`'s answer for a running flow.
 */
export function runningFlow(pending) {
    const record = pending.record;
    const summary = pending.summary ?? {};
    const method = record?.request?.method ?? summary.method;
    const url = record?.request?.url ?? summary.url;
    const head = record?.response ?? (summary.status ? { status: summary.status, headers: pending.response?.headers ?? [] }
        : null);
    return {
        id: pending.id, running: true, request: url ? { method, url } : null,
        response: head ? { status: head.status, headers: head.headers ?? [], body: head.body } : null,
    };
}

/** The body so far of a running flow's response (`runningFlow`), as `recordedBody` gives a body. */
function bodySoFar(response) {
    const body = response?.body;
    if (body?.text != null) {
        const size = new TextEncoder().encode(body.text).length;
        return size > MOCK_LIMIT ? { over: size } : { text: body.text, soFar: size };
    }
    if (body?.base64 != null) {
        const size = atob(body.base64).length;
        return size > MOCK_LIMIT ? { over: size } : { base64: body.base64, size, soFar: size };
    }
    return { text: "", soFar: 0 };
}

/**
 * Mock… on a flow still running (a long poll, a slow download, a stream), as Proxyman and Charles
 * map a request while it is pending: the flow is read again when asked (its view on show may be
 * half a second old, and it may have ended since: then it is `openMock`'s), and the form gets its
 * request, and of its response whatever has come: the status and type once the head came, the
 * body so far where the record so far holds one; status 200 before the head.
 */
export async function openMockOfRunning(id) {
    const flow = await api.flow(id);
    return openMock(flow.pending ? runningFlow(flow) : flow);
}

/**
 * Opens the Rules view's mock form filled from `flow`: a flow without a response (it failed, it
 * still runs) fills what it has, status 200; a running one (`runningFlow`) its response so far.
 */
export async function openMock(flow) {
    const panel = document.querySelector("rules-panel");
    if (!panel || !flow.request?.url) return;
    const body = flow.running ? bodySoFar(flow.response) : await recordedBody(flow);
    const notes = ["URL regex: this URL with any query or none (the query is left out of the match); "
        + "edit it to match one query only, or more paths"];
    if (flow.running && !flow.response) {
        notes.push("the flow still waits for its response: status 200 and an empty body to start from");
    } else if (flow.running) {
        notes.push(body.soFar
            ? `the response is still arriving: its status and type as they came, and the ${body.soFar.toLocaleString("en-US")} `
                + "bytes of body so far"
            : "the response is still arriving: its status and type as they came; its body is kept when the flow ends "
                + "(type one, or Mock… again then)");
    } else if (!flow.response) {
        notes.push("no response was recorded: status 200 and an empty body to start from");
    }
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

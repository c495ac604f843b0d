// The one place that talks to DevProxy's HTTP API (docs/web-ui.md). Reads use the session
// cookie the server set when the page was opened with `?token=`; writes add the CSRF header.

const CSRF_HEADER = { "X-DevProxy-CSRF": "1" };

/** An API answer that was not 2xx: the status and the server's message (and column, for filters). */
export class APIError extends Error {
    constructor(status, message, column) {
        super(message);
        this.status = status;
        this.column = column;
    }
}

/** The token from the address the page was opened with; kept in memory only, then removed from the URL. */
const token = (() => {
    const url = new URL(window.location.href);
    const value = url.searchParams.get("token");
    if (value !== null) {
        url.searchParams.delete("token");
        window.history.replaceState(null, "", url.pathname + url.search + url.hash);
    }
    return value;
})();

function headers(extra = {}) {
    return token ? { Authorization: `Bearer ${token}`, ...extra } : extra;
}

/** Turns a failed response into an APIError with the server's own words. */
async function failure(response) {
    let message = `${response.status} ${response.statusText}`;
    let column;
    try {
        const text = await response.text();
        try {
            const body = JSON.parse(text);
            const detail = body.error ?? body.message;
            message = typeof detail === "object" && detail ? (detail.message ?? detail.reason ?? message) : (detail ?? message);
            column = body.column ?? (typeof detail === "object" && detail ? detail.column : undefined);
        } catch {
            if (text.trim()) message = text.trim().split("\n")[0];
        }
    } catch {
        // The body could not be read; the status line says enough.
    }
    if (column === undefined) {
        const match = /at column (\d+)/.exec(message);
        if (match) column = Number(match[1]);
    }
    return new APIError(response.status, message, column);
}

async function getJSON(path, signal) {
    const response = await fetch(path, { headers: headers(), signal, credentials: "same-origin" });
    if (!response.ok) throw await failure(response);
    return response.json();
}

async function post(path, body, method = "POST") {
    const init = { method, credentials: "same-origin", headers: headers(CSRF_HEADER) };
    if (body !== undefined) {
        init.headers = headers({ ...CSRF_HEADER, "Content-Type": "application/json" });
        init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    if (!response.ok) throw await failure(response);
    const text = await response.text();
    return text ? JSON.parse(text) : {};
}

function query(parameters) {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(parameters)) {
        if (value !== undefined && value !== null && value !== "") search.set(name, String(value));
    }
    const text = search.toString();
    return text ? `?${text}` : "";
}

const flowPath = (id) => `/api/flows/${encodeURIComponent(id)}`;
const heldPath = (id) => `/api/intercept/${encodeURIComponent(id)}`;

export const api = {
    /** One page of summaries: `{flows, total, next_cursor}`. */
    flows({ filter, limit, cursor, sort }, signal) {
        return getJSON(`/api/flows${query({ filter, limit, cursor, sort: sort || undefined })}`, signal);
    },
    /**
     * The flow as the flow log writes it. `preview`: bodies' text cut to that many characters (the
     * pane loads bodies on their own; a record can carry megabytes of body text).
     */
    flow(id, signal, preview) {
        return getJSON(`${flowPath(id)}${query({ preview })}`, signal);
    },
    info() {
        return getJSON("/api/info");
    },
    /** Each `error.kind` with the sentence that explains it: `{kind: explanation}`. */
    errorKinds() {
        return getJSON("/api/error-kinds");
    },
    ca() {
        return getJSON("/api/ca");
    },
    pinning() {
        return getJSON("/api/pinning");
    },
    /**
     * `devproxy run --mode wireguard`'s devices: `{listening, endpoint, peers: [{peer, address, connected,
     * last_handshake_seconds, from}]}` (`listening` null without a wireguard listener).
     */
    wireGuard() {
        return getJSON("/api/wireguard");
    },
    /** Device `peer`'s WireGuard config (it holds the device's private key), written with `endpoint` ("": the listener's). */
    async wireGuardConfig(peer, endpoint) {
        const response = await fetch(api.paths.wireGuard(peer, endpoint).config,
            { headers: headers(), credentials: "same-origin", cache: "no-store" });
        if (!response.ok) throw await failure(response);
        return response.text();
    },
    /** Removes device `peer` (its key deleted; the run drops it at once); resolves to `{removed, address}`. */
    removeWireGuardPeer(peer) {
        return post(`/api/wireguard/peers/${encodeURIComponent(peer)}`, undefined, "DELETE");
    },
    /** Replays flow `id`; resolves to `{id}` of the new flow. */
    replay(id) {
        return post(`${flowPath(id)}/replay`);
    },
    /** Sends an edited request: `{method, url, headers: [[name, value]], body}`; resolves to `{id}`. */
    resend(request) {
        return post("/api/replay", request);
    },
    /** Starts sending flow `id` `{count, concurrency, delay_ms}` times; resolves to the repeat's state. */
    repeat(id, options) {
        return post(`${flowPath(id)}/repeat`, options);
    },
    /** A repeat's progress and summary (`GET /api/repeats/ID`). */
    repeatState(id) {
        return getJSON(`/api/repeats/${encodeURIComponent(id)}`);
    },
    /** Sends no more of repeat `id`; resolves to its state. */
    cancelRepeat(id) {
        return post(`/api/repeats/${encodeURIComponent(id)}`, undefined, "DELETE");
    },
    clear() {
        return post("/api/clear");
    },
    /** Network conditions: `{throttle: {profile, description, hosts} | null, presets: [{name, description}]}`. */
    throttle() {
        return getJSON("/api/throttle");
    },
    /** Sets them (`{profile: "slow-4g" | "DOWN/UP/LATENCY" | null, hosts?: [glob]}`); resolves as `throttle()`. */
    setThrottle(change) {
        return post("/api/throttle", change, "PUT");
    },
    /** Map rules: `{rules: [{id, kind, text, enabled, origin, answer?}], kinds}`. */
    rules() {
        return getJSON("/api/rules");
    },
    /** Adds one (`{kind, text, answer?: {status, content_type, body}}`); resolves to the rule. */
    addRule(rule) {
        return post("/api/rules", rule);
    },
    /** Changes rule `id` (`{enabled?, text?, answer?, position?}`); resolves to the rule. */
    changeRule(id, change) {
        return post(`/api/rules/${encodeURIComponent(id)}`, change, "PUT");
    },
    /** Deletes rule `id` (one added in the web UI). */
    removeRule(id) {
        return post(`/api/rules/${encodeURIComponent(id)}`, undefined, "DELETE");
    },
    /** Sets flow `id`'s mark and/or comment (`{mark: "red"|null, comment: "…"|null}`); resolves to its summary. */
    mark(id, change) {
        return post(`${flowPath(id)}/mark`, change, "PUT");
    },
    /**
     * Breakpoints: `{filter, held: [{id, phase, status, method, url, http_version, headers, body_size, since,
     * held_ms}]}`; `phase` is `request` or `response` (whose `status`, `headers` and body are the response's).
     */
    intercept() {
        return getJSON("/api/intercept");
    },
    /** One held request or response, with `body_base64` and (when UTF-8) `body_text`. */
    heldRequest(id, signal) {
        return getJSON(heldPath(id), signal);
    },
    /** Sets the Intercept filter ("" clears it); resolves to `{filter}`, rejects with the reason. */
    setInterceptFilter(filter) {
        return post("/api/intercept", { filter }, "PUT");
    },
    /**
     * Sends held request or response `id` on; `edit` holds only the parts changed (a request's `method`,
     * `url`, a response's `status`; `headers`, `body`).
     */
    resumeHeld(id, edit, phase) {
        const body = { ...(edit ?? {}), ...(phase ? { phase } : {}) };
        return post(`${heldPath(id)}/resume`, Object.keys(body).length ? body : undefined);
    },
    /** Answers held request `id` with `answer` (`{status, headers, body}`), never sending it upstream. */
    respondHeld(id, answer) {
        return post(`${heldPath(id)}/respond`, answer);
    },
    /**
     * Answers held request or response `id` with a 502 (its client is told it was aborted here);
     * `phase` (`request`, `response`) is what the page showed, so a flow whose request went on
     * meanwhile does not have its response aborted instead.
     */
    abortHeld(id, phase) {
        return post(`${heldPath(id)}/abort`, phase ? { phase } : undefined);
    },
    resumeAllHeld() {
        return post("/api/intercept/resume-all");
    },
    /** The export of one flow as text (`curl`, `har`, `raw`). */
    async exportText(id, format) {
        const response = await fetch(`${flowPath(id)}/export${query({ format })}`,
            { headers: headers(), credentials: "same-origin" });
        if (!response.ok) throw await failure(response);
        return response.text();
    },
    /** The `fetch` response for a body (decoded; `raw` for the bytes as sent), for streaming reads. */
    async body(id, side, { raw = false, signal } = {}) {
        const response = await fetch(`${flowPath(id)}/${side}/body${query({ raw: raw ? 1 : undefined })}`,
            { headers: headers(), signal, credentials: "same-origin" });
        if (!response.ok) throw await failure(response);
        return response;
    },
    /** A form body's fields (`GET …/request/form`): `{kind, complete, read_bytes, fields: [{name, value,
     * file_name, content_type, size, value_cut, cut}]}`. */
    form(id, side, signal) {
        return getJSON(`${flowPath(id)}/${side}/form`, signal);
    },
    /**
     * A protobuf body decoded without a schema (`GET …/protobuf`): `{complete, read_bytes, decoded:
     * {fields: [{number, wire_type, varint | fixed64 | fixed32 | string | bytes | message | group}], error}}`.
     * Integers past 2^53 keep every digit (as strings), where JSON numbers would round them.
     */
    async protobuf(id, side, signal) {
        const response = await fetch(`${flowPath(id)}/${side}/protobuf`, { headers: headers(), signal, credentials: "same-origin" });
        if (!response.ok) throw await failure(response);
        return JSON.parse(await response.text(),
            (key, value, context) => typeof value === "number" && !Number.isSafeInteger(value) && Number.isInteger(value)
                && context?.source ? context.source : value);
    },
    /** What the format worker needs to fetch a decoded body itself: `{url, headers}` (`limit`: bytes). */
    bodyRequest(id, side, limit) {
        return { url: `${flowPath(id)}/${side}/body${query({ limit })}`, headers: headers() };
    },
    /** Same-origin paths for links (downloads and exports). */
    paths: {
        body: (id, side, raw) => `${flowPath(id)}/${side}/body${query({ raw: raw ? 1 : undefined })}`,
        harForFilter: (filter) => `/api/export/har${query({ filter })}`,
        harForIDs: (ids) => `/api/export/har${query({ ids: ids.join(",") })}`,
        events: (filter, lastEventID) => `/api/events${query({ filter, last_event_id: lastEventID })}`,
        /** Device `peer`'s config (an attachment) and QR code (SVG), written with `endpoint`. */
        wireGuard: (peer, endpoint) => ({
            config: `/api/wireguard/peers/${encodeURIComponent(peer)}/config${query({ endpoint })}`,
            qr: `/api/wireguard/peers/${encodeURIComponent(peer)}/qr.svg${query({ endpoint })}`,
        }),
    },
};

// What the list shows of one flow summary (`GET /api/flows`): cells and markers, as text.

import { formatClock, formatDuration, formatSize, mediaType, pathOf } from "./format.js";
import { errorsText, operationsText } from "./graphql-view.js";

const FINISHED = new Set(["finished", "complete", "completed", "done", 2]);

/** A connection the client opened and closed without a request (a browser's preconnect): no failure. */
export function isUnused(summary) {
    return summary.error_kind === "client_closed_unused";
}

/** True while the flow has not ended (request head seen, response pending or streaming). */
export function isPending(summary) {
    if (summary.error_kind) return false;
    if (summary.phase !== undefined && summary.phase !== null) return !FINISHED.has(summary.phase);
    if (summary.pending !== undefined) return Boolean(summary.pending);
    return summary.status == null && summary.duration_ms == null && !isTunnel(summary);
}

export function isTunnel(summary) {
    return Boolean(summary.is_tunnel || summary.mode === "tunnel");
}

export function isWebSocket(summary) {
    return Boolean(summary.is_websocket || summary.mode === "websocket");
}

/** The markers a row carries: `{key, symbol, label}`, in a fixed order. */
export function markers(summary) {
    const list = [];
    // A person's mark and comment (marks.js): the row's stripe is the mark's colour, and the words
    // say it too (a colour alone tells nothing to a screen reader or to colour-blind eyes).
    if (MARK_COLOURS.includes(summary.mark)) {
        list.push({ key: `mark-${summary.mark}`, symbol: "●", label: `marked ${summary.mark}` });
    }
    if (typeof summary.comment === "string" && summary.comment) {
        list.push({ key: "comment", symbol: "✎", label: `comment: ${summary.comment}` });
    }
    if (isPending(summary)) {
        list.push({ key: "pending", symbol: "…", label: summary.status ? "response in progress" : "waiting for response" });
    }
    if (isUnused(summary)) {
        list.push({ key: "unused", symbol: "○", label: "unused: the client opened this connection and closed it without a request" });
    } else if (summary.error_kind) {
        list.push({ key: "error", symbol: "⚠", label: `error: ${summary.error_kind}` });
    }
    if (isTunnel(summary)) list.push({ key: "tunnel", symbol: "⇄", label: "tunnel (not decrypted)" });
    if (isWebSocket(summary)) list.push({ key: "websocket", symbol: "WS", label: "WebSocket" });
    if (summary.replay_of) list.push({ key: "replay", symbol: "↻", label: `replay of ${summary.replay_of}` });
    // A rule changed or answered it (the summary's `mapped`, the record's `mapped.rule`): as
    // Proxyman and Charles badge a Map Local or Map Remote row. ✱ is in DejaVu Sans.
    if (typeof summary.mapped === "string" && summary.mapped) {
        list.push({ key: "mapped", symbol: "✱",
            label: MAPPED_LABELS[summary.mapped] ?? `changed by a rule (${summary.mapped})` });
    }
    const informational = Array.isArray(summary.informational) ? summary.informational : [];
    if (informational.length) {
        // Early Hints is the one a reader looks for (the console line says `(after 103)`).
        const shown = informational.includes(103) ? 103 : informational[0];
        list.push({ key: "informational", symbol: String(shown),
            label: `informational ${informational.length === 1 ? "response" : "responses"} before the final one: `
                + informational.map((code) => INFORMATIONAL_NAMES[code] ? `${code} ${INFORMATIONAL_NAMES[code]}` : code)
                    .join(", ") });
    }
    return list;
}

/** What the mapped marker's label says of each rule (`Flow.Mapping.rule`). */
const MAPPED_LABELS = {
    "mock": "answered by a mock rule",
    "map-local": "answered from a local file (map-local)",
    "map-remote": "sent to another URL (map-remote)",
    "modify-headers": "headers changed (modify-headers)",
    "modify-body": "body changed (modify-body)",
    "block-list": "blocked (block-list)",
};

/** The colours a flow can be marked with (`PUT /api/flows/ID/mark`). */
const MARK_COLOURS = ["red", "orange", "yellow", "green", "blue", "purple"];

/** What an informational response is called (IANA registry), for the marker's label. */
export const INFORMATIONAL_NAMES = { 102: "Processing", 103: "Early Hints", 104: "Upload Resumption Supported" };

/** The columns: key, header and the cell text of a summary (widths are in app.css, `.flow-row`). */
export const COLUMNS = [
    { key: "marks", title: "", label: "Markers", text: (s) => markers(s).map((m) => m.symbol).join("\u2009") },
    { key: "time", title: "Time", text: (s) => formatClock(s.started) },
    { key: "method", title: "Method", text: (s) => s.method ?? (isTunnel(s) ? "CONNECT" : "") },
    { key: "host", title: "Host", text: hostText },
    { key: "path", title: "Path", text: pathText },
    { key: "status", title: "Status", text: statusText },
    { key: "protocol", title: "Protocol", text: (s) => s.http_version ?? s.mode ?? "" },
    { key: "type", title: "Type", text: (s) => mediaType(s.content_type) },
    { key: "size", title: "Size", text: (s) => formatSize(s.response_size) },
    { key: "duration", title: "Duration", text: (s) => formatDuration(s.duration_ms) },
    { key: "persona", title: "Persona", text: (s) => s.persona ?? "" },
    { key: "signer", title: "Signer", text: signerText },
    { key: "client", title: "Client", text: clientText },
];

/**
 * The Host cell: the host, and `:port` when the URL names a port other than its scheme's default
 * (`localhost:8080`; not `:443` for https, `:80` for http), as a browser's address bar writes it;
 * an IPv6 address in brackets (`[::1]:9`). The column sorts and filters (`~d`) by the host alone.
 * A tunnel has no URL: its `port` is shown unless it is 443, TLS's (`db.internal:5432`).
 */
export function hostText(summary) {
    const host = summary.host ?? "";
    if (!host) return "";
    const shown = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
    if (isTunnel(summary)) return summary.port && summary.port !== 443 ? `${shown}:${summary.port}` : shown;
    let url;
    try {
        url = new URL(summary.url ?? "");
    } catch {
        // No request was read (a handshake the client refused or closed): the connection's port,
        // as the same host's requests show it, unless it is the scheme's default.
        const standard = summary.mode === "http" ? 80 : 443;
        return summary.port && summary.port !== standard ? `${shown}:${summary.port}` : shown;
    }
    // The URL's port is the server's only when the URL names that server (a URL parser drops a
    // scheme's default port, and writes an IPv6 host bracketed).
    const same = url.hostname.replace(/^\[|\]$/g, "").toLowerCase() === host.replace(/^\[|\]$/g, "").toLowerCase();
    return same && url.port ? `${shown}:${url.port}` : shown;
}

/**
 * The Signer cell: the engineer and the start of the intermediate's serial (`ana@acme.dev ·
 * 58a1e555`), so flows signed by an intermediate taken mid-run (the same engineer's, renewed)
 * read apart from the earlier ones. `~signer` takes either, whole.
 */
export function signerText(summary) {
    const serial = summary.signer_serial ? summary.signer_serial.slice(0, 8) : "";
    return [summary.signer_email ?? "", serial].filter(Boolean).join(" · ");
}

/** The Signer cell's tooltip: the engineer and the serial whole. */
/**
 * The Client column: the process on this machine that made the flow (`curl`), as Proxyman and
 * Charles name the client app; else the client's address (`10.0.0.3:51234`, a LAN or WireGuard
 * device's, or a process DevProxy could not find).
 */
export function clientText(summary) {
    return summary.client_process || summary.client || "";
}

/** The Client cell's tooltip: `curl · pid 4242 · /usr/bin/curl · 127.0.0.1:53122`, whatever is known. */
export function clientTitle(summary) {
    const pid = summary.client_process && Number.isInteger(summary.client_pid) ? `pid ${summary.client_pid}` : "";
    return [summary.client_process, pid, summary.client_exe, summary.client].filter(Boolean).join(" · ");
}

export function signerTitle(summary) {
    if (!summary.signer_email && !summary.signer_serial) return "";
    return `signed by ${summary.signer_email ?? "(no email)"}` +
        (summary.signer_serial ? `, intermediate serial ${summary.signer_serial}` : "");
}

/**
 * The Path cell: the URL's path and query; for a GraphQL call the path alone and the operation
 * beside it (`/graphql · query GetUser`, `/graphql · 2 operations: GetUser, GetFeed`), as HTTP
 * Toolkit and Proxyman name them (a GET's `?query=…` would push the name out of sight).
 */
export function pathText(summary) {
    if (isTunnel(summary)) return "";
    // A connection that ended before a request (the client refused the certificate, closed after
    // the handshake): what happened, where a request's path would be (the row read only `✕`).
    if (!summary.url && summary.error_kind && !isUnused(summary)) return `(${summary.error_kind.replaceAll("_", " ")})`;
    const operations = operationsText(summary.graphql);
    if (!operations) return pathOf(summary.url);
    let path = pathOf(summary.url);
    try {
        path = new URL(summary.url).pathname;
    } catch {
        // Not a URL: its text as it is.
    }
    return `${path} · ${operations}`;
}

/** The Path cell's tooltip: the URL; for a GraphQL call the operations too, on a line of their own. */
export function pathTitle(summary) {
    const operations = operationsText(summary.graphql);
    return operations ? `${summary.url ?? ""}\n${operations}` : summary.url;
}

/** The errors a GraphQL response reported (its top-level `errors`), 0 when none or not known. */
function graphQLErrors(summary) {
    const errors = summary.graphql?.errors;
    return typeof errors === "number" && errors > 0 ? errors : 0;
}

/** gRPC status names (grpc/grpc doc/statuscodes.md), for a failed call whose HTTP status is 200. */
const GRPC_STATUS = ["OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
    "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"];
/** The codes that say the server or the network failed, coloured as 5xx; the rest as 4xx. */
const GRPC_SERVER_FAULTS = new Set([2, 4, 8, 13, 14, 15]);

/** A gRPC status code's name (`NOT_FOUND`), or `gRPC N` for a code outside the list. */
export function grpcStatusName(code) {
    return GRPC_STATUS[code] ?? `gRPC ${code}`;
}

function statusText(summary) {
    if (summary.status != null && summary.grpc_status) {
        return `${summary.status} · ${grpcStatusName(summary.grpc_status)}`;
    }
    // A gRPC call that ended in an error before any response (a reset at its deadline) still has
    // the status its client reads: `✕ · DEADLINE_EXCEEDED`.
    if (summary.error_kind && summary.grpc_status) return `✕ · ${grpcStatusName(summary.grpc_status)}`;
    // A GraphQL call whose response reported errors, whatever its HTTP status said.
    if (summary.status != null && graphQLErrors(summary)) return `${summary.status} · errors`;
    if (summary.status != null) return String(summary.status);
    if (isUnused(summary)) return "unused";
    if (summary.error_kind) return "✕";
    if (isTunnel(summary)) return "";
    return isPending(summary) ? "…" : "";
}

/**
 * The status cell's tooltip, whole where the cell may cut it short: `HTTP 200 · gRPC 5 NOT_FOUND`,
 * `client_reset · gRPC 4 DEADLINE_EXCEEDED`.
 */
export function statusTitle(summary) {
    if (summary.status != null && summary.grpc_status) {
        return `HTTP ${summary.status} · gRPC ${summary.grpc_status} ${grpcStatusName(summary.grpc_status)}`;
    }
    if (summary.error_kind && summary.grpc_status) {
        return `${summary.error_kind} · gRPC ${summary.grpc_status} ${grpcStatusName(summary.grpc_status)}`;
    }
    if (summary.status != null && graphQLErrors(summary)) {
        return `HTTP ${summary.status} · GraphQL: ${errorsText(graphQLErrors(summary))}`;
    }
    if (summary.error_kind && summary.status == null) return summary.error_kind;
    return summary.status != null ? `HTTP ${summary.status}` : "";
}

/** `s2xx`…`s5xx` for colouring, or "". */
export function statusClass(summary) {
    if (summary.grpc_status) return GRPC_SERVER_FAULTS.has(summary.grpc_status) ? "s5xx" : "s4xx";
    const status = summary.status;
    // Coloured as a failed request is: the list's 200s read as fine.
    if (graphQLErrors(summary) && status >= 200 && status < 300) return "s4xx";
    if (typeof status !== "number" || status < 100 || status > 599) return "";
    return `s${Math.floor(status / 100)}xx`;
}

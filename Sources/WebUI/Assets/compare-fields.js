// The rows of "Compare" (compare.js): each item of two flows (method, URL, query parameters, header
// fields, cookies, status, sizes, timings) side by side, marked the same, changed, only in the base or
// only in the other, as DOM built from text. Pure functions of the two records.

import { h } from "./dom.js";
import { countOf, formatDuration, headerValues } from "./format.js";

const SYMBOLS = { same: "=", changed: "≠", removed: "−", added: "+", info: "" };
/** What each kind of row means, as its tooltip and its mark's accessible name. */
export const TITLES = { same: "the same", changed: "differs", removed: "only in the base", added: "only in the other",
    info: "" };

/** Same or different bytes, by size and SHA-256 (of the bytes as sent): no byte diff. */
export function bytesVerdict(content, bodyA, bodyB) {
    const same = (bodyA?.size ?? 0) === (bodyB?.size ?? 0) && (bodyA?.sha256 ?? "") === (bodyB?.sha256 ?? "");
    const rows = [
        fieldRow("Size", bodyA ? exactSize(bodyA.size) : null, bodyB ? exactSize(bodyB.size) : null),
        fieldRow("SHA-256", bodyA?.sha256 || null, bodyB?.sha256 || null),
    ];
    content.append(h("p", { class: "compare-note" }, same
        ? "the same bytes (size and SHA-256 of the body as sent)"
        : "different bytes (size or SHA-256 of the body as sent); not compared byte by byte"),
    fieldTable(rows.map((row) => row.node)));
    return same ? 0 : 1;
}

function exactSize(bytes) {
    return `${Number(bytes ?? 0).toLocaleString("en")} ${bytes === 1 ? "byte" : "bytes"}`;
}

/**
 * Name/value pairs of both sides, matched by name (in any case when `caseless`, as HTTP field names
 * are), the n-th value of a name against the other's n-th: `[name, baseValue, otherValue]`, null
 * where a side has none; names in the base's order, then the other's new ones.
 */
export function pairRows(pairsA, pairsB, caseless) {
    const groups = new Map();
    [pairsA ?? [], pairsB ?? []].forEach((pairs, side) => {
        for (const [name, value] of pairs) {
            const key = caseless ? String(name).toLowerCase() : String(name);
            if (!groups.has(key)) groups.set(key, { name: String(name), values: [[], []] });
            groups.get(key).values[side].push(String(value ?? ""));
        }
    });
    const rows = [];
    for (const { name, values } of groups.values()) {
        for (let index = 0; index < Math.max(values[0].length, values[1].length); index += 1) {
            rows.push(fieldRow(name, values[0][index] ?? null, values[1][index] ?? null));
        }
    }
    return rows;
}

/** The URL's query parameters as a server reads them, or none. */
export function queryOf(flow) {
    try {
        return [...new URL(flow.request?.url ?? "").searchParams];
    } catch {
        return [];
    }
}

/** The request's cookies: `name=value` of each `Cookie` field (RFC 6265 §5.4). */
export function cookiesOf(flow) {
    return headerValues(flow.request?.headers, "cookie").flatMap((value) => value.split(";"))
        .map((pair) => pair.trim()).filter(Boolean)
        .map((pair) => {
            const equals = pair.indexOf("=");
            return equals < 0 ? ["", pair] : [pair.slice(0, equals).trim(), pair.slice(equals + 1).trim()];
        });
}

/** Each `Set-Cookie` by the cookie's name: its value and attributes as sent. */
export function setCookiesOf(flow) {
    return headerValues(flow.response?.headers, "set-cookie").map((field) => {
        const equals = field.indexOf("=");
        const semicolon = field.indexOf(";");
        if (equals < 0 || (semicolon >= 0 && semicolon < equals)) return ["", field.trim()];
        return [field.slice(0, equals).trim(), field.slice(equals + 1).trim()];
    });
}

/** The URL without its query (the parameters have rows of their own). */
function withoutQuery(url) {
    try {
        const parsed = new URL(url);
        return `${parsed.origin}${parsed.pathname}`;
    } catch {
        return url ?? null;
    }
}

export function overviewRows(a, b) {
    const value = (text) => text === undefined || text === null || text === "" ? null : String(text);
    return [
        fieldRow("Method", value(a.request?.method), value(b.request?.method)),
        fieldRow("URL", value(withoutQuery(a.request?.url)), value(withoutQuery(b.request?.url))),
        fieldRow("HTTP version", value(a.request?.http_version), value(b.request?.http_version)),
    ];
}

export function responseRows(a, b) {
    const status = (flow) => flow.response
        ? `${flow.response.status ?? ""} ${flow.response.reason ?? ""}`.trim() : null;
    const error = (flow) => flow.error ? `${flow.error.kind ?? "error"}: ${flow.error.message ?? ""}` : null;
    const version = (flow) => flow.response?.http_version || null;
    const rows = [fieldRow("Status", status(a), status(b)), fieldRow("HTTP version", version(a), version(b))];
    if (a.error || b.error) rows.push(fieldRow("Error", error(a), error(b)));
    return rows;
}

export function sizeRows(a, b) {
    const size = (flow, side) => flow[side]?.body ? exactSize(flow[side].body.size) : null;
    const rows = [fieldRow("Request body", size(a, "request"), size(b, "request")),
        fieldRow("Response body", size(a, "response"), size(b, "response"))];
    const phases = ["connect", "tls", "send", "wait", "receive"];
    const total = (flow) => {
        if (!flow.timings) return null;
        return phases.reduce((sum, phase) => sum + (flow.timings[phase] > 0 ? flow.timings[phase] : 0), 0);
    };
    const time = (ms) => ms === null || ms === undefined || ms < 0 ? null : formatDuration(ms) || "0 ms";
    for (const phase of phases) {
        rows.push(fieldRow(phase === "tls" ? "TLS" : phase, time(a.timings?.[phase]), time(b.timings?.[phase]), true));
    }
    rows.push(fieldRow("total", time(total(a)), time(total(b)), true));
    return rows;
}

/**
 * One compared row: `{kind, node}`, kind `same`, `changed`, `removed` (base only) or `added`
 * (other only); `info` rows (timings) say their values and count as no difference.
 */
function fieldRow(name, valueA, valueB, info = false) {
    let kind = valueA === null && valueB === null ? "same"
        : valueA === null ? "added" : valueB === null ? "removed" : valueA === valueB ? "same" : "changed";
    if (info) kind = "info";
    const [cellA, cellB] = textCells(valueA, valueB, kind);
    const node = h("tr", { class: `diff-${kind}` },
        h("td", { class: "diff-mark", title: TITLES[kind] || false, "aria-label": TITLES[kind] || false },
            SYMBOLS[kind]),
        h("th", { scope: "row" }, name), cellA, cellB);
    return { kind, node };
}

/**
 * The two cells of a row; a changed pair has what differs between their common start and end
 * marked, so a token that changed in one character is seen at once.
 */
export function textCells(textA, textB, kind) {
    const cell = (text, other) => {
        if (text === null || text === undefined) return h("td", { class: "diff-text diff-absent" }, "—");
        if (kind !== "changed" || other === null || other === undefined) return h("td", { class: "diff-text" }, text);
        let start = 0;
        while (start < text.length && start < other.length && text[start] === other[start]) start += 1;
        let end = 0;
        while (end < text.length - start && end < other.length - start
            && text[text.length - 1 - end] === other[other.length - 1 - end]) end += 1;
        return h("td", { class: "diff-text" }, text.slice(0, start),
            h("mark", {}, text.slice(start, text.length - end)), text.slice(text.length - end));
    };
    return [cell(textA, textB), cell(textB, textA)];
}

function fieldTable(rows) {
    return h("table", { class: "compare-fields" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col", class: "diff-mark" }, ""), h("th", { scope: "col" }, "Name"),
            h("th", { scope: "col" }, "Base"), h("th", { scope: "col" }, "Other"))),
        h("tbody", {}, rows));
}

/**
 * A section of compared rows: `{title, differences, node}`; null when neither side has any row.
 * With only differences shown, the rows that are the same are left out (timings always show).
 */
export function sectionOf(title, rows, key, onlyDifferences, note) {
    if (!rows.length) return null;
    const differences = rows.filter((row) => row.kind !== "same" && row.kind !== "info").length;
    const shown = rows.filter((row) => !onlyDifferences || row.kind !== "same");
    const node = h("section", { class: `compare-section compare-${key}`, "aria-label": title },
        h("h3", {}, title, " ", h("span", { class: "compare-count muted" })),
        note ? h("p", { class: "compare-note" }, note) : null,
        shown.length ? fieldTable(shown.map((row) => row.node))
            : h("p", { class: "muted" }, `the same (${countOf(rows.length, "row", "rows")})`));
    return { title, differences, node };
}

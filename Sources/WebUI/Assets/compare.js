// <flow-compare>: two flows side by side, what differs marked, as Proxyman's Diff and Charles's
// Compare: "why does this request work and that one fail?". "Compare…" in the pane (or `c` in the
// list) makes a flow the base; on another flow, "Compare with <base>" (or `c` again) opens the
// comparison, the base on the left; Esc closes it. The address says `#compare=BASE,OTHER`.
//
// Method, URL and each query parameter, status and HTTP versions, each header field (matched by
// name in any case, repeated fields in order), cookies, sizes and timings are compared here; the
// bodies in a worker (compare-worker.js: the first MiB of each, JSON with its keys sorted, a line
// diff), which the page asks for the rows it shows. Captured content is only ever text.

import { api } from "./api.js";
import { FIRST_PART, viewKind } from "./body-view.js";
import { h, replaceChildren, setSafeAttribute } from "./dom.js";
import { countOf, formatDuration, formatSize, headerValue, headerValues, mediaType, pathOf } from "./format.js";
import { store } from "./store.js";

/** Kept lines shown around each changed one when only differences are shown. */
const CONTEXT = 3;
/** Body rows drawn at a time; "show more" draws the next. */
const ROW_PAGE = 1000;
const SYMBOLS = { same: "=", changed: "≠", removed: "−", added: "+", info: "" };
const TITLES = { same: "the same", changed: "differs", removed: "only in the base", added: "only in the other", info: "" };

/** "GET /path" of each flow seen here (a pane's, a comparison's), for the button and the notes. */
const labels = new Map();

/** What a flow record or summary is called on a button: its method and path. */
function labelOf(flow) {
    const method = flow?.request?.method ?? flow?.method ?? "";
    const url = flow?.request?.url ?? flow?.url ?? "";
    return `${method} ${pathOf(url)}`.trim() || String(flow?.id ?? "");
}

/** The label of flow `id`, asking the API when it was not seen here. */
async function labelFor(id) {
    if (labels.has(id)) return labels.get(id);
    try {
        const answer = await api.flow(id, undefined, 0);
        labels.set(id, labelOf(answer.pending ? answer.summary : answer));
    } catch {
        labels.set(id, id);
    }
    return labels.get(id);
}

/**
 * "Compare…" for flow `id` (the pane's button, the list's `c`): with no base, makes it the base;
 * on the base itself, unsets it; on another flow, opens the comparison of the base with it.
 */
export async function compareFrom(id) {
    const base = store.compareBase;
    if (base && base !== id) {
        store.setComparing([base, id]);
        return;
    }
    if (base === id) {
        store.setCompareBase(null);
        store.notify("no comparison base now");
        return;
    }
    store.setCompareBase(id);
    const label = await labelFor(id);
    if (store.compareBase !== id) return;
    paintButton(document.getElementById("compare"));
    store.notify(`comparison base: ${label}. Open another flow and press c (or Compare with…) to compare them`);
}

/** The pane's "Compare…" / "Compare with GET /path" button for `flow` (its record). */
export function compareButton(flow) {
    labels.set(flow.id, labelOf(flow));
    const button = h("button", {
        type: "button", id: "compare", "data-id": flow.id, on: { click: () => compareFrom(flow.id) },
    });
    paintButton(button);
    return button;
}

function paintButton(button) {
    if (!button) return;
    const id = button.getAttribute("data-id");
    const base = store.compareBase;
    if (!base) {
        button.textContent = "Compare…";
        setSafeAttribute(button, "title", "Make this flow the base of a comparison (c), then open another flow and "
            + "compare it with this one");
    } else if (base === id) {
        button.textContent = "Comparison base";
        setSafeAttribute(button, "title", "This flow is the base: open another flow and compare it with this one "
            + "(c); click to unset");
    } else {
        const label = labels.get(base) ?? base;
        button.textContent = `Compare with ${label}`;
        setSafeAttribute(button, "title", `Compare this flow with the base, ${label} (c)`);
    }
    setSafeAttribute(button, "aria-pressed", String(base === id));
}

store.addEventListener("compare-base", () => paintButton(document.getElementById("compare")));

// The worker, shared by every comparison; each asks by request number.
let worker = null;
let nextRequest = 1;
let nextDoc = 1;
const waiting = new Map();

function ask(message) {
    if (!worker) {
        worker = new Worker("compare-worker.js");
        worker.onmessage = (event) => {
            const done = waiting.get(event.data.req);
            waiting.delete(event.data.req);
            done?.(event.data);
        };
    }
    const req = nextRequest++;
    return new Promise((resolve) => {
        waiting.set(req, resolve);
        worker.postMessage({ ...message, req });
    });
}

/**
 * A flow as the API answers it, as a record to compare: a finished flow's record, a running one's
 * record so far, or what its summary and header fields so far say. `pending`: it has not ended.
 */
function comparable(answer) {
    if (!answer.pending) return { flow: answer, pending: false };
    if (answer.record) return { flow: { ...answer.record, id: answer.id }, pending: true };
    const summary = answer.summary ?? {};
    return {
        pending: true,
        flow: {
            id: answer.id,
            request: { method: summary.method, url: summary.url, headers: answer.request?.headers ?? [] },
            response: answer.response?.headers ? { status: summary.status, headers: answer.response.headers } : null,
        },
    };
}

class FlowCompare extends HTMLElement {
    #controller = null;
    /** The worker's documents of the comparison on show (closed when it goes). */
    #docs = [];
    /** `{base, other}` of the comparison on show: `{flow, pending}` each. */
    #shown = null;
    #onlyDifferences = true;
    #refresh = 0;
    /** The sections on show: `{title, differences, node}`, differences null while a body is compared. */
    #sections = [];

    connectedCallback() {
        if (this.hasAttribute("role")) return;
        setSafeAttribute(this, "role", "region");
        setSafeAttribute(this, "aria-label", "Compare flows");
        setSafeAttribute(this, "tabindex", -1);
        store.addEventListener("compare", () => this.#open(store.comparing));
        if (store.comparing) this.#open(store.comparing);
    }

    #release() {
        this.#controller?.abort();
        clearTimeout(this.#refresh);
        this.#refresh = 0;
        for (const doc of this.#docs) worker?.postMessage({ type: "close", doc });
        this.#docs = [];
    }

    async #open(pair, again = false) {
        this.#release();
        if (!pair) {
            const focused = this.contains(document.activeElement);
            this.hidden = true;
            this.#shown = null;
            replaceChildren(this);
            if (focused) document.querySelector("flow-list")?.focusList?.();
            return;
        }
        const controller = new AbortController();
        this.#controller = controller;
        this.hidden = false;
        if (!again) {
            setSafeAttribute(this, "aria-busy", "true");
            replaceChildren(this, this.#head(null), h("p", { class: "muted" }, "loading the two flows…"));
        }
        try {
            const [base, other] = await Promise.all(pair.map((id) => api.flow(id, controller.signal, 0)));
            if (controller.signal.aborted) return;
            this.#shown = { base: comparable(base), other: comparable(other) };
            labels.set(pair[0], labelOf(this.#shown.base.flow));
            labels.set(pair[1], labelOf(this.#shown.other.flow));
            this.#render(controller.signal);
            if (!again) this.focus();
            // A flow still running compares what it has; it is compared again until it ends.
            if (this.#shown.base.pending || this.#shown.other.pending) {
                this.#refresh = setTimeout(() => this.#open(pair, true), 1000);
            }
        } catch (error) {
            if (controller.signal.aborted) return;
            replaceChildren(this, this.#head(null), h("p", { class: "error-text", role: "alert" },
                `could not compare ${pair.join(" with ")}: ${error.message}`));
        } finally {
            if (this.#controller === controller) this.removeAttribute("aria-busy");
        }
    }

    #head(shown) {
        const close = h("button", {
            type: "button", class: "close", "aria-label": "Close the comparison (Esc)",
            on: { click: () => store.setComparing(null) },
        }, "×");
        if (!shown) return h("div", { class: "compare-head" }, close, h("h2", { class: "compare-title" }, "Compare"));
        const only = h("input", {
            type: "checkbox", id: "compare-only", checked: this.#onlyDifferences,
            on: {
                change: (event) => {
                    this.#onlyDifferences = event.target.checked;
                    this.#render(this.#controller.signal);
                },
            },
        });
        const swap = h("button", {
            type: "button", id: "compare-swap", title: "Make the other flow the base",
            on: { click: () => store.setComparing([...store.comparing].reverse()) },
        }, "⇄ swap");
        const side = (which, { flow, pending }) => h("div", { class: `compare-side compare-${which}` },
            h("span", { class: "compare-role" }, which === "base" ? "Base" : "Other"), " ",
            h("span", { class: "method" }, flow.request?.method ?? ""), " ",
            h("span", { class: "url" }, flow.request?.url ?? ""),
            h("span", { class: "muted" }, ` · ${flow.response?.status ?? "no response"}`,
                pending ? " · in progress" : "", ` · flow ${flow.id}`));
        return h("div", { class: "compare-head" }, close,
            h("h2", { class: "compare-title" }, "Compare"),
            h("div", { class: "compare-tools" }, h("label", {}, only, " only differences"), swap),
            h("p", { class: "compare-summary", role: "status" }, "comparing…"),
            h("div", { class: "compare-sides" }, side("base", shown.base), side("other", shown.other)));
    }

    #render(signal) {
        const { base, other } = this.#shown;
        for (const doc of this.#docs) worker?.postMessage({ type: "close", doc });
        this.#docs = [];
        const a = base.flow;
        const b = other.flow;
        const only = this.#onlyDifferences;
        const fieldSection = (title, rows, key, note) => sectionOf(title, rows, key, only, note);
        const sections = [
            fieldSection("Request", overviewRows(a, b), "request-line"),
            fieldSection("Query parameters", pairRows(queryOf(a), queryOf(b), false), "query"),
            fieldSection("Request headers", pairRows(a.request?.headers, b.request?.headers, true), "request-headers"),
            fieldSection("Cookies", pairRows(cookiesOf(a), cookiesOf(b), false), "cookies"),
            this.#bodySection("Request body", "request", base, other, signal),
            fieldSection("Response", responseRows(a, b), "response-line"),
            fieldSection("Response headers", pairRows(a.response?.headers, b.response?.headers, true),
                "response-headers"),
            fieldSection("Set-Cookie", pairRows(setCookiesOf(a), setCookiesOf(b), false), "set-cookies"),
            fieldSection("Trailers", pairRows(a.response?.trailers, b.response?.trailers, true), "trailers"),
            this.#bodySection("Response body", "response", base, other, signal),
            fieldSection("Sizes and timings", sizeRows(a, b), "timings",
                "timings are measurements: shown side by side, not counted as differences"),
        ].filter(Boolean);
        // Drawn again (a running flow's refresh, the toggle): the reader stays where they were.
        const scrolled = this.querySelector(".compare-body")?.scrollTop ?? 0;
        replaceChildren(this, this.#head(this.#shown), h("div", { class: "compare-body", tabindex: 0 },
            sections.map((section) => section.node)));
        this.querySelector(".compare-body").scrollTop = scrolled;
        this.#sections = sections;
        this.#summarise();
    }

    /** The summary line: how many differences, and where. */
    #summarise() {
        const line = this.querySelector(".compare-summary");
        if (!line) return;
        const waiting = this.#sections.some((section) => section.differences === null);
        const found = this.#sections.filter((section) => section.differences > 0);
        const total = found.reduce((sum, section) => sum + section.differences, 0);
        const where = found.map((section) => `${section.differences} in ${section.title.toLowerCase()}`).join(", ");
        line.textContent = total === 0
            ? (waiting ? "no differences so far; comparing the bodies…" : "no differences")
            : `${countOf(total, "difference", "differences")}: ${where}${waiting ? "; comparing the bodies…" : ""}`;
        for (const section of this.#sections) {
            const count = section.node.querySelector(".compare-count");
            if (!count) continue;
            count.textContent = section.differences === null ? "comparing…"
                : section.differences === 0 ? "the same" : countOf(section.differences, "difference", "differences");
        }
    }

    /** A body's section: the same or not by its bytes, or its lines side by side (in the worker). */
    #bodySection(title, side, base, other, signal) {
        const bodyA = base.flow[side]?.body;
        const bodyB = other.flow[side]?.body;
        const content = h("div", { class: "compare-body-diff" });
        const section = { title, differences: null, node: null };
        section.node = h("section", { class: `compare-section compare-${side}-body`, "aria-label": title },
            h("h3", {}, title, " ", h("span", { class: "compare-count muted" })), content);
        const note = (text) => content.append(h("p", { class: "compare-note" }, text));
        if (base.pending || other.pending) {
            const running = [base.pending ? "the base" : "", other.pending ? "the other" : ""].filter(Boolean);
            note(`${running.join(" and ")} ${running.length > 1 ? "have" : "has"} not ended: bodies are compared `
                + "when both have");
            section.differences = 0;
            return section;
        }
        const sizeA = bodyA?.size ?? 0;
        const sizeB = bodyB?.size ?? 0;
        if (!sizeA && !sizeB) {
            note("no body on either side");
            section.differences = 0;
            return section;
        }
        const typeA = mediaType(headerValue(base.flow[side]?.headers, "content-type"));
        const typeB = mediaType(headerValue(other.flow[side]?.headers, "content-type"));
        const binary = (type, size) => size > 0 && ["image", "binary"].includes(viewKind(type));
        if ((sizeA === sizeB && bodyA?.sha256 && bodyA.sha256 === bodyB?.sha256)
            || binary(typeA, sizeA) || binary(typeB, sizeB)) {
            section.differences = bytesVerdict(content, bodyA, bodyB);
            return section;
        }
        const doc = nextDoc++;
        this.#docs.push(doc);
        content.append(h("p", { class: "muted" }, "comparing…"));
        const request = (flow) => {
            const { url, headers } = api.bodyRequest(flow.id, side, FIRST_PART);
            return { url, headers };
        };
        ask({ type: "compare", doc, base: request(base.flow), other: request(other.flow) }).then(async (answer) => {
            if (signal.aborted || !this.#docs.includes(doc)) return;
            replaceChildren(content);
            if (answer.type === "error") {
                note(`the bodies could not be compared: ${answer.message}`);
                section.differences = 0;
            } else if (answer.binary) {
                section.differences = bytesVerdict(content, bodyA, bodyB);
            } else {
                section.differences = answer.counts.changed + answer.counts.removed + answer.counts.added;
                content.append(...bodyNotes(answer, sizeA, sizeB));
                if (section.differences === 0) {
                    note(`the same ${answer.json ? "JSON" : "text"} (${countOf(answer.lines[0], "line", "lines")})`);
                }
                if (section.differences > 0 || !this.#onlyDifferences) {
                    await this.#bodyRows(content, doc, 0, signal);
                }
            }
            this.#summarise();
        });
        return section;
    }

    /** Draws body rows from `from` on (a page of them) and, past them, "show more". */
    async #bodyRows(content, doc, from, signal) {
        const answer = await ask({ type: "rows", doc, from, count: ROW_PAGE,
            context: this.#onlyDifferences ? CONTEXT : null });
        if (signal.aborted || !this.#docs.includes(doc)) return;
        let table = content.querySelector("table.diff-lines");
        if (!table) {
            table = h("table", { class: "diff-lines" },
                h("thead", {}, h("tr", {}, h("th", { scope: "col", class: "diff-number" }, "#"),
                    h("th", { scope: "col" }, "Base"), h("th", { scope: "col", class: "diff-number" }, "#"),
                    h("th", { scope: "col" }, "Other"))),
                h("tbody", {}));
            content.append(table);
        }
        const body = table.tBodies[0];
        for (const row of answer.rows) {
            if (row[0] === "gap") {
                body.append(h("tr", { class: "diff-gap" }, h("td", { colspan: 4 },
                    `⋯ ${countOf(row[1], "unchanged line", "unchanged lines")}`)));
                continue;
            }
            const [kind, lineA, textA, lineB, textB] = row;
            const [cellA, cellB] = textCells(textA, textB, kind);
            body.append(h("tr", { class: `diff-${kind}`, title: TITLES[kind] },
                h("td", { class: "diff-number" }, lineA >= 0 ? lineA + 1 : ""), cellA,
                h("td", { class: "diff-number" }, lineB >= 0 ? lineB + 1 : ""), cellB));
        }
        content.querySelector(".diff-more")?.remove();
        const next = from + answer.rows.length;
        if (next < answer.total) {
            content.append(h("button", {
                type: "button", class: "diff-more", on: {
                    click: (event) => {
                        event.currentTarget.disabled = true;
                        this.#bodyRows(content, doc, next, signal);
                    },
                },
            }, `show ${countOf(Math.min(ROW_PAGE, answer.total - next), "more row", "more rows")} `
                + `(${(answer.total - next).toLocaleString("en")} left)`));
        }
    }
}

/** What the worker's answer says of how the bodies were compared: JSON canonical, cut, approximate. */
function bodyNotes(answer, sizeA, sizeB) {
    const notes = [];
    if (answer.json) {
        notes.push("JSON on both sides: compared with keys sorted and pretty-printed, so key order and spacing "
            + "are not differences");
    } else if (answer.base.json !== answer.other.json && (answer.base.json || answer.other.json)) {
        notes.push(`compared as text: the ${answer.base.json ? "other's" : "base's"} body is not JSON`);
    }
    if (answer.base.cut || answer.other.cut) {
        notes.push(`compared the first ${formatSize(FIRST_PART)} of each body (the base's is ${formatSize(sizeA)}, `
            + `the other's ${formatSize(sizeB)}): the rest is not compared`);
    }
    if (answer.approximate) {
        notes.push("the bodies differ in too many places to match every line: some differing stretches are shown "
            + "as removed and added whole");
    }
    return notes.map((text) => h("p", { class: "compare-note" }, text));
}

/** Same or different bytes, by size and SHA-256 (of the bytes as sent): no byte diff. */
function bytesVerdict(content, bodyA, bodyB) {
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
function pairRows(pairsA, pairsB, caseless) {
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
function queryOf(flow) {
    try {
        return [...new URL(flow.request?.url ?? "").searchParams];
    } catch {
        return [];
    }
}

/** The request's cookies: `name=value` of each `Cookie` field (RFC 6265 §5.4). */
function cookiesOf(flow) {
    return headerValues(flow.request?.headers, "cookie").flatMap((value) => value.split(";"))
        .map((pair) => pair.trim()).filter(Boolean)
        .map((pair) => {
            const equals = pair.indexOf("=");
            return equals < 0 ? ["", pair] : [pair.slice(0, equals).trim(), pair.slice(equals + 1).trim()];
        });
}

/** Each `Set-Cookie` by the cookie's name: its value and attributes as sent. */
function setCookiesOf(flow) {
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

function overviewRows(a, b) {
    const value = (text) => text === undefined || text === null || text === "" ? null : String(text);
    return [
        fieldRow("Method", value(a.request?.method), value(b.request?.method)),
        fieldRow("URL", value(withoutQuery(a.request?.url)), value(withoutQuery(b.request?.url))),
        fieldRow("HTTP version", value(a.request?.http_version), value(b.request?.http_version)),
    ];
}

function responseRows(a, b) {
    const status = (flow) => flow.response ? `${flow.response.status ?? ""} ${flow.response.reason ?? ""}`.trim() : null;
    const error = (flow) => flow.error ? `${flow.error.kind ?? "error"}: ${flow.error.message ?? ""}` : null;
    const version = (flow) => flow.response?.http_version || null;
    const rows = [fieldRow("Status", status(a), status(b)), fieldRow("HTTP version", version(a), version(b))];
    if (a.error || b.error) rows.push(fieldRow("Error", error(a), error(b)));
    return rows;
}

function sizeRows(a, b) {
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
        h("td", { class: "diff-mark", title: TITLES[kind] || false, "aria-label": TITLES[kind] || false }, SYMBOLS[kind]),
        h("th", { scope: "row" }, name), cellA, cellB);
    return { kind, node };
}

/**
 * The two cells of a row; a changed pair has what differs between their common start and end
 * marked, so a token that changed in one character is seen at once.
 */
function textCells(textA, textB, kind) {
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
function sectionOf(title, rows, key, onlyDifferences, note) {
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

customElements.define("flow-compare", FlowCompare);

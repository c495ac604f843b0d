// The bodies of "Compare" (compare.js): two bodies the same or not by their bytes, or their lines side
// by side, compared in a worker (compare-worker.js: the first MiB of each, JSON with its keys sorted, a
// line diff) that keeps the result; the page draws its rows a page at a time.

import { api } from "./api.js";
import { FIRST_PART, viewKind } from "./body-view.js";
import { TITLES, bytesVerdict, textCells } from "./compare-fields.js";
import { h, replaceChildren } from "./dom.js";
import { countOf, formatSize, headerValue, mediaType } from "./format.js";

/** Kept lines shown around each changed one when only differences are shown. */
const CONTEXT = 3;
/** Body rows drawn at a time; "show more" draws the next. */
const ROW_PAGE = 1000;

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
 * A body's section of the comparison, `{title, differences, node}`: the same or not by its bytes, or
 * its lines side by side (compared in the worker; `differences` null until then, and `compared()`
 * called once it is known). `signal` aborts when the comparison is drawn again or closed.
 */
export function bodySection(title, side, base, other, { signal, onlyDifferences, compared }) {
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
    signal.addEventListener("abort", () => worker?.postMessage({ type: "close", doc }));
    content.append(h("p", { class: "muted" }, "comparing…"));
    const request = (flow) => {
        const { url, headers } = api.bodyRequest(flow.id, side, FIRST_PART);
        return { url, headers };
    };
    const form = typeA === "application/x-www-form-urlencoded" && typeB === typeA;
    ask({ type: "compare", doc, base: request(base.flow), other: request(other.flow), form }).then(async (answer) => {
        if (signal.aborted) return;
        replaceChildren(content);
        if (answer.type === "error") {
            note(`the bodies could not be compared: ${answer.message}`);
            section.differences = 0;
        } else if (answer.binary) {
            section.differences = bytesVerdict(content, bodyA, bodyB);
        } else {
            section.differences = answer.counts.changed + answer.counts.removed + answer.counts.added;
            const jsonType = [typeA, typeB].some((type) => viewKind(type) === "json");
            content.append(...bodyNotes(answer, sizeA, sizeB, jsonType));
            if (section.differences === 0) {
                note(answer.form ? `the same form (${countOf(answer.lines[0], "field", "fields")})`
                    : `the same ${answer.json ? "JSON" : "text"} (${countOf(answer.lines[0], "line", "lines")})`);
            }
            if (section.differences > 0 || !onlyDifferences) {
                await bodyRows(content, doc, 0, signal, onlyDifferences);
            }
        }
        compared();
    });
    return section;
}

/** Draws body rows from `from` on (a page of them) and, past them, "show more". */
async function bodyRows(content, doc, from, signal, onlyDifferences) {
    const answer = await ask({ type: "rows", doc, from, count: ROW_PAGE,
        context: onlyDifferences ? CONTEXT : null });
    if (signal.aborted) return;
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
                    bodyRows(content, doc, next, signal, onlyDifferences);
                },
            },
        }, `show ${countOf(Math.min(ROW_PAGE, answer.total - next), "more row", "more rows")} `
            + `(${(answer.total - next).toLocaleString("en")} left)`));
    }
}

/**
 * What the worker's answer says of how the bodies were compared: JSON canonical, forms by field, cut,
 * approximate. `jsonType`: a side's Content-Type is JSON (cut short, it is compared as text).
 */
function bodyNotes(answer, sizeA, sizeB, jsonType) {
    const notes = [];
    if (answer.json) {
        notes.push("JSON on both sides: compared with keys sorted and pretty-printed, so key order and spacing "
            + "are not differences");
    } else if (answer.form) {
        notes.push("URL-encoded forms on both sides: compared as their fields, name=value one a line, decoded and "
            + "sorted by name, so field order is not a difference");
    } else if (answer.base.json !== answer.other.json && (answer.base.json || answer.other.json)) {
        notes.push(`compared as text: the ${answer.base.json ? "other's" : "base's"} body is not JSON`);
    }
    if (answer.base.cut || answer.other.cut) {
        notes.push(`compared the first ${formatSize(FIRST_PART)} of each body (the base's is ${formatSize(sizeA)}, `
            + `the other's ${formatSize(sizeB)}): the rest is not compared`
            + (jsonType && !answer.json ? "; JSON cut short is compared as text, its keys as sent" : ""));
    }
    if (answer.approximate) {
        notes.push("the bodies differ in too many places to match every line: some differing stretches are shown "
            + "as removed and added whole");
    }
    return notes.map((text) => h("p", { class: "compare-note" }, text));
}

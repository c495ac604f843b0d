// A Web Worker for "Compare" (compare.js): it fetches the two bodies itself (the first MiB of each,
// decoded, as the detail pane reads them), puts JSON in its canonical form (keys sorted), diffs the
// lines (compare-diff.js) and keeps the result; the page asks for the rows it shows, a page at a
// time. So a pair of megabyte bodies costs the page's main thread the rows in view, never the
// bodies or the diff.
//
// In:  {type: "compare", req, doc, base: {url, headers}, other: {url, headers}, form}
//                                                        form: both are URL-encoded forms
//      {type: "rows", req, doc, from, count, context}   context: lines kept around each change
//                                                        (null: every line)
//      {type: "close", doc}
// Out: {type: "compared", req, doc, base: SIDE, other: SIDE, json, form, approximate, lines: [a, b],
//       counts: {same, changed, removed, added}}
//      SIDE: {text: bool, bytes, cut, absent, error, json: bool | null}
//      {type: "rows", req, doc, rows: [[kind, aLine, aText, bLine, bText] | ["gap", count]], total}
//      {type: "error", req, doc, message}

importScripts("compare-diff.js");

/** Characters of one line sent to the page: a minified script's one line is cut for display. */
const LINE_SHOWN = 4000;

const docs = new Map();
/** The comparisons under way, by document: closing one stops its fetches and drops its result. */
const running = new Map();

self.onmessage = async (event) => {
    const message = event.data;
    try {
        if (message.type === "compare") {
            self.postMessage(await compare(message));
        } else if (message.type === "rows") {
            self.postMessage(rows(message));
        } else if (message.type === "close") {
            docs.delete(message.doc);
            running.get(message.doc)?.abort();
        }
    } catch (error) {
        self.postMessage({ type: "error", req: message.req, doc: message.doc,
            message: String(error?.message ?? error) });
    }
};

/**
 * One body, as the body route serves it with `?limit=`: `{text, bytes, cut, absent}`; `text` null
 * when the route serves it as bytes (not text: an image, octet-stream), `absent` when nothing is
 * stored (404).
 */
async function fetchBody({ url, headers }, signal) {
    const response = await fetch(url, { headers, credentials: "same-origin", signal });
    if (response.status === 404) return { text: "", bytes: 0, cut: false, absent: true };
    if (!response.ok) throw new Error(`the body could not be loaded: ${response.status} ${response.statusText}`);
    const buffer = await response.arrayBuffer();
    const textual = (response.headers.get("content-type") ?? "").toLowerCase().startsWith("text/plain");
    return {
        text: textual ? new TextDecoder("utf-8").decode(buffer) : null,
        bytes: buffer.byteLength,
        cut: response.headers.get("x-devproxy-limited") === "1",
        absent: false,
    };
}

async function compare({ req, doc, base, other, form }) {
    const controller = new AbortController();
    running.set(doc, controller);
    try {
        return await compareBodies(req, doc, base, other, form, controller.signal);
    } finally {
        running.delete(doc);
    }
}

/**
 * A URL-encoded form as lines `name=value`, decoded as a server reads them, sorted by name (a
 * repeated name's values in order): field order is no difference, as JSON's key order is not.
 */
function formLines(text) {
    return [...new URLSearchParams(text.trim())]
        .map(([name, value], index) => [name, index, `${name}=${value}`])
        .sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] - y[1]))
        .map((entry) => entry[2]).join("\n");
}

async function compareBodies(req, doc, base, other, form, signal) {
    const [a, b] = await Promise.all([fetchBody(base, signal), fetchBody(other, signal)]);
    const side = (body, json) => ({ text: body.text !== null, bytes: body.bytes, cut: body.cut, absent: body.absent,
        json });
    if (a.text === null || b.text === null) {
        return { type: "compared", req, doc, base: side(a, null), other: side(b, null), binary: true };
    }
    // JSON on both sides is compared in its canonical form, so key order and spacing are no difference.
    const canonicalA = a.cut ? null : canonicalJSON(a.text);
    const canonicalB = b.cut ? null : canonicalJSON(b.text);
    const json = canonicalA !== null && canonicalB !== null;
    const fields = !json && form && !a.cut && !b.cut;
    const diff = json ? diffLines(canonicalA, canonicalB)
        : fields ? diffLines(formLines(a.text), formLines(b.text)) : diffLines(a.text, b.text);
    const rowsOf = pairRows(diff, diff.a, diff.b);
    if (signal.aborted) return { type: "compared", req, doc, closed: true };
    docs.set(doc, { rows: rowsOf, a: diff.a, b: diff.b, collapsed: new Map() });
    const counts = { same: 0, changed: 0, removed: 0, added: 0 };
    for (let index = 0; index < rowsOf.kinds.length; index += 1) counts[KINDS[rowsOf.kinds[index]]] += 1;
    return {
        type: "compared", req, doc, binary: false, json, form: fields, approximate: diff.approximate,
        base: side(a, a.cut ? null : canonicalA !== null), other: side(b, b.cut ? null : canonicalB !== null),
        lines: [diff.a.length, diff.b.length], counts,
    };
}

const KINDS = ["same", "changed", "removed", "added"];

/**
 * The side-by-side rows of a line diff: a kept line is a `same` row; within a stretch between kept
 * lines, removed and added lines are paired in order as `changed` rows, the rest `removed` (base
 * only) or `added` (other only); a pair whose lines are the same (where an approximate diff gave a
 * stretch as removed and added whole) is a `same` row. Typed arrays: kind (an index of KINDS), the
 * base's line and the other's (0-based, -1 for none).
 */
function pairRows({ ops }, a, b) {
    const kinds = [];
    const left = [];
    const right = [];
    let i = 0;
    let j = 0;
    let index = 0;
    while (index < ops.length) {
        const [kind, count] = ops[index];
        if (kind === "=") {
            for (let n = 0; n < count; n += 1) {
                kinds.push(0);
                left.push(i++);
                right.push(j++);
            }
            index += 1;
            continue;
        }
        let removed = 0;
        let added = 0;
        while (index < ops.length && ops[index][0] !== "=") {
            if (ops[index][0] === "-") removed += ops[index][1];
            else added += ops[index][1];
            index += 1;
        }
        const paired = Math.min(removed, added);
        for (let n = 0; n < Math.max(removed, added); n += 1) {
            kinds.push(n < paired ? (a[i + n] === b[j + n] ? 0 : 1) : removed > added ? 2 : 3);
            left.push(n < removed ? i + n : -1);
            right.push(n < added ? j + n : -1);
        }
        i += removed;
        j += added;
    }
    return { kinds: Uint8Array.from(kinds), left: Int32Array.from(left), right: Int32Array.from(right) };
}

/**
 * The rows to show: every row (`context` null), or the changed ones with `context` kept rows around
 * each and a gap row (`["gap", n]`) for each run of kept rows left out. Memoised per context.
 */
function visible(doc, context) {
    const all = doc.rows.kinds.length;
    if (context === null || context === undefined) return null;
    const known = doc.collapsed.get(context);
    if (known) return known;
    const { kinds } = doc.rows;
    // Each row's distance to the nearest changed row (within context), from both sides.
    const keep = new Uint8Array(all);
    let last = -Infinity;
    for (let r = 0; r < all; r += 1) {
        if (kinds[r] !== 0) last = r;
        if (r - last <= context) keep[r] = 1;
    }
    last = Infinity;
    for (let r = all - 1; r >= 0; r -= 1) {
        if (kinds[r] !== 0) last = r;
        if (last - r <= context) keep[r] = 1;
    }
    // Entries: a row's index (≥ 0), or −n for a gap of n rows.
    const entries = [];
    let gap = 0;
    for (let r = 0; r < all; r += 1) {
        if (keep[r]) {
            if (gap) entries.push(-gap);
            gap = 0;
            entries.push(r);
        } else {
            gap += 1;
        }
    }
    if (gap) entries.push(-gap);
    const list = Int32Array.from(entries);
    doc.collapsed.set(context, list);
    return list;
}

function rows({ req, doc: id, from, count, context }) {
    const doc = docs.get(id);
    if (!doc) return { type: "rows", req, doc: id, rows: [], total: 0 };
    const list = visible(doc, context);
    const total = list ? list.length : doc.rows.kinds.length;
    const shown = [];
    const line = (lines, number) => {
        if (number < 0) return null;
        const text = lines[number];
        return text.length > LINE_SHOWN ? `${text.slice(0, LINE_SHOWN)} … (${text.length} characters)` : text;
    };
    for (let at = from; at < Math.min(total, from + count); at += 1) {
        const r = list ? list[at] : at;
        if (r < 0) {
            shown.push(["gap", -r]);
            continue;
        }
        const a = doc.rows.left[r];
        const b = doc.rows.right[r];
        shown.push([KINDS[doc.rows.kinds[r]], a, line(doc.a, a), b, line(doc.b, b)]);
    }
    return { type: "rows", req, doc: id, rows: shown, total };
}

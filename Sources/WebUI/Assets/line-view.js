// <line-view>: a body shown as fixed-height lines. The text lives in the format worker
// (format-worker.js), which fetches, formats and keeps it; this element knows only how many lines
// there are, which the user folded, and the few lines in view, which it asks the worker for. So
// nothing here grows with the body: a 50 MiB JSON costs the same DOM and main-thread work as a
// 50-byte one. Lines are always set with textContent, never parsed as markup; a find in a hex
// dump marks the matched bytes with <mark> elements whose text is set the same way.

import { h, setSafeAttribute } from "./dom.js";

const LINE_HEIGHT = 18;
/**
 * Browsers cap an element's height (Chromium near 33.5 million px), so past this the scrollbar
 * stands for the document proportionally instead of a line per 18 px.
 */
const MAX_SCROLL_HEIGHT = 8_000_000;
/** Lines kept on this side of the worker (the view and a little around it). */
const CACHE_LINES = 4000;
const UTF8 = new TextDecoder();

let worker = null;
let nextDoc = 1;
let nextRequest = 1;
const waiting = new Map();
const documents = new Map();

function formatWorker() {
    if (!worker) {
        worker = new Worker("format-worker.js");
        worker.onmessage = (event) => {
            const message = event.data;
            if (message.req !== undefined) {
                const done = waiting.get(message.req);
                waiting.delete(message.req);
                done?.(message);
            } else {
                documents.get(message.doc)?.(message);
            }
        };
    }
    return worker;
}

/** Sends a request about document `doc` to the worker; resolves to its answer. */
function ask(message) {
    const req = nextRequest++;
    return new Promise((resolve) => {
        waiting.set(req, resolve);
        formatWorker().postMessage({ ...message, req });
    });
}

class LineView extends HTMLElement {
    #doc = 0;
    #lineCount = 0;
    #done = false;
    #bytes = 0;
    #kind = "";
    /** Folded lines: line → the line that closes it. */
    #collapsed = new Map();
    /** The outermost folded ranges, sorted: [[start, end], …]. */
    #hidden = [];
    #hiddenLines = 0;
    /** line → {text, end} for lines the worker sent. */
    #cache = new Map();
    #asking = false;
    #askAgain = false;
    #hits = new Set();
    #current = -1;
    #pool = [];
    #spacer;
    #frame = 0;

    connectedCallback() {
        if (this.#spacer) return;
        setSafeAttribute(this, "role", "document");
        setSafeAttribute(this, "tabindex", 0);
        this.#spacer = h("div", { class: "line-spacer", role: "presentation" });
        this.append(this.#spacer);
        this.addEventListener("scroll", () => this.#schedule(), { passive: true });
        this.addEventListener("click", (event) => {
            const toggle = event.target.closest(".fold");
            if (toggle && toggle.hasAttribute("data-id")) this.#toggle(Number(toggle.getAttribute("data-id")));
        });
        new ResizeObserver(() => this.#schedule()).observe(this);
    }

    disconnectedCallback() {
        this.close();
    }

    /**
     * Shows the body at `url` (fetched by the worker, streamed) formatted as `kind` ("json",
     * "text", "hex" or "sniff"). `onProgress({kind, lines, bytes, done, more, note})` follows it;
     * resolves once it is all in (rejects when it cannot be loaded).
     */
    open({ url, headers = {}, kind, onProgress }) {
        this.close();
        const doc = nextDoc++;
        this.#doc = doc;
        this.#lineCount = 0;
        this.#done = false;
        this.#bytes = 0;
        this.#collapsed.clear();
        this.#foldsChanged();
        this.#hits = new Set();
        this.#matches = new Uint32Array(0);
        this.#starts = null;
        this.#current = -1;
        this.#kind = kind;
        this.scrollTop = 0;
        return new Promise((resolve, reject) => {
            documents.set(doc, (message) => {
                if (doc !== this.#doc) return;
                if (message.type === "error") {
                    documents.delete(doc);
                    reject(new Error(message.message));
                    return;
                }
                const previous = this.#lineCount;
                // A body that turned out not to be what it said (broken JSON or XML) starts again as text.
                if (message.kind !== this.#kind) this.#cache.clear();
                this.#lineCount = message.lines;
                this.#bytes = message.bytes;
                this.#kind = message.kind;
                this.#done = message.done;
                this.#forgetChanged(previous, message.kind);
                this.#layout();
                onProgress?.(message);
                if (message.done) {
                    documents.delete(doc);
                    resolve(message);
                }
            });
            formatWorker().postMessage({ type: "open", doc, url, headers, kind });
        });
    }

    /**
     * While a body streams in, a line already drawn changes only if it was the last one (it may
     * have grown) or, in JSON, if it opens an object or array whose end has now arrived (folding).
     * Only those are asked for again.
     */
    #forgetChanged(previous, kind) {
        const opens = kind === "json" ? /[[{]$/ : kind === "xml" || kind === "html" ? /^\s*<[^/!?]/ : null;
        if (!opens) {
            this.#cache.delete(previous - 1);
            return;
        }
        for (const [line, cached] of this.#cache) {
            if (line >= previous - 1 || (cached.end < 0 && opens.test(cached.text))) this.#cache.delete(line);
        }
    }

    /** Lets the worker drop the document. */
    close() {
        if (!this.#doc) return;
        documents.delete(this.#doc);
        worker?.postMessage({ type: "close", doc: this.#doc });
        this.#doc = 0;
        this.#cache.clear();
    }

    /** Lines in the document (before folding). */
    get lineCount() {
        return this.#lineCount;
    }

    /** Whether the whole (asked-for) body has arrived and been formatted. */
    get done() {
        return this.#done;
    }

    /** A number for the document shown, new each time `open` is called. */
    get generation() {
        return this.#doc;
    }

    /** Bytes of the body received so far. */
    get bytes() {
        return this.#bytes;
    }

    /** The format the worker chose ("json", "xml", "html", "text", "hex"). */
    get kind() {
        return this.#kind;
    }

    /** Lines from…to-1 as one string (for tests and copying; costly for a whole big body). */
    async textOf(from = 0, to = this.#lineCount) {
        if (!this.#doc) return "";
        return (await ask({ type: "text", doc: this.#doc, from, to })).text;
    }

    /**
     * Finds `query` (any case) in the body, in the worker. Resolves to `{matches, total, capped}`:
     * the lines that contain it; they are marked, and `next()` walks them. In a hex dump the
     * query is also read as hex bytes (`de ad be ef`); each match's bytes are marked in both
     * columns, and `next()` walks the matches (`starts`, `lengths`: each one's bytes).
     */
    async search(query) {
        if (!this.#doc) return { matches: new Uint32Array(0), total: 0, capped: false };
        const answer = await ask({ type: "search", doc: this.#doc, query });
        this.#hits = new Set(answer.matches);
        this.#matches = answer.matches;
        this.#starts = answer.starts ? { starts: answer.starts, lengths: answer.lengths,
            longest: answer.lengths.reduce((a, b) => Math.max(a, b), 0) } : null;
        this.#current = -1;
        this.#drawnMarks = new WeakMap();
        this.#schedule();
        return answer;
    }

    #matches = new Uint32Array(0);
    /** A hex search's matches by their bytes, or null. */
    #starts = null;
    /** The marks drawn in each hex row's code element, so a redraw writes only what changed. */
    #drawnMarks = new WeakMap();

    /** The match `next()` showed: `{offset, length}` (hex) or `{line}`; null before it. */
    get currentMatch() {
        if (this.#current < 0) return null;
        if (this.#starts) {
            return { offset: this.#starts.starts[this.#current], length: this.#starts.lengths[this.#current] };
        }
        return { line: this.#matches[this.#current] };
    }

    /** Shows the next (step 1) or previous (-1) match; returns its number (1-based) or 0. */
    next(step = 1) {
        const count = this.#starts ? this.#starts.starts.length : this.#matches.length;
        if (!count) return 0;
        this.#current = (this.#current + step + count) % count;
        const line = this.#starts ? Math.floor(this.#starts.starts[this.#current] / 16) : this.#matches[this.#current];
        // A match inside a folded range unfolds it.
        let unfolded = false;
        for (const [start, end] of [...this.#collapsed]) {
            if (start < line && line <= end) {
                this.#collapsed.delete(start);
                unfolded = true;
            }
        }
        if (unfolded) this.#foldsChanged();
        this.scrollToLine(line);
        return this.#current + 1;
    }

    /** Scrolls so that `line` is in view, a few lines from the top. */
    scrollToLine(line) {
        const position = this.#positionOf(line);
        const visible = this.#visibleCount;
        const view = Math.max(1, Math.floor(this.clientHeight / LINE_HEIGHT));
        const top = Math.max(0, Math.min(position - 2, visible - view));
        const height = this.#spacerHeight;
        if (visible * LINE_HEIGHT <= MAX_SCROLL_HEIGHT) {
            this.scrollTop = top * LINE_HEIGHT;
        } else {
            this.scrollTop = (top / Math.max(1, visible - view)) * Math.max(0, height - this.clientHeight);
        }
        this.#schedule();
    }

    get #visibleCount() {
        return Math.max(0, this.#lineCount - this.#hiddenLines);
    }

    get #spacerHeight() {
        return Math.min(this.#visibleCount * LINE_HEIGHT, MAX_SCROLL_HEIGHT);
    }

    #toggle(line) {
        if (this.#collapsed.has(line)) {
            this.#collapsed.delete(line);
        } else {
            const end = this.#cache.get(line)?.end ?? -1;
            if (end <= line + 1) return;
            this.#collapsed.set(line, end);
        }
        this.#foldsChanged();
        this.#layout();
    }

    /** The folded ranges not inside another folded range, and how many lines they hide. */
    #foldsChanged() {
        const ranges = [...this.#collapsed].sort((a, b) => a[0] - b[0]);
        this.#hidden = [];
        this.#hiddenLines = 0;
        let outerEnd = -1;
        for (const [start, end] of ranges) {
            if (start <= outerEnd) continue;
            this.#hidden.push([start, end]);
            this.#hiddenLines += end - start;
            outerEnd = end;
        }
    }

    /** The line shown at visible position `position` (folded ranges skipped). */
    #lineAt(position) {
        let line = position;
        for (const [start, end] of this.#hidden) {
            if (line > start) line += end - start;
            else break;
        }
        return line;
    }

    /** The visible position of `line` (the fold that hides it, if any). */
    #positionOf(line) {
        let position = line;
        for (const [start, end] of this.#hidden) {
            if (line <= start) break;
            position -= line <= end ? line - start : end - start;
        }
        return position;
    }

    #layout() {
        this.#spacer.style.height = `${this.#spacerHeight}px`;
        this.#schedule();
    }

    #schedule() {
        if (this.#frame) return;
        this.#frame = requestAnimationFrame(() => {
            this.#frame = 0;
            this.#render();
        });
    }

    /** Which visible positions are in view, and where the first one is drawn. */
    #window() {
        const visible = this.#visibleCount;
        const view = this.clientHeight / LINE_HEIGHT;
        let top;
        if (visible * LINE_HEIGHT <= MAX_SCROLL_HEIGHT) {
            top = this.scrollTop / LINE_HEIGHT;
        } else {
            const range = Math.max(1, this.#spacerHeight - this.clientHeight);
            top = Math.min(1, this.scrollTop / range) * Math.max(0, visible - view);
        }
        const first = Math.max(0, Math.floor(top) - 2);
        const last = Math.min(visible, Math.ceil(top + view) + 2);
        return { first, last, top };
    }

    #render() {
        const { first, last, top } = this.#window();
        const wanted = [];
        const rows = [];
        for (let position = first; position < last; position += 1) {
            const line = this.#lineAt(position);
            rows.push([position, line]);
            if (!this.#cache.has(line)) wanted.push(line);
            const end = this.#collapsed.get(line);
            if (end !== undefined && !this.#cache.has(end)) wanted.push(end);
        }
        if (wanted.length) this.#fetch(wanted);
        while (this.#pool.length < rows.length) {
            const row = h("div", { class: "line" }, h("span", { class: "gutter", "aria-hidden": "true" }),
                h("span", { class: "fold", role: "button", tabindex: -1 }), h("span", { class: "code" }));
            this.#pool.push(row);
            this.append(row);
        }
        const current = this.currentMatch;
        // The rows the current match covers (a hex match may run on into the next row).
        const [currentFirst, currentLast] = !current ? [-1, -1] : this.#starts
            ? [Math.floor(current.offset / 16), Math.floor((current.offset + current.length - 1) / 16)]
            : [current.line, current.line];
        for (let slot = 0; slot < this.#pool.length; slot += 1) {
            const row = this.#pool[slot];
            if (slot >= rows.length) {
                row.hidden = true;
                continue;
            }
            const [position, index] = rows[slot];
            row.hidden = false;
            // Only what changed is written: a redraw while a body streams in costs next to nothing.
            const y = this.scrollTop + (position - top) * LINE_HEIGHT;
            const transform = `translateY(${Math.round(y)}px)`;
            if (row.style.transform !== transform) row.style.transform = transform;
            const className = this.#hits.has(index)
                ? (index >= currentFirst && index <= currentLast ? "line hit current" : "line hit") : "line";
            if (row.className !== className) row.className = className;
            const [gutter, fold, code] = row.children;
            const number = String(index + 1);
            if (gutter.textContent !== number) gutter.textContent = number;
            const cached = this.#cache.get(index);
            const foldable = Boolean(cached && cached.end > index + 1);
            const collapsed = this.#collapsed.has(index);
            const marker = foldable || collapsed ? (collapsed ? "▸" : "▾") : "";
            if (fold.textContent !== marker) fold.textContent = marker;
            setSafeAttribute(fold, "data-id", foldable || collapsed ? index : false);
            setSafeAttribute(fold, "aria-expanded", foldable || collapsed ? String(!collapsed) : false);
            setSafeAttribute(fold, "aria-label", foldable || collapsed ? (collapsed ? "expand" : "fold") : false);
            let text = cached ? cached.text : "";
            if (collapsed) {
                const end = this.#collapsed.get(index);
                const closing = this.#cache.get(end)?.text.trim() ?? "";
                text += ` … ${end - index - 1} lines … ${closing}`;
            }
            if (this.#starts && this.#hits.has(index) && cached) {
                this.#markHex(code, index, text);
            } else if (code.textContent !== text || code.childElementCount) {
                code.textContent = text;
            }
        }
    }

    /**
     * Draws hex row `row` (`text`, as hexLine lays it out) with the bytes of each match in it
     * marked, in the hex column and in the text column (`mark.current`: the match shown).
     */
    #markHex(code, row, text) {
        const { starts, lengths, longest } = this.#starts;
        const rowStart = row * 16;
        // The first match that may reach this row: matches are in order, none longer than `longest`.
        let low = 0;
        let high = starts.length;
        while (low < high) {
            const middle = (low + high) >> 1;
            if (starts[middle] + longest <= rowStart) low = middle + 1;
            else high = middle;
        }
        const ranges = [];
        for (let i = low; i < starts.length && starts[i] < rowStart + 16; i += 1) {
            const first = Math.max(starts[i], rowStart) - rowStart;
            const last = Math.min(starts[i] + lengths[i], rowStart + 16) - 1 - rowStart;
            if (last < first) continue;
            const isCurrent = i === this.#current;
            const previous = ranges[ranges.length - 1];
            // Overlapping matches (a query read both as text and as bytes) are marked as one.
            if (previous && first <= previous[1] + 1) {
                previous[1] = Math.max(previous[1], last);
                previous[2] ||= isCurrent;
            } else {
                ranges.push([first, last, isCurrent]);
            }
        }
        const signature = `${text}|${ranges.join(";")}`;
        if (this.#drawnMarks.get(code) === signature) return;
        this.#drawnMarks.set(code, signature);
        // `00000000  de ad …  |..|`: byte i at 10 + 3i (+1 past the eighth), its character at 61 + i.
        const hexAt = (i) => 10 + 3 * i + (i >= 8 ? 1 : 0);
        const pieces = [];
        let at = 0;
        const mark = (from, to, isCurrent) => {
            if (from > at) pieces.push(text.slice(at, from));
            pieces.push(h("mark", { class: isCurrent ? "current" : false }, text.slice(from, to)));
            at = to;
        };
        for (const [first, last, isCurrent] of ranges) mark(hexAt(first), hexAt(last) + 2, isCurrent);
        for (const [first, last, isCurrent] of ranges) mark(61 + first, 61 + last + 1, isCurrent);
        pieces.push(text.slice(at));
        code.replaceChildren(...pieces);
    }

    /** Asks the worker for `lines`; one request at a time, the latest wish wins. */
    async #fetch(lines) {
        if (this.#asking) {
            this.#askAgain = true;
            return;
        }
        this.#asking = true;
        const doc = this.#doc;
        try {
            const answer = await ask({ type: "lines", doc, lines: Uint32Array.from(lines) });
            if (doc !== this.#doc || !answer) return;
            if (this.#cache.size > CACHE_LINES) this.#cache.clear();
            for (let i = 0; i < answer.lines.length; i += 1) {
                const text = UTF8.decode(answer.bytes.subarray(answer.offsets[i], answer.offsets[i + 1]));
                this.#cache.set(answer.lines[i], { text, end: answer.ends[i] });
            }
        } finally {
            this.#asking = false;
            if (doc === this.#doc) this.#schedule();
            if (this.#askAgain) this.#askAgain = false;
        }
    }
}

customElements.define("line-view", LineView);

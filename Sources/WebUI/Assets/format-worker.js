// A Web Worker that owns the bodies shown in the detail pane. It fetches a body itself (streamed,
// a chunk at a time), formats it as the bytes arrive and keeps the result; <line-view> asks it for
// the few lines in view. So the page's main thread never holds a body, a big string or a table
// that grows with the body: a 50 MiB JSON costs it the same as a 50-byte one.
//
// Formatting works on UTF-8 bytes, never on a decoded string: JSON's structural characters are
// ASCII and never occur inside a multi-byte sequence, so JSON is re-indented by its tokens (key
// order, duplicate keys and big numbers stay exactly as sent) byte by byte, its `\uXXXX` escapes
// shown as the characters they stand for (controls, NUL and lone surrogates stay escapes); XML and
// HTML are indented by element (markup-format.js, a tokenizer: nothing is parsed into a document);
// text is cut into lines where its newlines are, and a hex dump is computed per line on demand.
//
// In:  {type: "open", doc, url, headers, kind: "json" | "xml" | "html" | "text" | "hex" | "sniff"}
//      {type: "lines", doc, req, lines: Uint32Array}   the bytes of these lines
//      {type: "search", doc, req, query}                 the lines that contain `query` (any case);
//                                                        hex: the bytes, as text or as hex (`de ad`)
//      {type: "text", doc, req, from, to}                lines from…to-1 as one string (tests, copy)
//      {type: "close", doc}
// Out: {type: "progress", doc, kind, lines, bytes, done, more, note}
//      {type: "lines", doc, req, lines, bytes: Uint8Array, offsets: Uint32Array, ends: Int32Array}
//      {type: "search", doc, req, matches: Uint32Array, total, capped}
//                                 hex also: starts: Uint32Array, lengths: Uint32Array (each match's bytes)
//      {type: "text", doc, req, text}
//      {type: "error", doc, message}

/** Lines longer than this (bytes) are cut into several display lines, so one line never gets huge. */
const WRAP = 2000;
/** Progress goes to the page at most this often (ms) while a body streams in. */
const PROGRESS_EVERY = 250;
/** Search reports at most this many matching lines. */
const SEARCH_CAP = 100000;
/**
 * Lines deeper than this are indented as at this depth: indentation that grew with depth made
 * output quadratic in the body (120 KB of `[[[…]]]` ran the worker out of memory).
 */
const INDENT_CAP = 64;

/** The spaces a line at `depth` is indented by. */
function indentOf(depth) {
    return (depth < INDENT_CAP ? depth : INDENT_CAP) * 2;
}

const docs = new Map();

importScripts("markup-format.js");

self.onmessage = (event) => {
    const message = event.data;
    const doc = docs.get(message.doc);
    switch (message.type) {
    case "open":
        open(message);
        break;
    // A document that is gone (or not fetched yet) answers as an empty one: every ask gets an answer.
    case "lines":
        reply((doc instanceof Doc ? doc : EMPTY).lines(message.req, message.lines));
        break;
    case "search":
        reply((doc instanceof Doc ? doc : EMPTY).search(message.req, message.query));
        break;
    case "text": {
        const text = (doc instanceof Doc ? doc : EMPTY).text(message.from, message.to);
        reply({ type: "text", doc: message.doc, req: message.req, text });
        break;
    }
    case "close":
        if (doc) doc.close();
        docs.delete(message.doc);
        break;
    default:
    }
};

function reply(message) {
    const transfer = [];
    for (const value of Object.values(message)) {
        if (ArrayBuffer.isView(value)) transfer.push(value.buffer);
    }
    self.postMessage(message, transfer);
}

/** Growable typed-array storage. */
class Buffer {
    constructor(Type, capacity) {
        this.Type = Type;
        this.array = new Type(Math.max(1024, capacity));
        this.length = 0;
    }

    reserve(extra) {
        if (this.length + extra <= this.array.length) return;
        let size = this.array.length * 2;
        while (size < this.length + extra) size *= 2;
        const grown = new this.Type(size);
        grown.set(this.array.subarray(0, this.length));
        this.array = grown;
    }

    push(value) {
        if (this.length === this.array.length) this.reserve(1);
        this.array[this.length] = value;
        this.length += 1;
    }

    append(values) {
        this.reserve(values.length);
        this.array.set(values, this.length);
        this.length += values.length;
    }

    get view() {
        return this.array.subarray(0, this.length);
    }
}

async function open({ doc: id, url, headers, kind }) {
    const controller = new AbortController();
    let doc = null;
    docs.set(id, { id, close: () => controller.abort() });
    try {
        const response = await fetch(url, { headers, credentials: "same-origin", signal: controller.signal });
        if (!response.ok) {
            let text = `${response.status} ${response.statusText}`;
            try {
                text = JSON.parse(await response.text()).error ?? text;
            } catch {
                // The status line says enough.
            }
            throw new Error(text);
        }
        const size = Number(response.headers.get("Content-Length")) || 0;
        doc = new Doc(id, kind, size, response.headers.get("X-DevProxy-Limited") === "1", controller);
        // The server decodes at most the session's body limit; past it the body arrives cut.
        doc.decodedCut = Number(response.headers.get("X-DevProxy-Decoded-Cut")) || 0;
        // The session kept only the first part (`--store-body-limit`): what ends early is the
        // stored part, not the origin's body.
        if (response.headers.get("X-DevProxy-Truncated") === "1") {
            doc.storedCut = { stored: Number(response.headers.get("X-DevProxy-Stored")) || 0,
                size: Number(response.headers.get("X-DevProxy-Body-Size")) || 0 };
        }
        if (!docs.has(id)) return;
        docs.set(id, doc);
        const reader = response.body.getReader();
        let posted = 0;
        while (true) {
            const { done, value } = await reader.read();
            if (done) break;
            doc.take(value);
            const now = performance.now();
            if (now - posted >= PROGRESS_EVERY) {
                posted = now;
                self.postMessage(doc.progress(false));
            }
        }
        doc.finish();
        self.postMessage(doc.progress(true));
    } catch (error) {
        if (controller.signal.aborted || !docs.has(id)) return;
        self.postMessage({ type: "error", doc: id, message: error.message });
    }
}

const OPEN_BRACE = 123, CLOSE_BRACE = 125, OPEN_BRACKET = 91, CLOSE_BRACKET = 93;
const COMMA = 44, COLON = 58, QUOTE = 34, BACKSLASH = 92, SPACE = 32, NEWLINE = 10;

/** Bytes that may make up a JSON number or literal (`true`, `false`, `null`). */
const WORD = new Uint8Array(256);
for (const c of "0123456789+-.eEtrufalsn") WORD[c.charCodeAt(0)] = 1;

/** Where `copyEscape` left off writing in its target. */
let escapeEnd = 0;

const HEX_VALUE = new Int8Array(256).fill(-1);
for (let i = 0; i < 16; i += 1) {
    HEX_VALUE["0123456789abcdef".charCodeAt(i)] = i;
    HEX_VALUE["0123456789ABCDEF".charCodeAt(i)] = i;
}

/** The value of the four hex digits at bytes[at…at+4), or -1. */
function hex4(bytes, at) {
    let value = 0;
    for (let k = 0; k < 4; k += 1) {
        const digit = HEX_VALUE[bytes[at + k]];
        if (digit < 0) return -1;
        value = value * 16 + digit;
    }
    return value;
}

/**
 * Whether a `\uXXXX` escape of this code point stays an escape in the pretty view: what would
 * be invisible or would change the text around it (controls, NUL, line and paragraph separators,
 * bidirectional overrides, the byte order mark), and `"` and `\`, which JSON must escape.
 */
function keepsEscape(point) {
    return point < 0x20 || point === 0x22 || point === 0x5C || (point >= 0x7F && point <= 0x9F)
        || point === 0x2028 || point === 0x2029 || point === 0x200E || point === 0x200F
        || (point >= 0x202A && point <= 0x202E) || (point >= 0x2066 && point <= 0x2069) || point === 0xFEFF;
}

/**
 * Copies the escape at bytes[index] (a backslash inside a string) into `target` at `o`, as the
 * character it stands for when it is one to show (`\u00e9` → é, `\ud83d\ude00` → 😀, `\/` → /),
 * else as sent. Sets `escapeEnd`.
 * - Returns: the source bytes it took, or 0 when the escape is not all in yet (and `final` is not set).
 */
function copyEscape(bytes, index, length, final, target, o) {
    const copy = (count) => {
        const end = Math.min(length, index + count);
        for (let k = index; k < end; k += 1) target[o++] = bytes[k];
        escapeEnd = o;
        return end - index;
    };
    if (index + 1 >= length) return final ? copy(1) : 0;
    const kind = bytes[index + 1];
    if (kind === 47) {
        target[o] = 47;
        escapeEnd = o + 1;
        return 2;
    }
    if (kind !== 117) return copy(2);
    if (index + 6 > length) return final ? copy(length - index) : 0;
    let point = hex4(bytes, index + 2);
    let used = 6;
    if (point < 0 || keepsEscape(point) || (point >= 0xDC00 && point <= 0xDFFF)) return copy(6);
    if (point >= 0xD800 && point <= 0xDBFF) {
        // A high surrogate is a character only with the low one after it; alone it stays an escape.
        if (index + 12 > length && !final) return 0;
        const low = index + 12 <= length && bytes[index + 6] === BACKSLASH && bytes[index + 7] === 117
            ? hex4(bytes, index + 8) : -1;
        if (low < 0xDC00 || low > 0xDFFF) return copy(6);
        point = 0x10000 + ((point - 0xD800) << 10) + (low - 0xDC00);
        used = 12;
    }
    if (point < 0x80) {
        target[o++] = point;
    } else if (point < 0x800) {
        target[o++] = 0xC0 | (point >> 6);
        target[o++] = 0x80 | (point & 0x3F);
    } else if (point < 0x10000) {
        target[o++] = 0xE0 | (point >> 12);
        target[o++] = 0x80 | ((point >> 6) & 0x3F);
        target[o++] = 0x80 | (point & 0x3F);
    } else {
        target[o++] = 0xF0 | (point >> 18);
        target[o++] = 0x80 | ((point >> 12) & 0x3F);
        target[o++] = 0x80 | ((point >> 6) & 0x3F);
        target[o++] = 0x80 | (point & 0x3F);
    }
    escapeEnd = o;
    return used;
}

/** One body: its bytes as they arrive and its lines, formatted as `kind`. */
class Doc {
    constructor(id, kind, size, more, controller) {
        this.id = id;
        this.kind = kind;
        this.more = more;
        this.controller = controller;
        this.note = "";
        /** Bytes the server cut the decoded body at (its `X-DevProxy-Decoded-Cut`), or 0. */
        this.decodedCut = 0;
        this.done = false;
        this.received = 0;
        this.source = new Buffer(Uint8Array, size || 65536);
        /** JSON: the re-indented text; `starts` index it. Text: `starts` index `source`. */
        this.out = null;
        this.starts = new Buffer(Uint32Array, 1024);
        this.ends = null;
        this.starts.push(0);
        // Text lines: where the line being read began and how far it has been scanned.
        this.lineStart = 0;
        this.scanned = 0;
        // JSON state, carried from chunk to chunk.
        this.inString = false;
        this.depth = 0;
        this.pendingClose = 0;
        this.pendingLine = 0;
        this.open = [];
        /** JSON: where formatting goes on (an escape split across chunks waits for its end). */
        this.jsonNext = 0;
        /** XML and HTML: the formatter (markup-format.js). */
        this.markup = null;
        if (kind === "json") this.startJSON(size);
        if (kind === "xml" || kind === "html") this.startMarkup(size);
    }

    close() {
        this.controller.abort();
        this.source = this.out = this.starts = this.ends = null;
    }

    startJSON(size) {
        this.out = new Buffer(Uint8Array, Math.ceil((size || 65536) * 1.6));
        this.ends = new Buffer(Int32Array, 1024);
        this.ends.push(-1);
        this.jsonNext = 0;
    }

    startMarkup(size) {
        this.out = new Buffer(Uint8Array, Math.ceil((size || 65536) * 1.5));
        this.ends = new Buffer(Int32Array, 1024);
        this.ends.push(-1);
        this.markup = new MarkupFormatter(this.kind, this.out, this.starts, this.ends);
    }

    /** Formats the markup that has arrived; broken XML is shown as sent, saying why. */
    formatMarkup(final) {
        this.markup.cut = this.more || Boolean(this.storedCut) || Boolean(this.decodedCut);
        const problem = this.markup.format(this.source.array, this.source.length, final);
        if (problem) {
            this.asText(`${problem}; shown as sent`);
        } else if (final && this.markup.cut && (this.markup.stack.length || this.markup.unfinished)) {
            const what = this.kind === "xml" ? "XML" : "HTML";
            this.note = this.more ? `the first part of the ${what}; "show all" for the rest`
                : `the ${what} is cut where the session stopped keeping the body`;
        }
    }

    take(chunk) {
        const from = this.source.length;
        this.source.append(chunk);
        this.received += chunk.length;
        if (this.kind === "sniff") {
            // The first 4 KiB decide; sniff() formats what has come so far.
            if (this.source.length >= 4096) this.sniff();
            return;
        }
        if (this.kind === "json") this.formatJSON(false);
        else if (this.markup) this.formatMarkup(false);
        else if (this.kind === "text") this.indexText(false);
    }

    finish() {
        if (this.kind === "sniff") this.sniff();
        if (this.kind === "json" && this.jsonNext < this.source.length) this.formatJSON(true);
        if (this.markup) {
            this.formatMarkup(true);
            if (this.markup) {
                this.markup = null;
                this.source = new Buffer(Uint8Array, 0);
            }
        }
        if (this.kind === "json") {
            if (this.open.length || this.pendingClose) {
                this.note = this.more ? "the first part of the JSON; \"show all\" for the rest"
                    : this.storedCut ? "the JSON is cut where the session stopped keeping the body" : "the JSON ends early";
            }
            // The formatted text is all the lines need now.
            this.source = new Buffer(Uint8Array, 0);
        } else if (this.kind === "text") {
            this.indexText(true);
        }
        this.done = true;
    }

    /** Text when the first bytes are UTF-8 without NULs; JSON when they also start like JSON. */
    sniff() {
        const sample = this.source.array.subarray(0, Math.min(this.source.length, 4096));
        let kind = "text";
        if (sample.includes(0)) {
            kind = "hex";
        } else {
            try {
                const cut = this.source.length > sample.length ? Math.max(0, sample.length - 4) : sample.length;
                const text = new TextDecoder("utf-8", { fatal: true }).decode(sample.subarray(0, cut));
                if (/^\s*[[{]/.test(text)) kind = "json";
                else if (/^\uFEFF?\s*<\?xml[\s?]/.test(text)) kind = "xml";
                else if (/^\uFEFF?\s*(<!--[\s\S]*?-->\s*)*<(!doctype\s+html|html[\s>])/i.test(text)) kind = "html";
            } catch {
                kind = "hex";
            }
        }
        this.kind = kind;
        if (kind === "json") {
            this.startJSON(this.source.array.length);
            this.formatJSON(false);
        } else if (kind === "xml" || kind === "html") {
            this.startMarkup(this.source.array.length);
            this.formatMarkup(false);
        } else if (kind === "text") {
            this.indexText(false);
        }
    }

    /** Cuts the source into lines at newlines (and every WRAP bytes, on a character boundary). */
    indexText(final) {
        const bytes = this.source.array;
        const length = this.source.length;
        let position = this.scanned;
        while (position < length) {
            let newline = bytes.indexOf(NEWLINE, position);
            if (newline >= length) newline = -1;
            const end = newline < 0 ? length : newline;
            while (end - this.lineStart > WRAP) {
                let cut = this.lineStart + WRAP;
                while (cut > this.lineStart + 1 && (bytes[cut] & 0xc0) === 0x80) cut -= 1;
                this.starts.push(cut);
                this.lineStart = cut;
            }
            if (newline < 0) {
                position = length;
                break;
            }
            this.lineStart = newline + 1;
            this.starts.push(this.lineStart);
            position = newline + 1;
        }
        this.scanned = position;
        if (final && this.lineStart === length && this.starts.length > 1 && length > 0) {
            // A last newline ends the last line; it does not start an empty one.
            this.starts.length -= 1;
        }
    }

    /**
     * Re-indents the source's bytes from where the last call stopped, carrying state across chunks
     * (`final`: the body is all in). The hot loop keeps its state in locals and writes into the
     * array directly.
     */
    formatJSON(final) {
        const from = this.jsonNext;
        const bytes = this.source.array;
        const length = this.source.length;
        // What has arrived: a search must not run on into the buffer's unused capacity.
        const filled = bytes.subarray(0, length);
        const out = this.out;
        const starts = this.starts;
        const ends = this.ends;
        const open = this.open;
        let inString = this.inString;
        let depth = this.depth;
        let pendingClose = this.pendingClose;
        let o = out.length;
        let target = out.array;
        let broken = false;
        const room = (extra) => {
            out.length = o;
            out.reserve(extra);
            target = out.array;
        };
        // Ends the output line and starts the next at the current depth (a line of its own in
        // `starts`, its fold end unknown yet), growing the output first if they might not fit.
        const newLine = (index) => {
            if (o + 4 + indentOf(depth) >= target.length) room(length - index + 64 + indentOf(depth));
            limit = target.length - 4 - indentOf(depth);
            target[o++] = NEWLINE;
            starts.push(o);
            ends.push(-1);
            for (let k = indentOf(depth); k > 0; k -= 1) target[o++] = SPACE;
        };
        room(length - from + 64);
        // Past `limit`, a newline and its indent might not fit: grow first.
        let limit = target.length - 4 - indentOf(depth);
        // A UTF-8 byte order mark before the document (as .NET and PowerShell services write JSON)
        // is not part of it: JSON.parse and the tokens below would call the body broken.
        const bom = from === 0 && length >= 3 && bytes[0] === 0xEF && bytes[1] === 0xBB && bytes[2] === 0xBF;
        let index = bom ? 3 : from;
        for (; index < length; index += 1) {
            const code = bytes[index];
            if (o >= limit) {
                room(length - index + 64 + indentOf(depth));
                limit = target.length - 4 - indentOf(depth);
            }
            if (inString) {
                if (code === BACKSLASH) {
                    if (o + 12 >= target.length) {
                        room(length - index + 64 + indentOf(depth));
                        limit = target.length - 4 - indentOf(depth);
                    }
                    const used = copyEscape(bytes, index, length, final, target, o);
                    // An escape cut by the chunk's end: formatting goes on from it with the next chunk.
                    if (used === 0) break;
                    o = escapeEnd;
                    index += used - 1;
                    continue;
                }
                // The rest of the string up to its quote or next backslash, copied at once (most of
                // a JSON document is inside strings).
                let stop = filled.indexOf(QUOTE, index);
                if (stop < 0) stop = length;
                const backslash = filled.subarray(index, stop).indexOf(BACKSLASH);
                if (backslash >= 0) stop = index + backslash;
                else if (stop < length) stop += 1;
                if (o + (stop - index) >= limit) {
                    room(length - index + 64 + indentOf(depth));
                    limit = target.length - 4 - indentOf(depth);
                }
                target.set(bytes.subarray(index, stop), o);
                o += stop - index;
                if (backslash < 0 && bytes[stop - 1] === QUOTE) inString = false;
                index = stop - 1;
                continue;
            }
            if (code === SPACE || code === NEWLINE || code === 13 || code === 9) continue;
            let breakLine = false;
            if (pendingClose) {
                const close = pendingClose;
                pendingClose = 0;
                if (code === close) {
                    target[o++] = code;
                    continue;
                }
                open.push(this.pendingLine, close);
                depth += 1;
                breakLine = true;
            }
            if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
                const close = open.pop();
                const line = open.pop();
                if (close !== code) {
                    broken = true;
                    break;
                }
                depth -= 1;
                breakLine = true;
                ends.array[line] = starts.length;
            }
            // A value after a whole one at the top (newline-delimited JSON, several documents in
            // one body) starts its own line: the records ran together as `}{`.
            if (!breakLine && open.length === 0 && !pendingClose && o > 0
                && (target[o - 1] === CLOSE_BRACE || target[o - 1] === CLOSE_BRACKET || target[o - 1] === QUOTE)
                && (code === OPEN_BRACE || code === OPEN_BRACKET || code === QUOTE || WORD[code])) breakLine = true;
            if (breakLine) newLine(index);
            if (code === QUOTE) {
                target[o++] = code;
                inString = true;
            } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
                target[o++] = code;
                pendingClose = code === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET;
                this.pendingLine = starts.length - 1;
            } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
                target[o++] = code;
            } else if (code === COMMA) {
                target[o++] = code;
                newLine(index);
            } else if (code === COLON) {
                target[o++] = code;
                target[o++] = SPACE;
            } else if (WORD[code]) {
                target[o++] = code;
            } else {
                broken = true;
                break;
            }
        }
        out.length = o;
        this.jsonNext = broken ? length : index;
        this.inString = inString;
        this.depth = depth;
        this.pendingClose = pendingClose;
        if (broken) this.notJSON();
    }

    /** The body turned out not to be JSON: show it as text from the start. */
    notJSON() {
        this.asText("not valid JSON; shown as text");
    }

    /** Shows the body as text from the start, saying why in `note`. */
    asText(note) {
        this.kind = "text";
        this.note = note;
        this.markup = null;
        this.out = null;
        this.ends = null;
        this.open = [];
        this.starts = new Buffer(Uint32Array, 1024);
        this.starts.push(0);
        this.lineStart = 0;
        this.scanned = 0;
        this.indexText(false);
    }

    get lineCount() {
        if (this.kind === "hex") return Math.max(1, Math.ceil(this.source.length / 16));
        if (this.kind === "sniff") return 0;
        return this.starts.length;
    }

    progress(done) {
        return {
            type: "progress", doc: this.id, kind: this.kind, lines: this.lineCount, bytes: this.received,
            done, more: this.more, storedCut: this.storedCut ?? null, note: this.decodedCut ? [this.note, `decoded text cut at `
                + `${Math.round(this.decodedCut / 1048576)} MiB (the session's body limit)`].filter(Boolean).join("; ")
                : this.note,
        };
    }

    /** The bytes that lines are cut from: the formatted JSON, XML or HTML, or the source. */
    get store() {
        return this.kind === "json" || this.kind === "xml" || this.kind === "html" ? this.out : this.source;
    }

    /** Line `index` as [start, end) in `store` (without its newline). */
    range(index) {
        const starts = this.starts;
        const store = this.store;
        const start = starts.array[index];
        let end = index + 1 < starts.length ? starts.array[index + 1] : store.length;
        if (end > start && store.array[end - 1] === NEWLINE) end -= 1;
        if (end > start && store.array[end - 1] === 13) end -= 1;
        return [start, end];
    }

    /** The bytes of `lines` (indices), one after the other, with their offsets and fold ends. */
    lines(req, lines) {
        const count = this.lineCount;
        const offsets = new Uint32Array(lines.length + 1);
        const ends = new Int32Array(lines.length).fill(-1);
        const parts = [];
        let total = 0;
        for (let i = 0; i < lines.length; i += 1) {
            const index = lines[i];
            let part = new Uint8Array(0);
            if (index < count) {
                if (this.kind === "hex") {
                    part = this.hexLine(index);
                } else {
                    const [start, end] = this.range(index);
                    part = this.store.array.subarray(start, end);
                    if (this.ends) ends[i] = this.ends.array[index];
                }
            }
            parts.push(part);
            offsets[i] = total;
            total += part.length;
        }
        offsets[lines.length] = total;
        const bytes = new Uint8Array(total);
        for (let i = 0; i < parts.length; i += 1) bytes.set(parts[i], offsets[i]);
        return { type: "lines", doc: this.id, req, lines, bytes, offsets, ends };
    }

    /** `00000000  7b 22 61 …  |{"a…|`, 16 bytes a line. */
    hexLine(index) {
        const offset = index * 16;
        const row = this.source.array.subarray(offset, Math.min(offset + 16, this.source.length));
        if (!row.length) return new TextEncoder().encode("(empty)");
        let bytes = "";
        let ascii = "";
        for (let i = 0; i < 16; i += 1) {
            if (i === 8) bytes += " ";
            if (i < row.length) {
                bytes += HEX[row[i]] + " ";
                ascii += row[i] >= 32 && row[i] < 127 ? String.fromCharCode(row[i]) : ".";
            } else {
                bytes += "   ";
            }
        }
        return new TextEncoder().encode(`${offset.toString(16).padStart(8, "0")}  ${bytes} |${ascii}|`);
    }

    /**
     * The bytes of a hex dump that match `query`: as text (ASCII case ignored) and, when it reads
     * as hex bytes (`de ad be ef`, `DEADBEEF`, `0xde 0xad`), as those bytes; each match by its
     * first byte and length, in order, and the rows (16 bytes) they cover.
     */
    searchHex(req, query) {
        const source = this.source.array;
        const length = this.source.length;
        const found = [];
        const text = new TextEncoder().encode(query.toLowerCase());
        if (text.length) forEachMatch(source, length, text, true, (at) => found.push([at, text.length]));
        const bytes = hexBytes(query);
        if (bytes) forEachMatch(source, length, bytes, false, (at) => found.push([at, bytes.length]));
        // Both readings (`dead` as text and as bytes) merge into one list in the order of the bytes.
        if (text.length && bytes) found.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
        const total = found.length;
        const count = Math.min(total, SEARCH_CAP);
        const starts = new Uint32Array(count);
        const lengths = new Uint32Array(count);
        const rows = new Buffer(Uint32Array, 1024);
        for (let i = 0; i < count; i += 1) {
            [starts[i], lengths[i]] = found[i];
            const last = Math.floor((starts[i] + lengths[i] - 1) / 16);
            for (let row = Math.floor(starts[i] / 16); row <= last; row += 1) {
                if (!rows.length || rows.array[rows.length - 1] < row) rows.push(row);
            }
        }
        // Past the cap the count is "100,000+": the matches shown, not a total never counted.
        return { type: "search", doc: this.id, req, matches: rows.view.slice(), starts, lengths, total: count,
            capped: total > SEARCH_CAP };
    }

    /** Lines whose bytes contain `query`, ignoring ASCII case (hex: see `searchHex`). */
    search(req, query) {
        if (this.kind === "hex") return this.searchHex(req, query);
        const needle = new TextEncoder().encode(query.toLowerCase());
        const matches = new Buffer(Uint32Array, 1024);
        let total = 0;
        if (needle.length && this.kind !== "sniff") {
            let line = 0;
            let lastLine = -1;
            // Every match is counted; the lines holding them are listed up to SEARCH_CAP.
            forEachMatch(this.store.array, this.store.length, needle, true, (index) => {
                total += 1;
                while (line + 1 < this.starts.length && this.starts.array[line + 1] <= index) line += 1;
                if (line !== lastLine && matches.length < SEARCH_CAP) {
                    matches.push(line);
                    lastLine = line;
                }
            }, Infinity);
        }
        const found = matches.view.slice();
        return { type: "search", doc: this.id, req, matches: found, total, capped: found.length >= SEARCH_CAP };
    }

    /** Lines from…to-1 as one string, joined by newlines. */
    text(from, to) {
        const decoder = new TextDecoder();
        const lines = [];
        for (let index = Math.max(0, from); index < Math.min(to, this.lineCount); index += 1) {
            if (this.kind === "hex") {
                lines.push(decoder.decode(this.hexLine(index)));
            } else {
                const [start, end] = this.range(index);
                lines.push(decoder.decode(this.store.array.subarray(start, end)));
            }
        }
        return lines.join("\n");
    }
}

/**
 * Calls `found(at)` for each place `needle` occurs in hay[0…length), not overlapping (`fold`:
 * ignoring ASCII case; the needle is lower case then). Stops after `limit` matches.
 */
function forEachMatch(hay, length, needle, fold, found, limit = SEARCH_CAP + 1) {
    const first = needle[0];
    const firstUpper = fold && first >= 97 && first <= 122 ? first - 32 : first;
    let count = 0;
    for (let index = 0; index + needle.length <= length; index += 1) {
        const code = hay[index];
        if (code !== first && code !== firstUpper) continue;
        let k = 1;
        while (k < needle.length) {
            let c = hay[index + k];
            if (fold && c >= 65 && c <= 90) c += 32;
            if (c !== needle[k]) break;
            k += 1;
        }
        if (k < needle.length) continue;
        found(index);
        count += 1;
        if (count >= limit) return;
        index += needle.length - 1;
    }
}

/** The bytes a query spells in hex (`de ad be ef`, `deadbeef`, `0xde,0xad`, `de:ad`), or null. */
function hexBytes(query) {
    const digits = query.trim().replace(/0x/gi, " ").split(/[\s,:-]+/).filter(Boolean);
    if (!digits.length || !digits.every((group) => /^(?:[0-9a-f]{2})+$/i.test(group))) return null;
    const joined = digits.join("");
    const bytes = new Uint8Array(joined.length / 2);
    for (let i = 0; i < bytes.length; i += 1) bytes[i] = parseInt(joined.slice(i * 2, i * 2 + 2), 16);
    return bytes;
}

/** What a document that is not there answers with. */
const EMPTY = new Doc(0, "sniff", 0, false, new AbortController());

const HEX = [];
for (let i = 0; i < 256; i += 1) HEX.push(i.toString(16).padStart(2, "0"));

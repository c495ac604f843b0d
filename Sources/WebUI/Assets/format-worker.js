// A Web Worker that turns body bytes into lines for <line-view>, off the main thread: decoding
// UTF-8, pretty-printing JSON (by re-indenting its tokens, so key order, duplicate keys and
// big numbers stay exactly as sent), and hex dumps. A 50 MiB body costs the page nothing but
// the copy of the result.
//
// In:  {job, kind: "json" | "text" | "hex", bytes: ArrayBuffer, partial: bool}
// Out: {job, units: Uint16Array, starts: Uint32Array, ends: Int32Array | null, note}
//
// The text goes back as UTF-16 code units in a transferred buffer, not as a string: a string
// is copied on arrival, on the main thread (about a second for 100 MB), a transfer is free.

/** Lines longer than this are cut into several display lines, so one line never gets huge. */
const WRAP = 2000;
/** A hex dump stops here; the download has the rest. */
const HEX_LIMIT = 16 * 1024 * 1024;

self.onmessage = (event) => {
    const { job, kind, bytes, partial } = event.data;
    let result;
    try {
        const data = new Uint8Array(bytes);
        if (kind === "hex") result = hexDump(data);
        else if (kind === "json") result = prettyJSON(new TextDecoder().decode(data), partial);
        else result = textLines(new TextDecoder().decode(data));
    } catch (error) {
        result = textLines(`could not format the body: ${error.message}`);
    }
    const units = new Uint16Array(result.text.length);
    for (let i = 0; i < result.text.length; i += 1) units[i] = result.text.charCodeAt(i);
    const transfer = [units.buffer, result.starts.buffer];
    if (result.ends) transfer.push(result.ends.buffer);
    self.postMessage({ job, units, starts: result.starts, ends: result.ends, note: result.note }, transfer);
};

/** Growable Uint32/Int32 storage for line tables. */
class Table {
    constructor(Type) {
        this.Type = Type;
        this.array = new Type(1024);
        this.length = 0;
    }

    push(value) {
        if (this.length === this.array.length) {
            const grown = new this.Type(this.array.length * 2);
            grown.set(this.array);
            this.array = grown;
        }
        this.array[this.length] = value;
        this.length += 1;
    }

    done() {
        return this.array.slice(0, this.length);
    }
}

/** Plain text: one entry per line (long lines cut at WRAP). */
function textLines(text) {
    const starts = new Table(Uint32Array);
    let start = 0;
    while (start <= text.length) {
        const newline = text.indexOf("\n", start);
        const end = newline < 0 ? text.length : newline;
        for (let piece = start; piece < end || piece === start; piece += WRAP) {
            starts.push(piece);
            if (end - piece <= WRAP) break;
        }
        if (newline < 0) break;
        start = newline + 1;
    }
    return { text, starts: starts.done(), ends: null, note: "" };
}

const OPEN_BRACE = 123, CLOSE_BRACE = 125, OPEN_BRACKET = 91, CLOSE_BRACKET = 93;
const COMMA = 44, COLON = 58, QUOTE = 34, BACKSLASH = 92;

function isSpace(code) {
    return code === 32 || code === 10 || code === 13 || code === 9;
}

function isStructural(code) {
    return code === OPEN_BRACE || code === CLOSE_BRACE || code === OPEN_BRACKET || code === CLOSE_BRACKET ||
        code === COMMA || code === COLON || code === QUOTE;
}

/**
 * Re-indents JSON text by its tokens. `ends[line]` is the line that closes the object or array
 * opened on `line` (for folding), or -1. Text that is not JSON comes back as plain lines.
 */
function prettyJSON(source, partial) {
    const pieces = [];
    const starts = new Table(Uint32Array);
    const ends = new Table(Int32Array);
    const indents = [""];
    const open = [];
    let length = 0;
    let depth = 0;
    let line = 0;
    let broken = false;
    starts.push(0);
    ends.push(-1);

    const emit = (text) => {
        pieces.push(text);
        length += text.length;
    };
    const newline = () => {
        while (indents.length <= depth) indents.push(indents[indents.length - 1] + "  ");
        emit("\n" + indents[depth]);
        line += 1;
        starts.push(length - indents[depth].length);
        ends.push(-1);
    };
    const nextSignificant = (from) => {
        let index = from;
        while (index < source.length && isSpace(source.charCodeAt(index))) index += 1;
        return index;
    };

    let index = nextSignificant(0);
    while (index < source.length) {
        const code = source.charCodeAt(index);
        if (code === QUOTE) {
            let end = index + 1;
            while (end < source.length) {
                const c = source.charCodeAt(end);
                if (c === BACKSLASH) end += 2;
                else if (c === QUOTE) break;
                else end += 1;
            }
            emit(source.slice(index, Math.min(end + 1, source.length)));
            index = end + 1;
        } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
            emit(source[index]);
            const after = nextSignificant(index + 1);
            const close = code === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET;
            if (source.charCodeAt(after) === close) {
                emit(source[after]);
                index = after + 1;
            } else {
                open.push({ line, close });
                depth += 1;
                newline();
                index += 1;
            }
        } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
            const opener = open.pop();
            if (!opener || opener.close !== code) broken = true;
            depth = Math.max(0, depth - 1);
            newline();
            emit(source[index]);
            if (opener) ends.array[opener.line] = line;
            index += 1;
        } else if (code === COMMA) {
            emit(",");
            newline();
            index += 1;
        } else if (code === COLON) {
            emit(": ");
            index += 1;
        } else {
            let end = index;
            while (end < source.length && !isSpace(source.charCodeAt(end)) && !isStructural(source.charCodeAt(end))) {
                end += 1;
            }
            if (end === index) end += 1;
            const word = source.slice(index, end);
            if (!/^(true|false|null|-?\d+(\.\d+)?([eE][+-]?\d+)?)$/.test(word)) broken = true;
            emit(word);
            index = end;
        }
        index = nextSignificant(index);
        if (broken) break;
    }
    if (broken) {
        const result = textLines(source);
        result.note = "not valid JSON; shown as text";
        return result;
    }
    let note = "";
    if (open.length) note = partial ? "the first part of the JSON; \"show all\" for the rest" : "the JSON ends early";
    return { text: pieces.join(""), starts: starts.done(), ends: ends.done(), note };
}

/** `00000000  7b 22 61 …  |{"a…|`, 16 bytes a line. */
function hexDump(data) {
    const shown = Math.min(data.length, HEX_LIMIT);
    const starts = new Table(Uint32Array);
    const hex = [];
    for (let i = 0; i < 256; i += 1) hex.push(i.toString(16).padStart(2, "0"));
    const lines = [];
    let length = 0;
    for (let offset = 0; offset < shown; offset += 16) {
        const row = data.subarray(offset, Math.min(offset + 16, shown));
        let bytes = "";
        let ascii = "";
        for (let i = 0; i < 16; i += 1) {
            if (i === 8) bytes += " ";
            if (i < row.length) {
                bytes += hex[row[i]] + " ";
                ascii += row[i] >= 32 && row[i] < 127 ? String.fromCharCode(row[i]) : ".";
            } else {
                bytes += "   ";
            }
        }
        const text = `${offset.toString(16).padStart(8, "0")}  ${bytes} |${ascii}|`;
        starts.push(length);
        lines.push(text);
        length += text.length + 1;
    }
    if (!lines.length) {
        starts.push(0);
        lines.push("(empty)");
    }
    const note = data.length > shown ? `the first ${HEX_LIMIT / 1048576} MiB in hex; download for the rest` : "";
    return { text: lines.join("\n"), starts: starts.done(), ends: null, note };
}

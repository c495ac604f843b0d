// XML and HTML pretty-printed by element, for the format worker (loaded there with importScripts).
// A tokenizer over UTF-8 bytes, never a parser into a document: `<`, `>` and quotes are ASCII and
// never occur inside a multi-byte sequence, so tags are found byte by byte as the body streams in,
// and nothing the body says is ever run, fetched or made into an element. The output is text, one
// element a line, indented by depth; an element holding only a short line of text stays on one
// line (`<name>Apples</name>`), as Proxyman and Charles print it.
//
// XML must be well-formed as far as tags go (an end tag closes the element open, every element
// closes, text only inside the root): otherwise `format` answers why, and the worker shows the
// body as sent. HTML is read as browsers read it: void elements (`<br>`), script and style text up
// to their end tag, end tags a browser implies (`<p>one<p>two`, `<li>a<li>b`), stray end tags kept.

/** Bytes an element's text may have to stay on its start tag's line. */
const MARKUP_INLINE = 200;
/** Output lines longer than this (bytes) are cut into several display lines, as the text view cuts them. */
const MARKUP_WRAP = 2000;

const LT = 60, GT = 62, SLASH = 47, BANG = 33, QUESTION = 63, EQUALS = 61;
const DQ = 34, SQ = 39, NL = 10, CR = 13, TAB = 9, SP = 32, FF = 12;

/** HTML elements that have no content and no end tag. */
const VOID_ELEMENTS = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
    "source", "track", "wbr", "keygen", "frame", "basefont", "bgsound"]);
/** HTML elements whose content is text up to their end tag (never tags). */
const TEXT_ELEMENTS = new Set(["script", "style", "xmp", "iframe", "noembed", "noframes", "textarea", "title"]);
/** Of those, the ones holding code: always on lines of their own, their indentation kept. */
const CODE_ELEMENTS = new Set(["script", "style"]);
/** HTML elements whose white space is their content (`pre`, `textarea`; HTML §4.4.3): kept as sent,
 * tags inside included, with nothing indented, trimmed or joined. */
const PREFORMATTED = new Set(["pre", "listing", "textarea"]);
const CLOSES_P = ["address", "article", "aside", "blockquote", "details", "div", "dl", "fieldset", "figcaption",
    "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "main", "menu", "nav",
    "ol", "p", "pre", "section", "table", "ul"];
/** HTML elements whose end tag may be left out: element → the start tags that end it (HTML §13.1.2.4). */
const IMPLIED_END = new Map([
    ["p", new Set(CLOSES_P)], ["li", new Set(["li"])], ["dt", new Set(["dt", "dd"])], ["dd", new Set(["dt", "dd"])],
    ["tr", new Set(["tr", "tbody", "thead", "tfoot"])], ["td", new Set(["td", "th", "tr", "tbody", "thead", "tfoot"])],
    ["th", new Set(["td", "th", "tr", "tbody", "thead", "tfoot"])], ["thead", new Set(["tbody", "tfoot"])],
    ["tbody", new Set(["tbody", "tfoot"])], ["option", new Set(["option", "optgroup"])],
    ["optgroup", new Set(["optgroup"])], ["rt", new Set(["rt", "rp"])], ["rp", new Set(["rt", "rp"])],
    ["head", new Set(["body"])],
]);

const ASCII = new TextDecoder();
const bytesOf = (text) => new TextEncoder().encode(text);
const COMMENT_END = bytesOf("-->"), CDATA_END = bytesOf("]]>"), PI_END = bytesOf("?>");
const COMMENT_START = bytesOf("<!--"), CDATA_START = bytesOf("<![CDATA[");

function isSpace(code) {
    return code === SP || code === NL || code === CR || code === TAB || code === FF;
}

function isNameStart(code) {
    return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || code === 95 || code === 58 || code >= 128;
}

/** Where `seq` first occurs in bytes[from…length), or -1. */
function seek(bytes, length, seq, from) {
    const first = seq[0];
    for (let index = bytes.indexOf(first, from); index >= 0 && index + seq.length <= length;
        index = bytes.indexOf(first, index + 1)) {
        let k = 1;
        while (k < seq.length && bytes[index + k] === seq[k]) k += 1;
        if (k === seq.length) return index;
    }
    return -1;
}

/** Whether bytes at `at` are `seq` (`fold`: ignoring ASCII case). */
function startsWith(bytes, at, seq, fold = false) {
    for (let k = 0; k < seq.length; k += 1) {
        let code = bytes[at + k];
        if (fold && code >= 65 && code <= 90) code += 32;
        if (code !== seq[k]) return false;
    }
    return true;
}

/**
 * Formats one body as it arrives. `out` (a growable byte buffer), `starts` and `ends` are the
 * worker's: a line's first byte in `out`, and for a line that opens an element, the line that
 * closes it (folding), else -1.
 */
class MarkupFormatter {
    constructor(mode, out, starts, ends) {
        this.html = mode === "html";
        this.out = out;
        this.starts = starts;
        this.ends = ends;
        /** Where the next token starts in the source. */
        this.position = 0;
        this.lines = 0;
        /** Open elements: {name, line (output), at (source)}. */
        this.stack = [];
        this.elements = 0;
        /** Where a search for the current token's end resumes (a token split across chunks). */
        this.lookFrom = 0;
        /** What the source ends inside, when it ends inside a token. */
        this.unfinished = "";
        /** How deep in a DOCTYPE's `[ … ]` the scan that stopped at `lookFrom` was. */
        this.bracketDepth = 0;
        /** Element names seen, by a hash of their bytes (`nameAt`). */
        this.names = new Map();
        /** The body is cut (the first part, or what the session kept): unclosed elements are not a fault. */
        this.cut = false;
        this.error = "";
    }

    get kindName() {
        return this.html ? "HTML" : "XML";
    }

    /**
     * Formats the complete tokens in bytes[position…length); with `final`, the rest too.
     * - Returns: why this is not XML ("" when it is, or may still be).
     */
    format(bytes, length, final) {
        this.bytes = bytes;
        if (this.position === 0 && length >= 3 && bytes[0] === 0xEF && bytes[1] === 0xBB && bytes[2] === 0xBF) {
            this.position = 3;
        }
        while (this.position < length) {
            const p = this.position;
            if (bytes[p] !== LT || (this.html && p + 1 < length && !this.opensTag(bytes[p + 1]))) {
                const end = this.textEnd(bytes, length, p + (bytes[p] === LT ? 1 : 0), final);
                if (end < 0) return "";
                const problem = this.text(bytes, p, end);
                if (problem) return problem;
                this.advance(end);
                continue;
            }
            const next = p + 1 < length ? bytes[p + 1] : -1;
            // `<!` needs its next bytes to tell a comment from CDATA from a declaration.
            const short = next === -1 || (next === BANG && length - p < CDATA_START.length);
            let done = false;
            if (short && !final) return "";
            if (next === BANG) done = this.declaration(bytes, length, p);
            else if (next === QUESTION) done = this.instruction(bytes, length, p);
            else if (next === SLASH) done = this.endTag(bytes, length, p);
            else if (next !== -1 && isNameStart(next)) done = this.startTag(bytes, length, p, final);
            else if (next !== -1) return this.fail(`"<" not followed by a name at line ${this.lineAt(bytes, p)}`);
            if (this.error) return this.error;
            if (!done) {
                if (!final) return "";
                this.stop(next === BANG ? "a comment or declaration" : next === QUESTION
                    ? "a processing instruction" : "a tag", bytes, p, length);
                break;
            }
        }
        return final ? this.finish() : "";
    }

    /** A token that never ends: HTML keeps the rest as text (a browser drops it); for XML, `finish` says so. */
    stop(what, bytes, p, length) {
        this.unfinished = what;
        if (this.html) this.block(bytes, p, length, this.stack.length, false);
        this.position = length;
    }

    /** The checks at the end: every XML element closed, at least one element. */
    finish() {
        if (this.html) return "";
        if (this.unfinished) return this.cut ? "" : this.fail(`the XML ends inside ${this.unfinished}`);
        if (this.stack.length) {
            const open = this.stack[this.stack.length - 1];
            if (this.cut) return "";
            return this.fail(`<${open.name}> (line ${this.lineAt(this.bytes, open.at)}) is never closed`);
        }
        if (this.elements === 0) return this.fail("no element in it");
        this.bytes = null;
        return "";
    }

    fail(reason) {
        this.error = `not well-formed ${this.kindName}: ${reason}`;
        return this.error;
    }

    /** Whether `<` followed by `code` starts markup in HTML (else the `<` is text). */
    opensTag(code) {
        return isNameStart(code) && code < 128 || code === SLASH || code === BANG || code === QUESTION;
    }

    advance(to) {
        this.position = to;
        this.lookFrom = 0;
    }

    /** The line (1-based) of source position `p`, for a reason. */
    lineAt(bytes, p) {
        let line = 1;
        for (let index = bytes.indexOf(NL); index >= 0 && index < p; index = bytes.indexOf(NL, index + 1)) line += 1;
        return line;
    }

    /** Where the text from `p` ends (the next tag), or -1 to wait for more. */
    textEnd(bytes, length, from, final) {
        let index = Math.max(from, this.lookFrom);
        for (;;) {
            index = bytes.indexOf(LT, index);
            if (index < 0 || index >= length) {
                if (final) return length;
                this.lookFrom = length;
                return -1;
            }
            if (!this.html) return index;
            if (index + 1 >= length) {
                if (final) return length;
                this.lookFrom = index;
                return -1;
            }
            if (this.opensTag(bytes[index + 1])) return index;
            index += 1;
        }
    }

    /** Text between tags: each of its lines trimmed, blank ones dropped. XML has none outside its root. */
    text(bytes, from, to) {
        let blank = true;
        for (let index = from; index < to && blank; index += 1) blank = isSpace(bytes[index]);
        if (blank) return "";
        if (!this.html && this.stack.length === 0) {
            return this.fail(`text outside the root element at line ${this.lineAt(bytes, from)}`);
        }
        this.block(bytes, from, to, this.stack.length, false);
        return "";
    }

    /** `<!-- … -->`, `<![CDATA[ … ]]>` or `<!DOCTYPE …>`: false to wait for its end. */
    declaration(bytes, length, p) {
        let end;
        if (startsWith(bytes, p, COMMENT_START)) {
            end = this.find(bytes, length, COMMENT_END, p + 4);
            if (end >= 0) end += 3;
        } else if (startsWith(bytes, p, CDATA_START)) {
            end = this.find(bytes, length, CDATA_END, p + 9);
            if (end >= 0) end += 3;
        } else {
            // `<!DOCTYPE …>`. In XML its internal subset (`[ … ]`) holds declarations with `>` of
            // their own: the `>` that ends it is outside the brackets. The scan goes on where it stopped.
            let depth = this.lookFrom > p ? this.bracketDepth : 0;
            end = -1;
            for (let index = Math.max(p + 2, this.lookFrom); index < length; index += 1) {
                const code = bytes[index];
                if (code === 91 && !this.html) {
                    depth += 1;
                } else if (code === 93 && depth > 0) {
                    depth -= 1;
                } else if (code === GT && depth === 0) {
                    end = index + 1;
                    break;
                }
            }
            if (end < 0) {
                this.lookFrom = length;
                this.bracketDepth = depth;
            }
        }
        if (end < 0) return false;
        this.block(bytes, p, end, this.stack.length, false);
        this.advance(end);
        return true;
    }

    /** `<?xml …?>` (HTML: `<?…>`, a bogus comment). */
    instruction(bytes, length, p) {
        let end = this.find(bytes, length, this.html ? [GT] : PI_END, p + 2);
        if (end < 0) return false;
        end += this.html ? 1 : 2;
        this.line(this.stack.length);
        this.tag(bytes, p, end);
        this.advance(end);
        return true;
    }

    /** The index of `seq` from `from`, resuming where the last look for this token stopped. */
    find(bytes, length, seq, from) {
        const found = seek(bytes, length, seq, Math.max(from, this.lookFrom));
        if (found < 0) this.lookFrom = Math.max(from, length - seq.length + 1);
        return found;
    }

    /**
     * The element name in bytes[from…to) up to a space, `/` or `>` (HTML: lower case). Names are
     * interned by a hash of their bytes: a document repeats a few names many times, and building
     * a string for each tag was most of the formatting's time.
     */
    nameAt(bytes, from, to) {
        let hash = 0;
        let end = from;
        for (; end < to; end += 1) {
            let code = bytes[end];
            if (isSpace(code) || code === SLASH || code === GT) break;
            if (this.html && code >= 65 && code <= 90) code += 32;
            hash = (Math.imul(hash, 31) + code) & 0x3fffffff;
        }
        const known = this.names.get(hash);
        if (known && known.bytes.length === end - from) {
            let same = true;
            for (let k = 0; k < known.bytes.length && same; k += 1) {
                let code = bytes[from + k];
                if (this.html && code >= 65 && code <= 90) code += 32;
                same = code === known.bytes[k];
            }
            if (same) return known.name;
        }
        let name = ASCII.decode(bytes.subarray(from, end));
        if (this.html) name = name.toLowerCase();
        if (!known && this.names.size < 10000) this.names.set(hash, { bytes: bytesOf(name), name });
        return name;
    }

    /** Where the start tag at `p` ends (its `>`, outside quoted attribute values), or -1. */
    tagEnd(bytes, length, p) {
        let quote = 0;
        let previous = 0;
        for (let index = p + 1; index < length; index += 1) {
            const code = bytes[index];
            if (quote) {
                if (code === quote) quote = 0;
            } else if (code === GT) {
                return index;
            } else if ((code === DQ || code === SQ) && previous === EQUALS) {
                quote = code;
            }
            if (!isSpace(code)) previous = code;
        }
        return -1;
    }

    startTag(bytes, length, p, final) {
        const close = this.tagEnd(bytes, length, p);
        if (close < 0) return false;
        const name = this.nameAt(bytes, p + 1, close);
        if (this.html) {
            while (this.stack.length && IMPLIED_END.get(this.stack[this.stack.length - 1].name)?.has(name)) {
                this.stack.pop();
            }
        }
        const depth = this.stack.length;
        if (!this.html && depth === 0 && this.elements > 0) {
            return Boolean(this.fail(`a second root element <${name}> at line ${this.lineAt(bytes, p)}`));
        }
        if (bytes[close - 1] === SLASH || (this.html && VOID_ELEMENTS.has(name))) {
            this.line(depth);
            this.tag(bytes, p, close + 1);
            this.elements += 1;
            this.advance(close + 1);
            return true;
        }
        if (this.html && (TEXT_ELEMENTS.has(name) || PREFORMATTED.has(name))) {
            return this.textElement(bytes, length, p, close, name, final);
        }
        // Text alone up to this element's end tag, short and on one line: all on one line.
        const window = Math.min(length, close + 1 + MARKUP_INLINE);
        const next = bytes.subarray(0, window).indexOf(LT, close + 1);
        if (next < 0 && window === length && !final) return false;
        if (next >= 0) {
            const end = this.matchingEnd(bytes, length, next, name);
            if (end === -1 && !final) return false;
            const inner = bytes.subarray(close + 1, next);
            if (end > 0 && !inner.includes(NL) && !inner.includes(CR)) {
                this.line(depth);
                this.tag(bytes, p, close + 1);
                let from = close + 1;
                let to = next;
                while (from < to && isSpace(bytes[from])) from += 1;
                while (to > from && isSpace(bytes[to - 1])) to -= 1;
                this.put(bytes, from, to);
                this.tag(bytes, next, end + 1);
                this.elements += 1;
                this.advance(end + 1);
                return true;
            }
        }
        this.line(depth);
        this.tag(bytes, p, close + 1);
        this.stack.push({ name, line: this.starts.length - 1, at: p });
        this.elements += 1;
        this.advance(close + 1);
        return true;
    }

    /** The `>` of `</name>` at `at`: -2 when it is not that end tag, -1 when it has not all come yet. */
    matchingEnd(bytes, length, at, name) {
        if (at + 1 >= length) return -1;
        if (bytes[at + 1] !== SLASH) return -2;
        const gt = bytes.subarray(0, Math.min(length, at + name.length * 4 + 64)).indexOf(GT, at);
        if (gt < 0) return at + name.length * 4 + 64 < length ? -2 : -1;
        return this.nameAt(bytes, at + 2, gt) === name ? gt : -2;
    }

    /** `<script>`, `<style>`, `<title>`…: text up to `</name`, never tags. */
    textElement(bytes, length, p, close, name, final) {
        const endTag = bytesOf(`</${name}`);
        let from = Math.max(close + 1, this.lookFrom);
        let end = -1;
        let gt = -1;
        for (;;) {
            const lt = bytes.subarray(0, length).indexOf(LT, from);
            if (lt < 0 || lt + endTag.length >= length) {
                this.lookFrom = lt < 0 ? length : lt;
                break;
            }
            const after = bytes[lt + endTag.length];
            if (startsWith(bytes, lt, endTag, true) && (isSpace(after) || after === GT || after === SLASH)) {
                gt = bytes.subarray(0, length).indexOf(GT, lt);
                end = lt;
                break;
            }
            from = lt + 1;
        }
        if ((end < 0 || gt < 0) && !final) return false;
        const depth = this.stack.length;
        if (PREFORMATTED.has(name)) {
            this.line(depth);
            const opened = this.starts.length - 1;
            this.verbatim(bytes, p, gt >= 0 ? gt + 1 : length);
            if (this.starts.length - 1 > opened) this.ends.array[opened] = this.starts.length - 1;
            this.elements += 1;
            this.advance(gt >= 0 ? gt + 1 : length);
            return true;
        }
        const contentEnd = end < 0 ? length : end;
        const inner = bytes.subarray(close + 1, contentEnd);
        const oneLine = !CODE_ELEMENTS.has(name) && !inner.includes(NL) && !inner.includes(CR)
            && inner.length <= MARKUP_INLINE;
        this.line(depth);
        this.tag(bytes, p, close + 1);
        const opened = this.starts.length - 1;
        if (oneLine || inner.every(isSpace)) {
            this.put(bytes, close + 1, contentEnd);
        } else {
            this.block(bytes, close + 1, contentEnd, depth + 1, CODE_ELEMENTS.has(name));
            if (gt >= 0) this.line(depth);
        }
        if (gt >= 0) {
            this.tag(bytes, end, gt + 1);
            if (this.starts.length - 1 > opened) this.ends.array[opened] = this.starts.length - 1;
        }
        this.elements += 1;
        this.advance(gt >= 0 ? gt + 1 : length);
        return true;
    }

    endTag(bytes, length, p) {
        const close = this.find(bytes, length, [GT], p + 2);
        if (close < 0) return false;
        const name = this.nameAt(bytes, p + 2, close);
        const stack = this.stack;
        let open = stack.length - 1;
        if (this.html) {
            while (open >= 0 && stack[open].name !== name) open -= 1;
        } else if (open < 0) {
            return Boolean(this.fail(`</${name}> at line ${this.lineAt(bytes, p)} closes no open element`));
        } else if (stack[open].name !== name) {
            return Boolean(this.fail(`</${name}> at line ${this.lineAt(bytes, p)} does not close <${stack[open].name}>`
                + ` (line ${this.lineAt(bytes, stack[open].at)})`));
        }
        // A stray HTML end tag (nothing open by that name) is kept where it stands; a browser ignores it.
        this.line(open < 0 ? stack.length : open);
        this.tag(bytes, p, close + 1);
        if (open >= 0) {
            this.ends.array[stack[open].line] = this.starts.length - 1;
            stack.length = open;
        }
        this.advance(close + 1);
        return true;
    }

    /**
     * bytes[from…to) as sent from the current line on: a new line, not indented, at each of its
     * line breaks (CR LF, LF or CR), so its white space reads as in the raw view.
     */
    verbatim(bytes, from, to) {
        let start = from;
        for (let index = from; index < to; index += 1) {
            const code = bytes[index];
            if (code !== NL && code !== CR) continue;
            this.put(bytes, start, index);
            if (code === CR && index + 1 < to && bytes[index + 1] === NL) index += 1;
            start = index + 1;
            this.line(0);
        }
        this.put(bytes, start, to);
    }

    /** Starts an output line at `depth`. */
    line(depth) {
        if (this.lines > 0) {
            this.out.push(NL);
            this.starts.push(this.out.length);
            this.ends.push(-1);
        }
        this.lines += 1;
        // Deeper than the worker's INDENT_CAP, lines are indented as at that depth.
        const width = indentOf(depth);
        this.out.reserve(width);
        this.out.array.fill(SP, this.out.length, this.out.length + width);
        this.out.length += width;
    }

    /** Copies bytes[from…to) onto the line, cutting it every MARKUP_WRAP bytes (on a character). */
    put(bytes, from, to) {
        this.out.append(bytes.subarray(from, to));
        const out = this.out;
        let start = this.starts.array[this.starts.length - 1];
        while (out.length - start > MARKUP_WRAP) {
            let cut = start + MARKUP_WRAP;
            while (cut > start + 1 && (out.array[cut] & 0xc0) === 0x80) cut -= 1;
            this.starts.push(cut);
            this.ends.push(-1);
            start = cut;
        }
    }

    /** A tag on the line: white space outside quotes as one space, line breaks inside them as spaces. */
    tag(bytes, from, to) {
        let plain = true;
        for (let index = from; index < to && plain; index += 1) {
            const code = bytes[index];
            plain = code !== NL && code !== CR && code !== TAB && code !== FF
                && (code !== SP || (bytes[index + 1] !== SP && bytes[index + 1] !== GT));
        }
        if (plain) {
            this.put(bytes, from, to);
            return;
        }
        const out = this.out;
        out.reserve(to - from);
        const target = out.array;
        let o = out.length;
        let quote = 0;
        let previous = 0;
        let space = false;
        for (let index = from; index < to; index += 1) {
            const code = bytes[index];
            if (quote) {
                target[o++] = code === NL || code === CR || code === TAB ? SP : code;
                if (code === quote) quote = 0;
                previous = code;
                continue;
            }
            if (isSpace(code)) {
                space = true;
                continue;
            }
            if (space && code !== GT) target[o++] = SP;
            space = false;
            if ((code === DQ || code === SQ) && previous === EQUALS) quote = code;
            target[o++] = code;
            previous = code;
        }
        const start = out.length;
        out.length = o;
        if (o - this.starts.array[this.starts.length - 1] > MARKUP_WRAP) {
            out.length = start;
            this.put(target.slice(start, o), 0, o - start);
        }
    }

    /**
     * Text of several lines at `depth`, each on its own line: trimmed and blank ones dropped, or
     * for code (`keepIndent`) with the indentation its lines share taken off and the rest kept.
     */
    block(bytes, from, to, depth, keepIndent) {
        const lines = [];
        let start = from;
        for (let index = from; index <= to; index += 1) {
            if (index === to || bytes[index] === NL || bytes[index] === CR) {
                let a = start;
                let b = index;
                while (b > a && isSpace(bytes[b - 1])) b -= 1;
                lines.push([a, b]);
                if (index < to && bytes[index] === CR && bytes[index + 1] === NL) index += 1;
                start = index + 1;
            }
        }
        let shared = Infinity;
        for (const [a, b] of lines) {
            if (a === b) continue;
            let k = a;
            while (k < b && (bytes[k] === SP || bytes[k] === TAB)) k += 1;
            shared = Math.min(shared, k - a);
        }
        while (lines.length && lines[0][0] === lines[0][1]) lines.shift();
        while (lines.length && lines[lines.length - 1][0] === lines[lines.length - 1][1]) lines.pop();
        for (const [a, b] of lines) {
            if (a === b && !keepIndent) continue;
            let begin = a;
            if (keepIndent) begin = Math.min(b, a + shared);
            else while (begin < b && isSpace(bytes[begin])) begin += 1;
            if (begin === b) {
                this.line(0);
                continue;
            }
            this.line(depth);
            this.put(bytes, begin, b);
        }
    }
}

self.MarkupFormatter = MarkupFormatter;

// The line diff and the JSON canonical form behind "Compare" (compare.js): pure functions, no DOM, so
// the compare worker loads them (`importScripts`) and a unit test runs them under Node.
//
// The diff is Myers' O((N+M)·D) algorithm in linear space ("An O(ND) Difference Algorithm and Its
// Variations", 1986, §4b: the middle snake, then each half), on lines interned to integers, with the
// common head and tail of every part taken off first. A budget bounds its work: two bodies that
// differ almost everywhere (D near N+M) would cost N·M steps, so past the budget the part still to
// do is given as removed and added whole, and the result says it is approximate.

/** Steps of the middle-snake search a diff may take (a second or two of a worker's time). */
const DIFF_BUDGET = 100_000_000;

/**
 * The shortest edit script turning `a` into `b` (arrays of comparable values, integers for speed):
 * `{ops, approximate}`, `ops` a list of `[kind, count]` runs in order, kind `"="` (kept), `"-"`
 * (only in `a`) or `"+"` (only in `b`); adjacent runs of a kind are merged. `approximate`: the
 * budget ran out and some part was given as removed and added whole.
 */
function diffSequences(a, b, budget = DIFF_BUDGET) {
    const ops = [];
    const state = { left: budget, approximate: false };
    const push = (kind, count) => {
        if (count <= 0) return;
        const last = ops[ops.length - 1];
        if (last && last[0] === kind) last[1] += count;
        else ops.push([kind, count]);
    };
    // The parts still to do, as a stack (the first part on top): [aLo, aHi, bLo, bHi] or an equal run
    // [count] found between two parts.
    const work = [[0, a.length, 0, b.length]];
    while (work.length) {
        const part = work.pop();
        if (part.length === 1) {
            push("=", part[0]);
            continue;
        }
        let [aLo, aHi, bLo, bHi] = part;
        let head = 0;
        while (aLo + head < aHi && bLo + head < bHi && a[aLo + head] === b[bLo + head]) head += 1;
        aLo += head;
        bLo += head;
        let tail = 0;
        while (aHi - tail > aLo && bHi - tail > bLo && a[aHi - 1 - tail] === b[bHi - 1 - tail]) tail += 1;
        aHi -= tail;
        bHi -= tail;
        push("=", head);
        if (aLo === aHi || bLo === bHi) {
            push("-", aHi - aLo);
            push("+", bHi - bLo);
            push("=", tail);
            continue;
        }
        const snake = state.left > 0 ? middleSnake(a, aLo, aHi, b, bLo, bHi, state) : null;
        if (!snake) {
            state.approximate = true;
            push("-", aHi - aLo);
            push("+", bHi - bLo);
            push("=", tail);
            continue;
        }
        // Both parts are non-empty and differ at both ends, so D ≥ 2 and each half has fewer edits.
        work.push([tail]);
        work.push([aLo + snake.xEnd, aHi, bLo + snake.yEnd, bHi]);
        work.push([snake.xEnd - snake.xStart]);
        work.push([aLo, aLo + snake.xStart, bLo, bLo + snake.yStart]);
    }
    return { ops, approximate: state.approximate };
}

/**
 * Myers' middle snake of a[aLo..aHi) against b[bLo..bHi): the diagonal run `{xStart, yStart, xEnd,
 * yEnd}` (offsets into the part) that a shortest edit script passes through half-way. Null when the
 * search used up `state.left`.
 */
function middleSnake(a, aLo, aHi, b, bLo, bHi, state) {
    const n = aHi - aLo;
    const m = bHi - bLo;
    const delta = n - m;
    const odd = (delta & 1) !== 0;
    const max = Math.ceil((n + m) / 2);
    const offset = max + 1;
    // forward[k]: the furthest x on diagonal k (x − y = k) from the start; backward[k] the same from
    // the end, in reversed coordinates, whose diagonal k is the forward diagonal delta − k.
    const forward = new Int32Array(2 * max + 3);
    const backward = new Int32Array(2 * max + 3);
    for (let d = 0; d <= max; d += 1) {
        state.left -= 2 * d + 1;
        if (state.left < 0) return null;
        for (let k = -d; k <= d; k += 2) {
            let x = k === -d || (k !== d && forward[offset + k - 1] < forward[offset + k + 1])
                ? forward[offset + k + 1] : forward[offset + k - 1] + 1;
            let y = x - k;
            const xStart = x;
            const yStart = y;
            while (x < n && y < m && a[aLo + x] === b[bLo + y]) {
                x += 1;
                y += 1;
            }
            forward[offset + k] = x;
            const back = delta - k;
            if (odd && back >= -(d - 1) && back <= d - 1 && x + backward[offset + back] >= n) {
                return { xStart, yStart, xEnd: x, yEnd: y };
            }
        }
        for (let k = -d; k <= d; k += 2) {
            let x = k === -d || (k !== d && backward[offset + k - 1] < backward[offset + k + 1])
                ? backward[offset + k + 1] : backward[offset + k - 1] + 1;
            let y = x - k;
            const xStart = x;
            const yStart = y;
            while (x < n && y < m && a[aHi - 1 - x] === b[bHi - 1 - y]) {
                x += 1;
                y += 1;
            }
            backward[offset + k] = x;
            const front = delta - k;
            if (!odd && front >= -d && front <= d && x + forward[offset + front] >= n) {
                return { xStart: n - x, yStart: m - y, xEnd: n - xStart, yEnd: m - yStart };
            }
        }
    }
    return null;
}

/**
 * The line diff of two texts: `{ops, approximate, a, b}`, `a` and `b` their lines (split at LF, CR
 * LF or CR; a last empty line after a final newline dropped) and `ops` as `diffSequences` gives them.
 */
function diffLines(textA, textB, budget = DIFF_BUDGET) {
    const a = splitLines(textA);
    const b = splitLines(textB);
    const numbers = new Map();
    const intern = (line) => {
        let number = numbers.get(line);
        if (number === undefined) {
            number = numbers.size;
            numbers.set(line, number);
        }
        return number;
    };
    const result = diffSequences(Int32Array.from(a, intern), Int32Array.from(b, intern), budget);
    return { ...result, a, b };
}

/** A text's lines (LF, CR LF or CR end one); no last empty line after a final line end. */
function splitLines(text) {
    if (text === "") return [];
    const lines = text.split(/\r\n|\r|\n/);
    if (lines[lines.length - 1] === "") lines.pop();
    return lines;
}

/**
 * A JSON number as the canonical form writes it: by its value (`1.50` is `1.5`), but as it was
 * written when it has more significant digits than a double holds, so 12345678901234567891 never
 * compares equal to …890.
 */
class JSONNumberText {
    constructor(value, source) {
        const digits = source.replace(/^-/, "").replace(/[eE].*$/, "").replace(".", "").replace(/^0+/, "");
        this.text = digits.length > 15 ? source : JSON.stringify(value);
    }
}

/**
 * `text` parsed as JSON and written again with every object's keys sorted (by UTF-16 code unit, as
 * `Array.prototype.sort` orders strings) and two spaces a level, as `JSON.stringify(value, null, 2)`
 * writes it; numbers by value, or as written past a double's precision (where the source can be read:
 * `JSON.parse`'s reviver context). Null when `text` is not JSON or nests too deep to walk.
 */
function canonicalJSON(text) {
    let value;
    try {
        value = JSON.parse(text.replace(/^\uFEFF/, ""), (key, parsed, context) =>
            typeof parsed === "number" && context?.source !== undefined
                ? new JSONNumberText(parsed, context.source) : parsed);
    } catch {
        return null;
    }
    const out = [];
    const write = (item, indent) => {
        if (item instanceof JSONNumberText) {
            out.push(item.text);
        } else if (Array.isArray(item)) {
            if (!item.length) {
                out.push("[]");
                return;
            }
            out.push("[\n");
            item.forEach((element, index) => {
                out.push(`${indent}  `);
                write(element, `${indent}  `);
                out.push(index + 1 < item.length ? ",\n" : "\n");
            });
            out.push(`${indent}]`);
        } else if (item !== null && typeof item === "object") {
            const keys = Object.keys(item).sort();
            if (!keys.length) {
                out.push("{}");
                return;
            }
            out.push("{\n");
            keys.forEach((key, index) => {
                out.push(`${indent}  ${JSON.stringify(key)}: `);
                write(item[key], `${indent}  `);
                out.push(index + 1 < keys.length ? ",\n" : "\n");
            });
            out.push(`${indent}}`);
        } else {
            out.push(JSON.stringify(item));
        }
    };
    try {
        write(value, "");
    } catch {
        // A stack overflow: JSON nested thousands deep.
        return null;
    }
    return out.join("");
}

if (typeof module !== "undefined") module.exports = { diffSequences, diffLines, splitLines, canonicalJSON };

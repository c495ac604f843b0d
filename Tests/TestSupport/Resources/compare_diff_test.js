// The web UI's line diff and JSON canonical form (Sources/WebUI/Assets/compare-diff.js) under Node:
// node --harmony-json-parse-with-source compare_diff_test.js PATH/compare-diff.js
// (the flag gives Node 20 JSON.parse's source text, which Chromium has by default).
//
// Checks: every edit script turns a into b and keeps a longest common subsequence (against a
// dynamic-programming LCS on 4,000 random pairs of small sequences over small alphabets, where
// ties are many); runs come merged; a change in one line of 40,000 costs one removal and one
// addition; past its budget the diff says it is approximate and still turns a into b; lines split
// at LF, CR LF and CR; JSON's keys sorted at every depth, arrays kept in order, numbers as written
// by value (1.50 is 1.5) and as written past a double's precision (2^64, 22 digits), not-JSON null.
// Prints `PASS name detail` or `FAIL name detail` a check; exits 1 on any failure.

const path = require("path");
const { diffSequences, diffLines, splitLines, canonicalJSON } = require(path.resolve(process.argv[2]));

let failed = false;
function result(name, ok, detail = "") {
    console.log(`${ok ? "PASS" : "FAIL"} ${name} ${detail}`);
    failed = failed || !ok;
}

function lcsLength(a, b) {
    const rows = Array.from({ length: a.length + 1 }, () => new Int32Array(b.length + 1));
    for (let i = a.length - 1; i >= 0; i -= 1) {
        for (let j = b.length - 1; j >= 0; j -= 1) {
            rows[i][j] = a[i] === b[j] ? rows[i + 1][j + 1] + 1 : Math.max(rows[i + 1][j], rows[i][j + 1]);
        }
    }
    return rows[0][0];
}

/** Walks the script over a and b: null when it turns a into b, else why not. */
function replay(ops, a, b) {
    let i = 0;
    let j = 0;
    for (const [kind, count] of ops) {
        if (!(count > 0)) return `a run of ${count}`;
        for (let n = 0; n < count; n += 1) {
            if (kind === "=") {
                if (a[i] !== b[j]) return `kept ${a[i]} against ${b[j]}`;
                i += 1;
                j += 1;
            } else if (kind === "-") {
                i += 1;
            } else if (kind === "+") {
                j += 1;
            } else {
                return `kind ${kind}`;
            }
        }
    }
    return i === a.length && j === b.length ? null : `ended at ${i}/${a.length}, ${j}/${b.length}`;
}

function equalCount(ops) {
    return ops.filter(([kind]) => kind === "=").reduce((sum, [, count]) => sum + count, 0);
}

// A seeded generator: a failure is the same on every run.
let seed = 12345;
function random(limit) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % limit;
}

let wrong = null;
for (let trial = 0; trial < 4000 && !wrong; trial += 1) {
    const alphabet = 1 + random(5);
    const a = Array.from({ length: random(18) }, () => random(alphabet));
    const b = Array.from({ length: random(18) }, () => random(alphabet));
    const { ops, approximate } = diffSequences(a, b);
    const broken = replay(ops, a, b);
    const merged = ops.every((op, index) => index === 0 || ops[index - 1][0] !== op[0]);
    if (broken || approximate || !merged || equalCount(ops) !== lcsLength(a, b)) {
        wrong = JSON.stringify({ a, b, ops, broken, approximate, merged, lcs: lcsLength(a, b) });
    }
}
result("shortest-edit-scripts", !wrong, wrong ?? "4000 random pairs");

const many = Array.from({ length: 40000 }, (_, index) => `line ${index}`);
const changed = many.slice();
changed[20000] = "changed";
const one = diffLines(many.join("\n"), changed.join("\n"));
result("one-line-changed", JSON.stringify(one.ops) === JSON.stringify([["=", 20000], ["-", 1], ["+", 1], ["=", 19999]])
    && !one.approximate, JSON.stringify(one.ops));

const left = Array.from({ length: 3000 }, (_, index) => index);
const right = Array.from({ length: 3000 }, (_, index) => (index % 2 ? index + 100000 : index));
const capped = diffSequences(left, right, 1000);
const full = diffSequences(left, right);
result("budget-approximates", capped.approximate && replay(capped.ops, left, right) === null
    && !full.approximate && equalCount(full.ops) === 1500 && replay(full.ops, left, right) === null,
`capped ${JSON.stringify(capped.ops.slice(0, 4))}, full keeps ${equalCount(full.ops)}`);

result("line-ends", JSON.stringify(splitLines("a\r\nb\rc\nd\n")) === JSON.stringify(["a", "b", "c", "d"])
    && splitLines("").length === 0 && JSON.stringify(splitLines("x\n\n")) === JSON.stringify(["x", ""]));

const canonical = canonicalJSON('\uFEFF{"b": 1, "a": [3, {"z": 12345678901234567891, "y": null, "x": 1.50, '
    + '"w": -0.1000000000000000000001}], "e": {}, "f": []}');
const expected = '{\n  "a": [\n    3,\n    {\n      "w": -0.1000000000000000000001,\n      "x": 1.5,\n'
    + '      "y": null,\n      "z": 12345678901234567891\n    }\n  ],\n'
    + '  "b": 1,\n  "e": {},\n  "f": []\n}';
result("json-keys-sorted-numbers-kept", canonical === expected, JSON.stringify(canonical));
result("json-order-is-no-difference", canonicalJSON('{"x": 1, "y": [1, 2]}') === canonicalJSON('{ "y":[1,2],"x":1 }')
    && canonicalJSON('{"y": [2, 1]}') !== canonicalJSON('{"y": [1, 2]}'));
result("not-json-is-null", canonicalJSON("{not json") === null && canonicalJSON("") === null
    && canonicalJSON('"text"') === '"text"');

process.exit(failed ? 1 : 0);

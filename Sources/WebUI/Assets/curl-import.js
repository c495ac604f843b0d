// Reads a curl command line into a request (method, URL, header fields, body), as Postman's,
// Proxyman's and HTTP Toolkit's "import from cURL" do: what a browser's "Copy as cURL (bash)",
// an API's documentation or DevProxy's own "Copy as curl" gives. Words are split as a POSIX shell
// splits them ('…', "…", $'…', backslashes, line continuations); nothing is ever run.

/** Options that take no value and change nothing of the request sent through DevProxy. */
const IGNORED_FLAGS = new Set([
    "-s", "--silent", "-S", "--show-error", "-v", "--verbose", "-k", "--insecure", "-L", "--location", "-i",
    "--include", "-f", "--fail", "--fail-with-body", "-g", "--globoff", "-N", "--no-buffer", "--raw", "--http1.0",
    "--http1.1", "--http2", "--http2-prior-knowledge", "--http3", "--tr-encoding", "--path-as-is", "-#",
    "--progress-bar", "-O", "--remote-name", "-J", "--remote-header-name", "--no-keepalive", "--tcp-nodelay",
    "--ssl-no-revoke", "-4", "--ipv4", "-6", "--ipv6", "-q", "--disable", "--location-trusted", "--no-progress-meter",
]);

/** Options whose value says how curl runs, not what it sends: read and left out. */
const IGNORED_VALUES = new Set([
    "-o", "--output", "-w", "--write-out", "-m", "--max-time", "--connect-timeout", "--retry", "--retry-delay",
    "--retry-max-time", "-x", "--proxy", "--proxy-user", "-U", "--cacert", "--capath", "--cert", "-E", "--key",
    "--resolve", "--connect-to", "--limit-rate", "-c", "--cookie-jar", "--interface", "--max-redirs", "-D",
    "--dump-header", "--trace", "--trace-ascii", "--stderr", "-y", "--speed-time", "-Y", "--speed-limit",
    "--noproxy", "--dns-servers", "--unix-socket", "--abstract-unix-socket", "--ciphers", "--tls-max", "-r", "--range",
]);

/** Short options that take a value (`-XPOST`, `-H 'a: b'`). */
const SHORT_WITH_VALUE = new Set(["-X", "-H", "-d", "-A", "-e", "-b", "-u", "-F", "-o", "-w", "-m", "-x", "-U",
    "-E", "-c", "-D", "-y", "-Y", "-r", "-T"]);

/** The words of `text` as a POSIX shell splits them (no expansion: `$VAR` stays as typed). */
export function shellWords(text) {
    const words = [];
    let word = null;
    let index = 0;
    const append = (piece) => { word = (word ?? "") + piece; };
    while (index < text.length) {
        const char = text[index];
        if (char === "\\" && text[index + 1] === "\n") {
            index += 2;   // a line continuation
        } else if (char === "\\" && text[index + 1] === "\r" && text[index + 2] === "\n") {
            index += 3;
        } else if (/\s/.test(char)) {
            if (word !== null) words.push(word);
            word = null;
            index += 1;
        } else if (char === "\\") {
            if (index + 1 >= text.length) throw new Error("the command ends with a lone backslash");
            append(text[index + 1]);
            index += 2;
        } else if (char === "'") {
            const end = text.indexOf("'", index + 1);
            if (end < 0) throw new Error(`a ' quote opened at character ${index + 1} is never closed`);
            append(text.slice(index + 1, end));
            index = end + 1;
        } else if (char === "$" && text[index + 1] === "'") {
            const [piece, end] = ansiQuoted(text, index + 2);
            append(piece);
            index = end;
        } else if (char === '"') {
            let piece = "";
            let cursor = index + 1;
            for (;;) {
                if (cursor >= text.length) throw new Error(`a " quote opened at character ${index + 1} is never closed`);
                const c = text[cursor];
                if (c === '"') break;
                if (c === "\\" && cursor + 1 < text.length && "$`\"\\\n".includes(text[cursor + 1])) {
                    if (text[cursor + 1] !== "\n") piece += text[cursor + 1];
                    cursor += 2;
                    continue;
                }
                piece += c;
                cursor += 1;
            }
            append(piece);
            index = cursor + 1;
        } else {
            append(char);
            index += 1;
        }
    }
    if (word !== null) words.push(word);
    return words;
}

/** A `$'…'` word from `start` (after the quote): its text and the index after the closing quote. */
function ansiQuoted(text, start) {
    const simple = { n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", v: "\v",
        "\\": "\\", "'": "'", '"': '"', "?": "?" };
    let out = "";
    let index = start;
    // Bytes from \xHH and octal escapes are gathered and read as UTF-8 together (Chrome writes a
    // body's non-ASCII characters as their UTF-8 bytes: `\xc3\xa9` is é).
    let bytes = [];
    const flush = () => {
        if (bytes.length) out += new TextDecoder().decode(new Uint8Array(bytes));
        bytes = [];
    };
    while (index < text.length) {
        const char = text[index];
        if (char === "'") {
            flush();
            return [out, index + 1];
        }
        if (char !== "\\") {
            flush();
            out += char;
            index += 1;
            continue;
        }
        const next = text[index + 1];
        let match;
        if (next === "x" && (match = /^[0-9a-fA-F]{1,2}/.exec(text.slice(index + 2)))) {
            bytes.push(parseInt(match[0], 16));
            index += 2 + match[0].length;
        } else if ((next === "u" || next === "U") && (match = /^[0-9a-fA-F]{1,8}/.exec(text.slice(index + 2, index + (next === "u" ? 6 : 10))))) {
            flush();
            out += String.fromCodePoint(parseInt(match[0], 16));
            index += 2 + match[0].length;
        } else if ((match = /^[0-7]{1,3}/.exec(text.slice(index + 1)))) {
            bytes.push(parseInt(match[0], 8) & 0xff);
            index += 1 + match[0].length;
        } else if (next !== undefined && next in simple) {
            flush();
            out += simple[next];
            index += 2;
        } else {
            flush();
            out += char + (next ?? "");
            index += 2;
        }
    }
    throw new Error(`a $' quote opened at character ${start - 1} is never closed`);
}

/** `text` percent-encoded as curl encodes it: UTF-8, unreserved characters kept, a space as `+`. */
function curlEscaped(text) {
    let out = "";
    for (const byte of new TextEncoder().encode(text)) {
        const char = String.fromCharCode(byte);
        if (/[A-Za-z0-9\-._~]/.test(char)) out += char;
        else if (byte === 0x20) out += "+";
        else out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    }
    return out;
}

/** `value`, URL-encoded as `--data-urlencode` encodes it (`name=content`: only the content). */
function urlEncoded(value) {
    if (value.startsWith("@") || /^[^=]*@/.test(value) && !value.includes("=")) {
        throw new Error("--data-urlencode @FILE reads a file: paste its content instead");
    }
    const equals = value.indexOf("=");
    if (equals < 0) return curlEscaped(value);
    return `${value.slice(0, equals + 1)}${curlEscaped(value.slice(equals + 1))}`;
}

/**
 * The request a curl command sends: `{method, url, headers: [[name, value]], body, ignored}`
 * (`body` null for none; `ignored` the options read and left out, such as `--proxy`). Throws an
 * Error saying why for what it cannot send as curl would: a file to read (`-d @file`, `-T`), a
 * multipart form (`-F`), an option it does not know, no URL or two.
 */
export function parseCurl(text) {
    const words = shellWords(text.trim());
    if (words[0] === "curl" || words[0]?.endsWith("/curl") || words[0] === "curl.exe") words.shift();
    if (words.length === 0) throw new Error("paste a curl command: curl 'https://…' -H 'Name: value'");
    let method = null;
    const urls = [];
    const headers = [];
    const data = [];
    let get = false;
    let head = false;
    let json = false;
    let user = null;
    const ignored = [];
    let index = 0;
    const valueOf = (option) => {
        if (index >= words.length) throw new Error(`${option} needs a value`);
        return words[index++];
    };
    while (index < words.length) {
        let word = words[index++];
        let attached = null;
        if (word.startsWith("--") && word.includes("=") && word.length > 2) {
            // curl does not take --name=value: say so rather than send it as a URL.
            throw new Error(`${word.slice(0, word.indexOf("="))}=…: curl takes an option's value as the next word`);
        }
        if (/^-[A-Za-z0-9#]/.test(word) && word.length > 2) {
            // `-XPOST`, `-H'a: b'`, and grouped flags (`-sSL`, `-sXPOST`): curl reads the letters one
            // by one, and a letter that takes a value takes the rest of the word (or the next word).
            const letters = word.slice(1);
            let at = 0;
            for (; at < letters.length; at += 1) {
                const flag = `-${letters[at]}`;
                if (SHORT_WITH_VALUE.has(flag)) break;
                if (at === letters.length - 1) break;
                if (flag === "-G") get = true;
                else if (flag === "-I") head = true;
                else if (!IGNORED_FLAGS.has(flag)) throw new Error(`curl option ${flag} (in ${word}) is not read here`);
            }
            word = `-${letters[at]}`;
            const rest = letters.slice(at + 1);
            if (rest) attached = rest;
        }
        const value = (option) => attached ?? valueOf(option);
        switch (word) {
        case "-X": case "--request": method = value(word).toUpperCase(); break;
        case "-H": case "--header": {
            const line = value(word);
            const colon = line.indexOf(":");
            if (colon <= 0) {
                // `Name;` sends an empty header in curl; `@file` reads a file.
                if (line.endsWith(";")) headers.push([line.slice(0, -1).trim(), ""]);
                else if (line.startsWith("@")) throw new Error("-H @FILE reads a file: paste the header lines instead");
                else throw new Error(`-H ${line}: not "Name: value"`);
                break;
            }
            const name = line.slice(0, colon).trim();
            const headerValue = line.slice(colon + 1).trim();
            // `Name:` with nothing removes a header curl would send; there is nothing to remove here.
            if (headerValue !== "") headers.push([name, headerValue]);
            break;
        }
        case "-d": case "--data": case "--data-ascii": case "--data-binary": {
            const part = value(word);
            if (part.startsWith("@")) throw new Error(`${word} ${part} reads a file: paste the body instead`);
            data.push(word === "--data-binary" ? part : part.replace(/[\r\n]/g, ""));
            break;
        }
        case "--data-raw": data.push(value(word)); break;
        case "--data-urlencode": data.push(urlEncoded(value(word))); break;
        case "--json": {
            const part = value(word);
            if (part.startsWith("@")) throw new Error(`--json ${part} reads a file: paste the JSON instead`);
            data.push(part);
            json = true;
            break;
        }
        case "-G": case "--get": get = true; break;
        case "-I": case "--head": head = true; break;
        case "-A": case "--user-agent": headers.push(["User-Agent", value(word)]); break;
        case "-e": case "--referer": headers.push(["Referer", value(word).replace(/;auto$/, "")]); break;
        case "-b": case "--cookie": {
            const cookie = value(word);
            if (!cookie.includes("=")) throw new Error(`-b ${cookie} reads a cookie file: paste name=value pairs instead`);
            headers.push(["Cookie", cookie]);
            break;
        }
        case "-u": case "--user": user = value(word); break;
        case "--url": urls.push(value(word)); break;
        case "--compressed": headers.push(["Accept-Encoding", "gzip, deflate, br, zstd"]); break;
        case "-F": case "--form": case "--form-string":
            throw new Error("multipart forms (-F) are not read here: send the request, then edit its body in Edit and resend");
        case "-T": case "--upload-file":
            throw new Error("-T uploads a file: paste its content with --data-binary instead");
        case "-K": case "--config":
            throw new Error("-K reads options from a file: paste them instead");
        default:
            if (IGNORED_FLAGS.has(word)) {
                if (!["-s", "--silent", "-S", "--show-error", "-v", "--verbose", "-i", "--include"].includes(word)) ignored.push(word);
            } else if (IGNORED_VALUES.has(word)) {
                value(word);
                ignored.push(word);
            } else if (word.startsWith("-") && word.length > 1) {
                throw new Error(`curl option ${word} is not read here: remove it and paste again`);
            } else {
                urls.push(word);
            }
        }
    }
    if (urls.length === 0) throw new Error("the command names no URL");
    if (urls.length > 1) throw new Error(`the command names ${urls.length} URLs (${urls.join(", ")}): paste one request`);
    let url = urls[0];
    if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) url = `http://${url}`;   // curl's default scheme
    if (!/^https?:\/\//i.test(url)) throw new Error(`${url}: only http:// and https:// requests are sent here`);
    const has = (name) => headers.some(([header]) => header.toLowerCase() === name);
    let body = data.length ? data.join("&") : null;
    if (get && body !== null) {
        url += (url.includes("?") ? "&" : "?") + body;
        body = null;
    }
    if (json) {
        if (!has("content-type")) headers.push(["Content-Type", "application/json"]);
        if (!has("accept")) headers.push(["Accept", "application/json"]);
    } else if (body !== null && !has("content-type")) {
        headers.push(["Content-Type", "application/x-www-form-urlencoded"]);
    }
    if (user !== null && !has("authorization")) {
        const bytes = new TextEncoder().encode(user.includes(":") ? user : `${user}:`);
        headers.push(["Authorization", `Basic ${btoa(String.fromCharCode(...bytes))}`]);
    }
    method = method ?? (head ? "HEAD" : body !== null ? "POST" : "GET");
    return { method, url, headers, body, ignored };
}

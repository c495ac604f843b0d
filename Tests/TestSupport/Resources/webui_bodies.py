#!/usr/bin/env python3
"""Drives how DevProxy's web UI shows bodies, in headless Chromium (Playwright with the system
browser): XML and HTML bodies pretty-printed by element with the raw text one click away, broken
XML shown raw with its reason, a 3 MB XML formatted in the worker, JSON escapes shown as their
characters (controls, NUL and lone surrogates kept as escapes; the raw view byte-exact), and find
in the hex dump by text and by hex bytes. Captured markup never runs and never becomes elements.

Starts its own origin (stdlib HTTP server on 127.0.0.1, port 0) and stops it at the end; flows are
made with curl through the proxy. Prints one line per check: `PASS name detail` or `FAIL name
detail`; exits 1 on any failure.

Usage: webui_bodies.py --ui URL --proxy http://127.0.0.1:PORT
"""
import http.server, subprocess, sys, time, urllib.parse

from browser_page import Checks, origin_and_chromium, ui_context, ui_parser, watched_page

SOAP = (b'<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope">'
        b'<soap:Body><m:GetPrice xmlns:m="urn:x" note="a &gt; b"><m:Item>Apples &amp; pears</m:Item><m:Empty/>'
        b'<m:Pair></m:Pair></m:GetPrice></soap:Body></soap:Envelope>')
SOAP_PRETTY = "\n".join([
    '<?xml version="1.0" encoding="utf-8"?>',
    '<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope">',
    '  <soap:Body>',
    '    <m:GetPrice xmlns:m="urn:x" note="a &gt; b">',
    '      <m:Item>Apples &amp; pears</m:Item>',
    '      <m:Empty/>',
    '      <m:Pair></m:Pair>',
    '    </m:GetPrice>',
    '  </soap:Body>',
    '</soap:Envelope>'])
RSS = (b'<rss version="2.0"><channel><title>Feed</title><!-- a comment --><item><title>One</title>'
       b'<description><![CDATA[<b>bold</b> & raw]]></description></item></channel></rss>')
RSS_PRETTY = "\n".join([
    '<rss version="2.0">',
    '  <channel>',
    '    <title>Feed</title>',
    '    <!-- a comment -->',
    '    <item>',
    '      <title>One</title>',
    '      <description>',
    '        <![CDATA[<b>bold</b> & raw]]>',
    '      </description>',
    '    </item>',
    '  </channel>',
    '</rss>'])
HTML = (b"<!DOCTYPE html><html><head><meta charset=utf-8><title>T</title>"
        b"<script>window.__pwned='script'; if (a < b) {}</script>"
        b"<style>p > a { color: red }</style></head><body><p>one<p>two<br>"
        b"<img src=x onerror=\"window.__pwned='img'\"><ul><li>a<li>b</ul></body></html>")
HTML_PRETTY = "\n".join([
    '<!DOCTYPE html>',
    '<html>',
    '  <head>',
    '    <meta charset=utf-8>',
    '    <title>T</title>',
    '    <script>',
    "      window.__pwned='script'; if (a < b) {}",
    '    </script>',
    '    <style>',
    '      p > a { color: red }',
    '    </style>',
    '  </head>',
    '  <body>',
    '    <p>',
    '      one',
    '    <p>',
    '      two',
    '      <br>',
    '      <img src=x onerror="window.__pwned=\'img\'">',
    '    <ul>',
    '      <li>',
    '        a',
    '      <li>',
    '        b',
    '    </ul>',
    '  </body>',
    '</html>'])
BROKEN_XML = b"<order><id>7</id><item>nails</order>"
# Escapes: é, 中文, 😀 (a surrogate pair) and \/ read as characters; NUL, a control, a lone
# surrogate, an escaped quote and backslash, and \n stay escapes.
ESCAPES = (b'{"name":"caf\\u00e9","cjk":"\\u4e2d\\u6587","emoji":"\\ud83d\\ude00","slash":"a\\/b",'
           b'"nul":"\\u0000","ctl":"\\u001F","lone":"\\ud800x","quote":"\\u0022\\"","nl":"a\\nb\\\\"}')
ESCAPES_PRETTY = "\n".join([
    '{',
    '  "name": "caf\u00e9",',
    '  "cjk": "\u4e2d\u6587",',
    '  "emoji": "\U0001F600",',
    '  "slash": "a/b",',
    '  "nul": "\\u0000",',
    '  "ctl": "\\u001F",',
    '  "lone": "\\ud800x",',
    '  "quote": "\\u0022\\"",',
    '  "nl": "a\\nb\\\\"',
    '}'])
# 96 bytes: DE AD BE EF across the first row's end (offset 14) and at offset 40, MAGIC at 20.
BLOB = bytearray(range(96))
BLOB[14:18] = b"\xde\xad\xbe\xef"
BLOB[40:44] = b"\xde\xad\xbe\xef"
BLOB[20:25] = b"MAGIC"
BLOB = bytes(BLOB)
BIG_XML_ITEMS = 30000
# Nesting deep enough that indentation growing with depth would be quadratic: 120 KB of JSON made
# gigabytes of spaces and ran the worker out of memory.
DEEP = 60000
DEEP_JSON = b"[" * DEEP + b"]" * DEEP
DEEP_XML = b"<a>" * (DEEP // 2) + b"</a>" * (DEEP // 2)


def big_xml():
    """About 3 MB of XML on one line: items of a few elements each."""
    items = b"".join(b'<item id="%d"><name>item %d</name><tags><tag>a</tag><tag>b</tag></tags></item>' % (i, i)
                     for i in range(BIG_XML_ITEMS))
    return b"<catalog>" + items + b"</catalog>"


class Origin(http.server.ThreadingHTTPServer):
    daemon_threads = True
    big = None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    routes = {
        "/soap": (SOAP, "application/soap+xml; charset=utf-8"),
        "/feed": (RSS, "application/rss+xml"),
        "/page": (HTML, "text/html; charset=utf-8"),
        "/broken": (BROKEN_XML, "application/xml"),
        "/escapes": (ESCAPES, "application/json"),
        "/blob": (BLOB, "application/octet-stream"),
        "/many": (b"\xab" * 300000, "application/octet-stream"),
        "/deep-json": (DEEP_JSON, "application/json"),
        "/deep-xml": (DEEP_XML, "application/xml"),
    }

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = urllib.parse.urlsplit(self.path).path
        if path.startswith("/big.xml"):
            if Origin.big is None:
                Origin.big = big_xml()
            body, content_type = Origin.big, "text/xml"
        else:
            body, content_type = self.routes.get(path.rsplit("/", 1)[0] if path.count("/") > 1 else path,
                                                 (b"none", "text/plain"))
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def curl(proxy, url):
    return subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "60", "-x", proxy, url],
                          capture_output=True, text=True, timeout=90).stdout


VIEW_DONE = "() => { const v = document.querySelector('flow-detail line-view');" \
    " return v && v.done && v.lineCount > 0; }"


def open_flow(page, path, timeout=10000):
    """Clicks the row whose path is `path` and waits for its detail and its body's view."""
    page.wait_for_function("p => [...document.querySelectorAll('flow-list .flow-row[data-id] .c-path')]"
                           ".some(c => c.textContent === p)", arg=path, timeout=timeout)
    row_id = page.evaluate("p => [...document.querySelectorAll('flow-list .flow-row[data-id]')]"
                           ".find(r => r.querySelector('.c-path').textContent === p).getAttribute('data-id')", path)
    page.click("flow-list .flow-row[data-id='%s']" % row_id)
    page.wait_for_function("p => { const d = document.querySelector('flow-detail');"
                           " const t = d.querySelector('.detail-title');"
                           " return !d.hidden && t && t.textContent.includes(p) && !d.hasAttribute('aria-busy'); }",
                           arg=path, timeout=timeout)
    page.click("#detail-tab-response")
    page.wait_for_function(VIEW_DONE, timeout=timeout)


def shown(page):
    """(the whole text the body's line view shows, asked of the worker; the note line)."""
    return (page.evaluate("() => document.querySelector('flow-detail line-view').textOf()"),
            page.text_content("flow-detail .body-note"))


def toggle_raw(page):
    """Clicks the body's raw/pretty switch and waits for the view to load again; returns its label after."""
    before = page.evaluate("() => [document.querySelector('flow-detail line-view').kind,"
                           " document.querySelector('flow-detail button.body-raw').textContent]")
    page.click("flow-detail button.body-raw")
    page.wait_for_function("k => { const v = document.querySelector('flow-detail line-view');"
                           " const b = document.querySelector('flow-detail button.body-raw');"
                           " return v.done && v.kind !== k[0] && b && b.textContent !== k[1] && !b.disabled; }",
                           arg=before, timeout=10000)
    return page.text_content("flow-detail button.body-raw")


def pretty_then_raw(page, checks, name, path, body, pretty):
    """The body at `path` shows as `pretty`; its raw switch shows the body as sent, and switches back."""
    try:
        open_flow(page, path)
        text, note = shown(page)
        label = page.evaluate("() => document.querySelector('flow-detail button.body-raw')?.textContent ?? null")
        checks.result(name, text == pretty and label == "raw", "%r label %r note %r" % (text[:400], label, note))
    except Exception as error:
        checks.result(name, False, str(error).splitlines()[0])
    try:
        after = toggle_raw(page)
        raw, _ = shown(page)
        back = toggle_raw(page)
        again, _ = shown(page)
        checks.result(name + "-raw", raw == body.decode() and after == "pretty" and back == "raw" and again == pretty,
                      "%r %r %r" % (raw[:200], after, back))
    except Exception as error:
        checks.result(name + "-raw", False, str(error).splitlines()[0])


def hex_find(page, query):
    """Types `query` into the find box, presses Enter; (status, current marks' texts, hit rows' numbers)."""
    before = page.text_content("flow-detail .body-find-status")
    page.fill("flow-detail input.body-find", query)
    page.press("flow-detail input.body-find", "Enter")
    page.wait_for_function("b => { const t = document.querySelector('flow-detail .body-find-status').textContent;"
                           " return t !== b && /of|no match/.test(t); }", arg=before, timeout=5000)
    page.wait_for_timeout(150)
    return page.evaluate("() => [document.querySelector('flow-detail .body-find-status').textContent,"
                         " [...document.querySelectorAll('flow-detail line-view .line:not([hidden]) mark.current')]"
                         ".sort((a, b) => a.closest('.line').querySelector('.gutter').textContent"
                         " - b.closest('.line').querySelector('.gutter').textContent).map(m => m.textContent),"
                         " [...document.querySelectorAll('flow-detail line-view .line.hit:not([hidden]) .gutter')]"
                         ".map(g => Number(g.textContent)).sort((a, b) => a - b)]")


# White space inside <pre> and <textarea> is their content: the pretty view keeps it as sent (it
# trimmed each line and dropped the blank ones), tags inside a <pre> included.
PRE_HTML = (b"<div><pre class=c>  two spaces\n\tline two\r\n\n  <b>bold</b>  end </pre>"
            b"<textarea>\n  a\n\n  b</textarea><p>x</p></div>")
PRE_PRETTY = "\n".join([
    "<div>",
    "  <pre class=c>  two spaces",
    "\tline two",
    "",
    "  <b>bold</b>  end </pre>",
    "  <textarea>",
    "  a",
    "",
    "  b</textarea>",
    "  <p>x</p>",
    "</div>"])

# Bodies the formatter must format the same whether they arrive whole or a few bytes at a time.
CHUNKED = [
    ("xml", SOAP), ("xml", RSS), ("html", HTML), ("json", ESCAPES), ("xml", BROKEN_XML),
    ("xml", b"<a x='1>2' y=\"3\r\n4\">\r\n  <b>t</b>\r\n  <!-- a -- b -->\r\n  <c><![CDATA[ ]] ]]></c>\r\n</a>"),
    ("xml", b'<?xml version="1.0"?>\n<!DOCTYPE n [\n<!ENTITY x "y">\n]>\n<n>&x;</n>'),
    ("html", b"<p>a < b<script>s = '</scr' + 'ipt>';\n  f();</script><textarea><b></textarea><p>c"),
    ("json", b'["\\u00e9\\ud83d\\ude00\\ud800\\u0000\\/", {"\\u4e2d": "\\"\\\\"}]'),
    ("html", PRE_HTML),
]

# Runs in a blank page (no DevProxy page, so no CSP is loosened): the worker's formatting code,
# taken from the UI's server, formats each body whole and in chunks of 1, 2, 3, 5 and 64 bytes.
CHUNKED_JS = """([bodies]) => bodies.map(([kind, codes]) => {
    const bytes = Uint8Array.from(codes);
    return [1, 2, 3, 5, 64, bytes.length || 1].map((size) => {
        const doc = new Doc(1, kind, bytes.length, false, new AbortController());
        for (let i = 0; i < bytes.length; i += size) doc.take(bytes.slice(i, i + size));
        doc.finish();
        return [doc.kind, doc.note, doc.text(0, doc.lineCount)];
    });
})"""


def chunked(browser, context, ui, checks):
    """Formatting a body a few bytes at a time (as it streams in) gives what formatting it whole gives."""
    try:
        sources = [context.request.get(ui + name).text() for name in ("markup-format.js", "format-worker.js")]
        blank = browser.new_context()
        try:
            page = blank.new_page()
            page.add_script_tag(content="window.importScripts = () => {};")
            for source in sources:
                page.add_script_tag(content=source)
            results = page.evaluate(CHUNKED_JS, [[[kind, list(body)] for kind, body in CHUNKED]])
        finally:
            blank.close()
        uneven = [CHUNKED[i][1][:40] for i, runs in enumerate(results) if any(run != runs[-1] for run in runs)]
        wholes = [runs[-1] for runs in results]
        checks.result("formatter-chunked", not uneven and wholes[0][2] == SOAP_PRETTY and wholes[2][2] == HTML_PRETTY
                      and wholes[3][2] == ESCAPES_PRETTY and wholes[4][0] == "text"
                      and [whole[0] for whole in wholes[5:]] == ["xml", "xml", "html", "json", "html"],
                      "uneven: %r; %r" % (uneven, wholes[5:]))
        checks.result("html-pre-kept", wholes[9][2] == PRE_PRETTY, repr(wholes[9][2]))
    except Exception as error:
        checks.result("formatter-chunked", False, str(error).splitlines()[0])


def main():
    parser = ui_parser()
    options = parser.parse_args()
    checks = Checks()
    with origin_and_chromium(Origin, Handler) as (browser, base, _):
        run(browser, options, base, checks)
    sys.exit(1 if checks.failed else 0)


def run(browser, options, base, checks):
    context = ui_context(browser, options.ui, 1400, 900)
    page, problems = watched_page(context)
    stamp = int(time.time() * 1000)
    paths = {name: "%s/%d" % (name, stamp) for name in ("/soap", "/feed", "/page", "/broken", "/escapes", "/blob",
                                                        "/many", "/deep-json", "/deep-xml")}
    for path in paths.values():
        curl(options.proxy, base + path)
    big_path = "/big.xml/%d" % stamp
    curl(options.proxy, base + big_path)
    page.goto(options.ui)
    page.wait_for_selector("flow-list .list-count", timeout=10000)

    chunked(browser, context, urllib.parse.urljoin(options.ui, "/"), checks)
    pretty_then_raw(page, checks, "xml-pretty", paths["/soap"], SOAP, SOAP_PRETTY)
    # An element folds to its end tag, as a JSON object folds to its brace.
    try:
        page.click("flow-detail line-view .line:not([hidden]) .fold[data-id='2']")
        page.wait_for_timeout(200)
        rows = page.evaluate("() => [...document.querySelectorAll('flow-detail line-view .line:not([hidden])')]"
                             ".map(r => [Number(r.querySelector('.gutter').textContent), r.querySelector('.code')"
                             ".textContent]).sort((a, b) => a[0] - b[0]).map(r => r[1])")
        folded = "  <soap:Body> \u2026 5 lines \u2026 </soap:Body>"
        checks.result("xml-folds", rows == SOAP_PRETTY.split("\n")[:2] + [folded, "</soap:Envelope>"], repr(rows))
    except Exception as error:
        checks.result("xml-folds", False, str(error).splitlines()[0])
    pretty_then_raw(page, checks, "rss-pretty", paths["/feed"], RSS, RSS_PRETTY)
    pretty_then_raw(page, checks, "html-pretty", paths["/page"], HTML, HTML_PRETTY)
    # The pretty HTML is text: nothing in it ran, loaded or became an element.
    hostile = page.evaluate("() => [window.__pwned ?? null, [...document.querySelectorAll('flow-detail line-view *')]"
                            ".map(e => e.tagName).filter(t => t !== 'DIV' && t !== 'SPAN'),"
                            " document.querySelectorAll('img, flow-detail meta, flow-detail script').length,"
                            " window.__violations.length]")
    checks.result("html-pretty-runs-nothing", hostile == [None, [], 0, 0] and not problems, repr((hostile, problems)))

    # Broken XML: the text as sent, and one line saying why.
    try:
        open_flow(page, paths["/broken"])
        text, note = shown(page)
        checks.result("xml-broken-raw-with-reason", text == BROKEN_XML.decode()
                      and "not well-formed XML" in note and "</order>" in note and "<item>" in note
                      and page.query_selector("flow-detail button.body-raw") is None, "%r %r" % (text, note))
    except Exception as error:
        checks.result("xml-broken-raw-with-reason", False, str(error).splitlines()[0])

    # JSON escapes read as characters; what must stay visible stays an escape.
    pretty_then_raw(page, checks, "json-escapes-shown", paths["/escapes"], ESCAPES, ESCAPES_PRETTY)
    try:
        page.fill("flow-detail input.body-find", "caf\u00e9")
        page.press("flow-detail input.body-find", "Enter")
        page.wait_for_function("() => document.querySelector('flow-detail .body-find-status')"
                               ".textContent.includes('of')",
                               timeout=5000)
        page.wait_for_timeout(150)
        found = page.evaluate("() => [document.querySelector('flow-detail .body-find-status').textContent,"
                              " document.querySelector('flow-detail line-view .line.hit.current .gutter')"
                              "?.textContent]")
        checks.result("json-escapes-findable", found == ["line 1 of 1 line (1 match)", "2"], repr(found))
    except Exception as error:
        checks.result("json-escapes-findable", False, str(error).splitlines()[0])

    # Find in the hex dump: by hex bytes (spaced or not), by text; matches marked, walked with Enter.
    try:
        open_flow(page, paths["/blob"])
        kind = page.evaluate("() => document.querySelector('flow-detail line-view').kind")
        first = hex_find(page, "de ad be ef")
        page.press("flow-detail input.body-find", "Enter")
        page.wait_for_timeout(150)
        second = page.evaluate("() => [document.querySelector('flow-detail .body-find-status').textContent,"
                               " [...document.querySelectorAll("
                               "'flow-detail line-view .line:not([hidden]) mark.current')]"
                               ".map(m => m.textContent)]")
        checks.result("hex-find-bytes", kind == "hex" and first[0].startswith("match 1 of 2 ")
                      and first[1] == ["de ad", "..", "be ef", ".."] and first[2] == [1, 2, 3]
                      and second[0].startswith("match 2 of 2 ") and second[1] == ["de ad be ef", "...."],
                      repr((kind, first, second)))
        unspaced = hex_find(page, "DEADBEEF")
        text = hex_find(page, "magic")
        none = hex_find(page, "zz zz")
        checks.result("hex-find-text", unspaced[0].startswith("match 1 of 2 ")
                      and text[0].startswith("match 1 of 1 ") and text[1] == ["4d 41 47 49  43", "MAGIC"]
                      and text[2] == [2] and none[0] == "no match", repr((unspaced, text, none)))
    except Exception as error:
        checks.result("hex-find-bytes", False, str(error).splitlines()[0])
        checks.result("hex-find-text", False, str(error).splitlines()[0])

    # 300,000 matches: the first 100,000 are kept, and the count says so.
    try:
        open_flow(page, paths["/many"])
        many = hex_find(page, "ab")
        checks.result("hex-find-capped", many[0] == "match 1 of 100,000+ at offset 0x00000000", repr(many[0]))
    except Exception as error:
        checks.result("hex-find-capped", False, str(error).splitlines()[0])

    # Deep nesting opens, indented as at depth 64 past it.
    # The innermost pair shares a line (`[]`, `<a></a>`).
    for name, path, lines, line in (("deep-json-opens", paths["/deep-json"], DEEP * 2 - 1, "["),
                                    ("deep-xml-opens", paths["/deep-xml"], DEEP - 1, "<a>")):
        try:
            open_flow(page, path, timeout=60000)
            got = page.evaluate("() => { const v = document.querySelector('flow-detail line-view');"
                                " return Promise.all([v.lineCount, v.textOf(100, 101), v.textOf(10, 11)]); }")
            checks.result(name, got == [lines, " " * 128 + line, " " * 20 + line], repr(got)[:200])
        except Exception as error:
            checks.result(name, False, str(error).splitlines()[0])

    # A 3 MB XML on one line is formatted by the worker, with no main-thread task over 200 ms.
    try:
        since = page.evaluate("() => performance.now()")
        open_flow(page, big_path, timeout=120000)
        page.click("flow-detail button.show-all")
        page.wait_for_function("() => { const v = document.querySelector('flow-detail line-view');"
                               " return v.done && !document.querySelector('flow-detail button.show-all'); }",
                               timeout=120000)
        lines = page.evaluate("() => document.querySelector('flow-detail line-view').lineCount")
        head = page.evaluate("() => document.querySelector('flow-detail line-view').textOf(0, 8)")
        tail = page.evaluate("n => document.querySelector('flow-detail line-view').textOf(n - 2, n)", lines)
        page.wait_for_timeout(300)
        longest = page.evaluate("t => Math.max(0, ...window.__long.filter(e => e.start >= t).map(e => e.ms))", since)
        checks.result("big-xml-pretty", lines == 2 + BIG_XML_ITEMS * 7 and head.split("\n")[1:3]
                      == ['  <item id="0">', '    <name>item 0</name>'] and tail == "  </item>\n</catalog>",
                      "%d lines, head %r, tail %r" % (lines, head[:200], tail))
        checks.result("big-xml-no-long-task", longest <= 250, "longest main-thread task %d ms" % longest)
    except Exception as error:
        checks.result("big-xml-pretty", False, str(error).splitlines()[0])
    checks.result("no-page-errors", not problems and page.evaluate("() => window.__violations.length") == 0,
                  repr(problems))


if __name__ == "__main__":
    main()

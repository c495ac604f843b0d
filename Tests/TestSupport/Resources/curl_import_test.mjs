// The web UI's curl import (Sources/WebUI/Assets/curl-import.js, copied to a .mjs by the test) under
// Node: reads a JSON array of command lines on standard input and prints, for each, what
// `parseCurl` makes of it: `{"request": {method, url, headers, body, ignored}}` or `{"error": "…"}`.
// The Swift test (CurlImportTests) runs the same commands with the real curl and compares.
//
// Usage: node curl_import_test.mjs PATH/curl-import.mjs < commands.json

import { pathToFileURL } from "node:url";
import { readFileSync } from "node:fs";

const { parseCurl } = await import(pathToFileURL(process.argv[2]).href);
const commands = JSON.parse(readFileSync(0, "utf8"));
const results = commands.map((command) => {
    try {
        return { request: parseCurl(command) };
    } catch (error) {
        return { error: error.message };
    }
});
process.stdout.write(JSON.stringify(results));

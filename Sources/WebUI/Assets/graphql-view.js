// The GraphQL tab of the detail pane: what a GraphQL call asked for and what came back. Each
// operation with its type and name, its document indented (as text: captured content is never
// markup), its variables as JSON; the response's errors (message, path, extensions.code) above
// its data. The store names the operations (`summary.graphql`, the list's Path cell); the tab
// reads the bodies itself. A WebSocket of a GraphQL subprotocol shows the operations its messages
// carried, by id, with what the server sent for each (`webSocketOperations`).

import { api } from "./api.js";
import { definitionList, h, replaceChildren } from "./dom.js";
import { countOf, formatSize, headerValue, mediaType } from "./format.js";

/** Bodies larger than this are not read into the tab (the Request and Response tabs show them). */
const BODY_LIMIT = 4 * 1024 * 1024;

/** `query GetUser`, `mutation (anonymous)`, `persisted GetUser` (sent by its hash alone). */
export function operationText(operation) {
    return `${operation.type ?? "persisted"} ${operation.name ?? "(anonymous)"}`;
}

/** What the list shows beside the path: one operation, or `2 operations: GetUser, GetFeed`. */
export function operationsText(graphql) {
    const operations = Array.isArray(graphql?.operations) ? graphql.operations : [];
    if (operations.length === 1) return operationText(operations[0]);
    if (operations.length === 0) return "";
    const names = operations.map((operation) => operation.name ?? "(anonymous)");
    return `${operations.length} operations: ${names.join(", ")}`;
}

/**
 * Whether the record reads as a GraphQL request, when the list's summary is not at hand: a POST
 * of JSON or `application/graphql`, or a GET with `query=` or `extensions=` (the store's rule,
 * `GraphQLCall.detect`, decides which flows the list names; the tab then reads the bodies).
 */
export function looksLikeGraphQL(flow) {
    if (flow?.websocket) return webSocketProtocol(flow) !== null;
    const request = flow?.request;
    if (!request) return false;
    const type = mediaType(headerValue(request.headers, "content-type"));
    if (request.method === "POST") {
        if (type === "application/graphql") return true;
        const text = request.body?.text ?? "";
        return type.includes("json") && /^\s*[[{]/.test(text) && /"(query|extensions)"\s*:/.test(text);
    }
    return request.method === "GET" && /[?&](query|extensions)=/.test(request.url ?? "");
}

/** The tab's content for `flow` (its record), `summary` the list's, if it has it. */
export function graphQLView(flow, summary, signal) {
    const section = h("section", { class: "graphql", "aria-label": "GraphQL" },
        h("p", { class: "muted" }, "reading the GraphQL request…"));
    load(section, flow, summary, signal);
    return section;
}

/**
 * The GraphQL subprotocol a WebSocket's handshake settled on (the 101 response's
 * `Sec-WebSocket-Protocol`): `graphql-transport-ws` (graphql-ws) or `graphql-ws`
 * (subscriptions-transport-ws); null for any other socket.
 */
export function webSocketProtocol(flow) {
    const chosen = headerValue(flow?.response?.headers, "sec-websocket-protocol")?.trim();
    return chosen === "graphql-transport-ws" || chosen === "graphql-ws" ? chosen : null;
}

async function load(section, flow, summary, signal) {
    if (flow.websocket) {
        replaceChildren(section, webSocketOperations(flow));
        return;
    }
    try {
        const requests = await requestsOf(flow, signal);
        const answer = await responseOf(flow, signal);
        if (signal?.aborted) return;
        const parts = [];
        const names = summary?.graphql?.operations ?? [];
        if (requests.length > 1) {
            parts.push(h("p", { class: "graphql-batch" }, `a batch of ${requests.length} operations`));
        }
        requests.forEach((request, index) => {
            const answered = Array.isArray(answer.value) ? answer.value[index] : index === 0 ? answer.value : undefined;
            parts.push(operationSection(request, names[index], answered, requests.length > 1 ? index + 1 : null));
        });
        if (answer.note) parts.push(h("p", { class: "muted" }, answer.note));
        replaceChildren(section, parts);
    } catch (error) {
        if (signal?.aborted) return;
        replaceChildren(section,
            h("p", { class: "error-text" }, `could not read the GraphQL request: ${error.message}`));
    }
}

/** One operation: its facts, its document, its variables, and what the server answered to it. */
function operationSection(request, named, answered, number) {
    const operation = named ?? { type: request.query ? documentOperationType(request.query) : null,
        name: request.operationName ?? null };
    const hash = request.extensions?.persistedQuery?.sha256Hash;
    const facts = definitionList([
        ["Operation", operationText(operation)],
        ["Persisted query", typeof hash === "string" ? `sha256 ${hash}` : ""],
    ]);
    const document = request.query
        ? h("pre", { class: "graphql-document", "aria-label": "GraphQL document" }, formatGraphQL(request.query))
        : h("p", { class: "muted" }, "no document was sent (a persisted query, by its hash)");
    const variables = request.variables === undefined || request.variables === null ? null
        : [h("h4", {}, "Variables"),
            h("pre", { class: "graphql-json graphql-variables" }, JSON.stringify(request.variables, null, 2))];
    return h("section", { class: "graphql-operation", "aria-label": number ? `operation ${number}` : "operation" },
        h("h3", {}, number ? `${number}. ${operationText(operation)}` : operationText(operation)),
        facts, h("h4", {}, "Query"), document, variables, answerView(answered));
}

/** The response to one operation: its errors, each by message, path and code, above its data. */
function answerView(answered) {
    if (answered === undefined) return null;
    if (answered === null || typeof answered !== "object") {
        return [h("h4", {}, "Response"), h("pre", { class: "graphql-json" }, JSON.stringify(answered, null, 2))];
    }
    const errors = Array.isArray(answered.errors) ? answered.errors : [];
    const list = errorList(errors);
    const others = { ...answered };
    delete others.errors;
    delete others.data;
    return [h("h4", {}, errors.length ? `Errors (${errors.length})` : "Response"), list,
        // `data` as the server sent it (null when the operation failed before it ran); absent: none.
        "data" in answered ? [errors.length ? h("h4", {}, "Data") : null,
            h("pre", { class: "graphql-json graphql-data" }, JSON.stringify(answered.data, null, 2))] : null,
        // `extensions` and anything else the server added, below.
        Object.keys(others).length ? [h("h4", {}, "Other members"),
            h("pre", { class: "graphql-json" }, JSON.stringify(others, null, 2))] : null];
}

/** Errors, each by message, path and `extensions.code`; null for none. */
function errorList(errors) {
    return errors.length ? h("ol", { class: "graphql-errors", "aria-label": "GraphQL errors" },
        errors.map((error) => h("li", {},
            h("span", { class: "graphql-error-message" }, String(error?.message ?? JSON.stringify(error))),
            Array.isArray(error?.path)
                ? h("span", { class: "graphql-error-path" }, ` at ${error.path.join(".")}`) : null,
            error?.extensions?.code != null
                ? h("code", { class: "graphql-error-code" }, String(error.extensions.code)) : null))) : null;
}

/**
 * A GraphQL WebSocket's operations, read from its messages: each client `subscribe` (`start` in
 * `graphql-ws`) in order, by its id, with its document and variables; and per operation what the
 * server sent for that id: how many results (`next`, `data`), their errors and those of `error`
 * messages, and how it ended (`complete` from either side, `stop`). The Messages tab shows the
 * messages themselves.
 */
function webSocketOperations(flow) {
    const legacy = webSocketProtocol(flow) === "graphql-ws";
    const operations = [];
    const byID = new Map();
    let unreadable = 0;
    for (const message of flow.websocket) {
        if (typeof message?.text !== "string" || !message.text.trimStart().startsWith("{")) continue;
        let value;
        try {
            value = JSON.parse(message.text);
        } catch {
            unreadable += 1;
            continue;
        }
        const id = value?.id === undefined || value?.id === null ? null : String(value.id);
        const fromClient = message.direction === "client_to_server";
        if (fromClient && value?.type === (legacy ? "start" : "subscribe")) {
            const operation = { id, payload: value.payload ?? {}, results: 0, errors: [], ended: null, data: undefined };
            operations.push(operation);
            if (id !== null) byID.set(id, operation);
            continue;
        }
        const operation = id === null ? undefined : byID.get(id);
        if (!operation) continue;
        if (fromClient && (value.type === "complete" || value.type === "stop")) {
            operation.ended ??= "stopped by the client";
        } else if (!fromClient && value.type === (legacy ? "data" : "next")) {
            operation.results += 1;
            if (Array.isArray(value.payload?.errors)) operation.errors.push(...value.payload.errors);
            if (value.payload && "data" in value.payload) operation.data = value.payload.data;
        } else if (!fromClient && value.type === "error") {
            operation.errors.push(...(Array.isArray(value.payload) ? value.payload : [value.payload]));
            operation.ended ??= "ended by an error";
        } else if (!fromClient && value.type === "complete") {
            operation.ended ??= "completed by the server";
        }
    }
    const parts = [h("p", { class: "graphql-socket" },
        `GraphQL over WebSocket (${webSocketProtocol(flow)}): ${countOf(operations.length, "operation", "operations")}`)];
    operations.forEach((operation, index) => parts.push(webSocketOperationSection(operation, index + 1)));
    if (unreadable) parts.push(h("p", { class: "muted" }, `${countOf(unreadable, "message", "messages")} not read (cut short or no JSON)`));
    return parts;
}

/** One operation of a GraphQL WebSocket: its id, type and name, document, variables and results. */
function webSocketOperationSection(operation, number) {
    const payload = operation.payload;
    const query = typeof payload.query === "string" ? payload.query : undefined;
    const named = { type: query ? documentOperationType(query) : null,
        name: typeof payload.operationName === "string" && payload.operationName ? payload.operationName
            : query ? documentOperationName(query) : null };
    const facts = definitionList([
        ["Id", operation.id ?? ""],
        ["Operation", operationText(named)],
        ["Results", countOf(operation.results, "result", "results")],
        ["Errors", operation.errors.length ? countOf(operation.errors.length, "error", "errors") : "none"],
        ["Ended", operation.ended ?? "still open when the socket closed (or still running)"],
    ]);
    const document = query
        ? h("pre", { class: "graphql-document", "aria-label": "GraphQL document" }, formatGraphQL(query))
        : h("p", { class: "muted" }, "no document was sent (a persisted query, by its hash)");
    const variables = payload.variables === undefined || payload.variables === null ? null
        : [h("h4", {}, "Variables"),
            h("pre", { class: "graphql-json graphql-variables" }, JSON.stringify(payload.variables, null, 2))];
    return h("section", { class: "graphql-operation", "aria-label": `operation ${number}` },
        h("h3", {}, `${number}. ${operationText(named)}`), facts, h("h4", {}, "Query"), document, variables,
        operation.errors.length ? [h("h4", {}, `Errors (${operation.errors.length})`), errorList(operation.errors)] : null,
        operation.data !== undefined ? [h("h4", {}, "Last data"),
            h("pre", { class: "graphql-json graphql-data" }, JSON.stringify(operation.data, null, 2))] : null);
}

/** The GraphQL requests of a flow: one, or a batch's several (`{query, operationName, variables, extensions}`). */
async function requestsOf(flow, signal) {
    const request = flow.request;
    if (request.method === "GET") {
        const parameters = new URL(request.url).searchParams;
        return [{
            query: parameters.get("query") ?? undefined, operationName: parameters.get("operationName") ?? undefined,
            variables: parseJSON(parameters.get("variables")), extensions: parseJSON(parameters.get("extensions")),
        }];
    }
    const text = await bodyText(flow, "request", signal);
    if (mediaType(headerValue(request.headers, "content-type")) === "application/graphql") {
        const parameters = new URL(request.url).searchParams;
        return [{ query: text, operationName: parameters.get("operationName") ?? undefined,
            variables: parseJSON(parameters.get("variables")) }];
    }
    const value = JSON.parse(text);
    const entries = Array.isArray(value) ? value : [value];
    return entries.map((entry) => ({
        query: typeof entry?.query === "string" ? entry.query : undefined,
        operationName: typeof entry?.operationName === "string" && entry.operationName
            ? entry.operationName : undefined,
        variables: entry?.variables, extensions: entry?.extensions,
    }));
}

/** The response body as JSON (`value`), or why it is not shown (`note`). */
async function responseOf(flow, signal) {
    if (!flow.response) return { note: "no response" };
    const type = mediaType(headerValue(flow.response.headers, "content-type"));
    if (!type.includes("json")) {
        return { note: type ? `the response is ${type}, not JSON` : "the response has no content type" };
    }
    try {
        return { value: JSON.parse(await bodyText(flow, "response", signal)) };
    } catch (error) {
        if (signal?.aborted) throw error;
        return { note: `the response is not JSON: ${error.message}` };
    }
}

/** A body's decoded text, read whole (up to `BODY_LIMIT`). */
async function bodyText(flow, side, signal) {
    const logged = flow[side]?.body;
    if (!logged || logged.size === 0) return "";
    if (logged.size > BODY_LIMIT) {
        throw new Error(`the ${side} body is ${formatSize(logged.size)}: see the ${side} tab`);
    }
    const response = await api.body(flow.id, side, { signal });
    return response.text();
}

function parseJSON(text) {
    if (text === null || text === undefined || text === "") return undefined;
    try {
        return JSON.parse(text);
    } catch {
        return text;
    }
}

/** The name of a document's first operation, or null (anonymous, or no operation). */
function documentOperationName(text) {
    const list = tokens(text).filter((token) => token.kind !== "comment");
    const at = list.findIndex((token) => token.kind === "name"
        && ["query", "mutation", "subscription"].includes(token.text));
    return at >= 0 && list[at + 1]?.kind === "name" ? list[at + 1].text : null;
}

/** The type of a document's first operation (`query` for the `{ … }` shorthand), or null. */
function documentOperationType(text) {
    for (const token of tokens(text)) {
        if (token.kind === "comment") continue;
        if (token.kind === "punct" && token.text === "{") return "query";
        if (token.kind === "name" && ["query", "mutation", "subscription"].includes(token.text)) return token.text;
        if (token.kind === "name" && token.text === "fragment") continue;
        return null;
    }
    return null;
}

/**
 * A GraphQL document's tokens (GraphQL spec, "Source Text"): names, punctuators (`...` as one),
 * strings and block strings, numbers, comments; commas and white space are left out. Text that
 * is no token comes out as `{kind: "other"}`, one character at a time.
 */
export function tokens(text) {
    const list = [];
    let index = 0;
    while (index < text.length) {
        const char = text[index];
        if (/[\s,\uFEFF]/.test(char)) {
            index += 1;
        } else if (char === "#") {
            const end = text.slice(index).search(/[\r\n]/);
            const stop = end < 0 ? text.length : index + end;
            list.push({ kind: "comment", text: text.slice(index, stop) });
            index = stop;
        } else if (text.startsWith('"""', index)) {
            let end = index + 3;
            while (end < text.length && !text.startsWith('"""', end)) end += text.startsWith('\\"""', end) ? 4 : 1;
            end = Math.min(text.length, end + 3);
            list.push({ kind: "string", text: text.slice(index, end) });
            index = end;
        } else if (char === '"') {
            let end = index + 1;
            while (end < text.length && text[end] !== '"' && text[end] !== "\n") end += text[end] === "\\" ? 2 : 1;
            end = Math.min(text.length, end + 1);
            list.push({ kind: "string", text: text.slice(index, end) });
            index = end;
        } else if (text.startsWith("...", index)) {
            list.push({ kind: "punct", text: "..." });
            index += 3;
        } else if ("!$&()=:@[]{}|".includes(char)) {
            list.push({ kind: "punct", text: char });
            index += 1;
        } else if (/[_A-Za-z]/.test(char)) {
            const match = /^[_A-Za-z][_0-9A-Za-z]*/.exec(text.slice(index, index + 1024));
            list.push({ kind: "name", text: match[0] });
            index += match[0].length;
        } else if (/[-0-9]/.test(char)) {
            const match = /^-?[0-9][0-9.eE+-]*/.exec(text.slice(index, index + 1024)) ?? [char];
            list.push({ kind: "value", text: match[0] });
            index += match[0].length;
        } else {
            list.push({ kind: "other", text: char });
            index += 1;
        }
    }
    return list;
}

/**
 * `text` (a GraphQL document) indented as GraphQL tools print it: each field of a selection set
 * on its line, two spaces a level; arguments, variables and values on the line of their field,
 * commas between them. Only white space and commas change; a text that holds anything that is
 * no GraphQL token comes back as it was.
 */
export function formatGraphQL(text) {
    const list = tokens(text);
    if (list.some((token) => token.kind === "other")) return text;
    const lines = [];
    let line = "";
    let depth = 0;
    // Brackets opened inside arguments or values (`(`, `[`, an input object's `{`): no new lines there.
    const inline = [];
    let previous = null;
    let beforePrevious = null;
    const newLine = () => {
        if (line.trim()) lines.push(line);
        line = "  ".repeat(depth);
    };
    for (const token of list) {
        const t = token.text;
        const isName = token.kind === "name";
        if (token.kind === "comment") {
            newLine();
            line += t;
            newLine();
            previous = null;
            continue;
        }
        if (inline.length) {
            // Between two values of a list, or two arguments or fields of an input object: a comma.
            const ends = previous && (["name", "value", "string"].includes(previous.kind)
                || ["]", "}", "!", ")"].includes(previous.text));
            const starts = isName || token.kind === "value" || token.kind === "string" || ["$", "[", "{"].includes(t);
            if (ends && starts && !["$", "@", ":", "="].includes(previous.text)) line += ", ";
            else if (t === "=" || (previous && [":", "="].includes(previous.text)) || t === "@") line += " ";
            line += t;
            if ("([{".includes(t)) inline.push(t);
            if (")]}".includes(t)) inline.pop();
        } else if (t === "{") {
            line += line.trim() ? " {" : "{";
            depth += 1;
            newLine();
        } else if (t === "}") {
            depth = Math.max(0, depth - 1);
            newLine();
            line += "}";
            if (depth === 0) {
                lines.push(line);
                lines.push("");
                line = "";
            } else {
                newLine();
            }
        } else if (t === "(" || t === "[") {
            line += t;
            inline.push(t);
        } else {
            // A new field starts a line: a name after a field (or after `}`), not after `on`, `:`,
            // `$`, `@`, `...` or a keyword that names what follows.
            const afterField = previous && depth > 0 && (previous.kind === "name" || previous.text === ")")
                && !(previous.text === "on" && beforePrevious?.text === "...") && (isName || t === "...");
            if (afterField) newLine();
            const afterPrefix = ["$", "@", "...", "("].includes(previous?.text)
                && !(previous?.text === "..." && t === "on");
            const glued = !line.trim() || afterPrefix || t === ":" || t === "!" || t === ")" || t === "]";
            if (!glued && !line.endsWith(" ")) line += " ";
            line += t;
        }
        beforePrevious = previous;
        previous = token;
    }
    if (line.trim()) lines.push(line);
    while (lines.length && lines[lines.length - 1] === "") lines.pop();
    return lines.join("\n");
}

/** `1 error`, `3 errors`: the status cell's tooltip. */
export function errorsText(count) {
    return countOf(count, "error", "errors");
}

// <flow-detail>: the selected flow — headers, bodies by type, messages, timings, both TLS
// sides and the chain the client was shown, the error explained — and the actions on it.

import { api } from "./api.js";
import { copyButton, copyLoaded, copyText } from "./clipboard.js";
import { copyAsMenu } from "./copy-as.js";
import { apiLink, append, definitionList, h, replaceChildren, setSafeAttribute } from "./dom.js";
import { bodyView, eventStreamEvents, eventsTable, protobufLines } from "./body-view.js";
import { INFORMATIONAL_NAMES, grpcStatusName, isPending } from "./flow-summary.js";
import { countOf, formatDuration, formatSize, headerValue, headerValues, mediaType } from "./format.js";
import { morphChildren } from "./morph.js";
import { interceptEditor, interceptFacts } from "./intercept.js";
import { notePanel, rememberNote } from "./marks.js";
import { responseEditor } from "./intercept-response.js";
import { openResend } from "./resend-dialog.js";
import { openRepeat } from "./repeat-dialog.js";
import { openMock, openMockOfRunning } from "./mock-from-flow.js";
import { graphQLView, looksLikeGraphQL } from "./graphql-view.js";
import { compareButton } from "./compare.js";
import { store } from "./store.js";

/** Characters of body text the record brings (`?preview=`); the body view loads bodies whole. */
const BODY_PREVIEW = 4096;
/** The same for a running event stream, whose events so far are listed: all the record so far
 * holds of the body (the server caps a preview at 1 MiB, as the record caps a running body). */
const LIVE_EVENTS_PREVIEW = 1024 * 1024;

const TABS = [
    { key: "request", title: "Request" },
    { key: "response", title: "Response" },
    { key: "messages", title: "Messages" },
    { key: "graphql", title: "GraphQL" },
    { key: "connection", title: "Connection" },
];

class FlowDetail extends HTMLElement {
    #controller = null;
    #flow = null;
    #tab = "response";
    #refetch = 0;
    /** The flow whose tab is picked: when its record (or its record so far) first showed, or by a
     * click. A flow opened while it waited for its response (no tabs yet) gets its own tab when it
     * ends, not the one the flow shown before it had. */
    #tabPickedFor = null;
    /** The running flow whose record so far is an event stream (its refetches bring more body text). */
    #eventStreamFor = null;
    /** The running flow whose view is on show: its next view is merged into it (`#put`). */
    #runningShown = null;
    /** Why a running flow's request cannot be sent or copied yet (still uploading); null once it can. */
    #requestWaits = null;

    /** What the tabs show: `{flow, signal, pending}` (a tab's click reads it, as it is now). */
    #shown = null;
    /** The held flow whose editor is on show: it is not refetched while it stays held (the edits in
     * progress would go), and opened again once the board lets it go, or holds its response. */
    #heldShown = null;
    /** What of `#heldShown` the editor shows: `"request"` or `"response"`. */
    #heldPhaseShown = null;

    connectedCallback() {
        if (this.hasAttribute("role")) return;
        setSafeAttribute(this, "role", "region");
        setSafeAttribute(this, "aria-label", "Flow detail");
        setSafeAttribute(this, "tabindex", -1);
        store.addEventListener("select", (event) => this.#open(event.detail));
        document.querySelector("flow-list")
            ?.addEventListener("selected-changed", (event) => this.#selectedChanged(event.detail));
        store.addEventListener("intercept", () => {
            const id = store.selectedID;
            if (!id) return;
            // Held or let go, or its request resumed and its response held (one id, another editor).
            const phase = store.heldPhase(id);
            if (phase !== (this.#heldShown === id ? this.#heldPhaseShown : null)) this.#open(id, true);
        });
    }

    /** The flow on show (its record), or null. */
    get flow() {
        return this.#flow;
    }

    async #open(id, keepTab = false) {
        this.#controller?.abort();
        this.#flow = null;
        if (!id) {
            this.hidden = true;
            this.#runningShown = null;
            replaceChildren(this);
            return;
        }
        const controller = new AbortController();
        this.#controller = controller;
        this.#heldShown = null;
        this.hidden = false;
        if (!keepTab) setSafeAttribute(this, "aria-busy", "true");
        try {
            if (store.isHeld(id) && await this.#openHeld(id, controller.signal)) return;
            const flow = await api.flow(id, controller.signal,
                this.#eventStreamFor === id ? LIVE_EVENTS_PREVIEW : BODY_PREVIEW);
            if (controller.signal.aborted) return;
            rememberNote(id, flow);
            if (flow.pending) {
                // Whether its request was received whole (the server says: `request_complete`).
                this.#requestWaits = flow.request_complete === false ? flow.request_waits ?? "the request is still coming"
                    : flow.request_complete ? null : "the request is not known yet";
                if (flow.record) {
                    // A long stream (gRPC, a WebSocket, an event stream, a download): its record so far.
                    // The tab is picked when the record so far first shows (the pane may have shown
                    // only the headers before), and kept on later refreshes.
                    if (!keepTab || this.#tabPickedFor !== id) {
                        this.#tab = flow.record.grpc || flow.record.websocket ? "messages"
                            : flow.record.response ? "response" : "request";
                    }
                    this.#tabPickedFor = id;
                    const type = mediaType(headerValue(flow.record.response?.headers, "content-type"));
                    this.#eventStreamFor = type === "text/event-stream" ? id : null;
                    this.#render(flow.record, controller.signal, true, id);
                } else {
                    this.#renderPending(flow.summary ?? { id }, flow);
                }
                this.#scheduleRefetch();
                return;
            }
            this.#flow = flow;
            // A WebSocket or a gRPC call reads best as its messages, as it does while it runs; a
            // GraphQL call as its operation.
            if (!keepTab || this.#tabPickedFor !== id) {
                this.#tab = flow.websocket || flow.grpc ? "messages" : isGraphQL(flow) ? "graphql"
                    : flow.response || flow.error ? "response" : "request";
            }
            this.#tabPickedFor = id;
            if (!flow.response && this.#tab === "response" && !flow.error) this.#tab = "request";
            this.#render(flow, controller.signal);
        } catch (error) {
            if (controller.signal.aborted) return;
            this.#runningShown = null;
            replaceChildren(this, this.#closeButton(), h("p", { class: "error-text", role: "alert" },
                `could not load flow ${id}: ${error.message}`));
        } finally {
            if (this.#controller === controller) this.removeAttribute("aria-busy");
        }
    }

    /**
     * A request held at a breakpoint: its editor on top (method, URL, header fields, body; Resume,
     * Abort), as the board has it now; a held response: its own (status, header fields, body).
     * False when it is no longer held (the pane shows the flow).
     */
    async #openHeld(id, signal) {
        let held;
        try {
            held = await api.heldRequest(id, signal);
        } catch (error) {
            if (signal.aborted || error.status === 404) return signal.aborted;
            throw error;
        }
        if (signal.aborted) return true;
        const response = held.phase === "response";
        this.#heldShown = id;
        this.#heldPhaseShown = response ? "response" : "request";
        this.#put(id, false, h("div", { class: "detail-head" }, this.#closeButton(),
            h("h2", { class: "detail-title" }, h("span", { class: "method" }, held.method), " ",
                h("span", { class: "url" }, held.url)),
            h("p", { class: "detail-status held-note", role: "status" }, response
                ? `‖ response held at a breakpoint: the origin answered ${held.status}, the client has not got it `
                    + "yet. Resume (a) sends it on, Abort (x) answers 502"
                : "‖ held at a breakpoint: nothing was sent yet. Resume (a) sends it on, Abort (x) answers 502")),
            h("div", { class: "detail-panel held-panel" }, response ? responseEditor(held) : interceptEditor(held)));
        return true;
    }

    /**
     * The live stream brought the selected flow's `summary`. Finished, its record is in the store
     * already (the stream tells of committed batches): the pane takes it now, a fetch still on its
     * way (which may bring the flow as it ran) given up, where it waited for its next half-second
     * refresh, 0.1 to 0.5 s more, its finished actions (HAR, Raw, Compare) disabled meanwhile.
     * Likewise while a running HTTP request on show is not known whole (an upload, an HTTP/2
     * request before its record so far): what changed may be that it now is, and Replay and the
     * copies wait on it. Other changes of a running flow keep to the half-second refreshes.
     */
    #selectedChanged(summary) {
        const id = summary?.id;
        const requestWaits = this.#requestWaits !== null && this.#runningShown === id
            && (summary.mode === "http" || summary.mode === "https");
        if (id !== store.selectedID || !this.#needsRefetch || (isPending(summary) && !requestWaits)) {
            this.#scheduleRefetch();
            return;
        }
        clearTimeout(this.#refetch);
        this.#refetch = 0;
        this.#open(id, true);
    }

    /** A pending flow on show changed: fetch it again (at most every half second). A finished
     * flow's record does not change: a later batch naming it (a deferred one, replayed after a page
     * load) must not reload the pane, which would drop a "show all" on its way. */
    #scheduleRefetch() {
        if (this.#refetch || !this.#needsRefetch) return;
        this.#refetch = setTimeout(() => {
            this.#refetch = 0;
            // Asked while the record was on its way: it may have come finished meanwhile.
            if (this.#needsRefetch) this.#open(store.selectedID, true);
        }, 500);
    }

    /** A flow is selected and the pane does not show its finished record. */
    get #needsRefetch() {
        return Boolean(store.selectedID) && this.#flow?.id !== store.selectedID && this.#heldShown !== store.selectedID;
    }

    /** A flow still in progress: the API has its summary and the header fields known so far
     * (the request's; the response's once its head came) until it ends. */
    #renderPending(summary, partial) {
        const note = summary.status
            ? "response in progress: its body, timings and TLS details appear when the exchange ends"
            : "waiting for the response: the request body, timings and TLS details appear when the exchange ends";
        const sections = [];
        if (partial?.request?.headers) {
            sections.push(h("section", { class: "message pending-request", "aria-label": "Request so far" },
                h("p", { class: "first-line" }, `${summary.method ?? ""} ${summary.url ?? ""}`),
                headersTable("Request headers", partial.request.headers)));
        }
        if (partial?.response?.headers) {
            sections.push(h("section", { class: "message pending-response", "aria-label": "Response so far" },
                h("p", { class: "first-line" }, `${summary.http_version ?? ""} ${summary.status ?? ""}`),
                headersTable("Response headers", partial.response.headers)));
        }
        this.#put(summary.id, true, h("div", { class: "detail-head" }, this.#closeButton(),
            h("h2", { class: "detail-title" }, h("span", { class: "method" }, summary.method ?? ""), " ",
                h("span", { class: "url" }, summary.url ?? summary.host ?? "")),
            h("p", { class: "detail-status" }, summary.status ? `${summary.status} · ` : "", "in progress: ", note),
            notePanel(summary.id), runningActions(summary.id, summary.mode,
                summary.url ? { method: summary.method, url: summary.url, headers: partial?.request?.headers ?? [] } : null,
                this.#requestWaits)),
            h("div", { class: "detail-panel pending-panel" }, sections));
    }

    /**
     * Shows `nodes` in the pane. While flow `id` runs, its refreshes (every half second) and its
     * finished view are merged into what shows (`morphChildren`): only what changed (status,
     * sizes, timings, the body and messages so far) is touched, so a text selection, the focus,
     * the panel's scroll position and the caret in the messages filter stay where the reader put
     * them. `running`: the view is of the flow still running.
     */
    #put(id, running, ...nodes) {
        if (id && this.#runningShown === id) {
            morphChildren(this, append(document.createDocumentFragment(), nodes));
        } else {
            replaceChildren(this, ...nodes);
        }
        this.#runningShown = running ? id : null;
    }

    #closeButton() {
        return h("button", {
            type: "button", class: "close", "aria-label": "Close detail (Esc)", on: { click: () => store.select(null) },
        }, "×");
    }

    /** `pending`: the record so far of a flow still running (bodies come when it ends); `id`: the flow's. */
    #render(flow, signal, pending = false, id = flow.id) {
        const request = flow.request;
        const title = h("h2", { class: "detail-title" },
            h("span", { class: "method" }, request?.method ?? (flow.mode === "tunnel" ? "CONNECT" : "")), " ",
            h("span", { class: "url" }, request?.url ?? `${flow.server?.host ?? ""}:${flow.server?.port ?? ""}`));
        // A flow that failed before its response (a client that refused the certificate) has no
        // status: its facts begin with the persona, not with " · ".
        const facts = [flow.response ? `${flow.response.status} ${flow.response.reason ?? ""}`.trim() : "",
            flow.persona ? `persona ${flow.persona}` : "", signedBy(flow.signer),
            flow.replay_of ? `replay of ${flow.replay_of}` : ""].filter(Boolean);
        const head = h("div", { class: "detail-head" }, this.#closeButton(), title,
            h("p", { class: "detail-status" }, facts.join(" · ")), notePanel(id),
            pending ? h("p", { class: "detail-status pending-note", role: "status" },
                "in progress: what came so far; the rest appears when it ends") : this.#actions(flow),
            pending ? runningActions(id, flow.mode, flow.request, this.#requestWaits) : null);
        const tabs = TABS.filter((tab) => (tab.key !== "messages" || flow.websocket || flow.grpc)
            && (tab.key !== "graphql" || isGraphQL(flow)));
        if (!tabs.some((tab) => tab.key === this.#tab)) this.#tab = tabs[0].key;
        const panel = h("div", { class: "detail-panel", role: "tabpanel", id: "detail-panel", tabindex: 0 });
        // The tabs' listeners read what is on show when clicked: a running flow's view is merged
        // into the one on show (`#put`), which keeps its first tabs and their listeners.
        const tabList = h("div", { class: "detail-tabs", role: "tablist", "aria-label": "Flow parts" },
            tabs.map((tab) => h("button", {
                type: "button", role: "tab", id: `detail-tab-${tab.key}`, "aria-controls": "detail-panel",
                "aria-selected": String(tab.key === this.#tab), "data-tab": tab.key,
                on: { click: () => this.#switch(tab.key) },
            }, tab.title)));
        this.#shown = { flow, signal, pending };
        this.#fillPanel(panel, flow, signal, pending);
        this.#put(id, pending, head, flow.error ? errorBanner(flow.error) : null, tabList, panel);
    }

    #switch(key) {
        const tabList = this.querySelector(".detail-tabs");
        const panel = this.querySelector(".detail-panel");
        if (!this.#shown || !tabList || !panel) return;
        this.#tab = key;
        this.#tabPickedFor = store.selectedID;
        for (const tab of tabList.children) {
            setSafeAttribute(tab, "aria-selected", String(tab.getAttribute("data-tab") === key));
        }
        const { flow, signal, pending } = this.#shown;
        this.#fillPanel(panel, flow, signal, pending);
    }

    #fillPanel(panel, flow, signal, pending) {
        setSafeAttribute(panel, "aria-labelledby", `detail-tab-${this.#tab}`);
        switch (this.#tab) {
        case "request":
            replaceChildren(panel, messageView(flow.id, "request", flow.request, signal, pending));
            break;
        case "response":
            // 103 Early Hints and the like came first: listed above the final response, in order.
            replaceChildren(panel, informationalView(flow), flow.response
                ? messageView(flow.id, "response", flow.response, signal, pending)
                : h("p", { class: "muted" }, flow.error ? "no response" : "waiting for the response…"));
            break;
        case "graphql":
            replaceChildren(panel, graphQLView(flow, listSummary(flow.id), signal));
            break;
        case "messages":
            replaceChildren(panel, flow.websocket ? webSocketView(flow.websocket, flow.started, flow.id, flow.websocket_end) : null,
                flow.grpc ? grpcView(flow.grpc, flow.started, flow.id) : null);
            break;
        default:
            replaceChildren(panel, connectionView(flow));
        }
    }

    #actions(flow) {
        // The server replays HTTP requests only: a WebSocket's or a tunnel's flow is not one.
        const httpFlow = flow.mode === "http" || flow.mode === "https";
        const replayable = Boolean(flow.request) && store.canReplay && httpFlow;
        const mockable = Boolean(flow.request?.url) && httpFlow && store.info?.mode === "proxy";
        return h("div", { class: "detail-actions", role: "toolbar", "aria-label": "Flow actions" },
            h("button", {
                type: "button", id: "replay", disabled: !replayable,
                title: httpFlow ? "Replay (r)" : `a ${flow.mode} flow cannot be replayed`,
                on: { click: () => replayFlow(flow.id) },
            }, "Replay"),
            // Sent N times, C at once (Charles's and Proxyman's "Repeat Advanced"): repeat-dialog.js.
            h("button", {
                type: "button", id: "repeat", disabled: !replayable,
                title: httpFlow ? "Send it many times, some at once, and see what came back"
                    : `a ${flow.mode} flow cannot be repeated`,
                on: { click: () => openRepeat(flow) },
            }, "Repeat…"),
            h("button", {
                type: "button", id: "resend", disabled: !replayable,
                title: httpFlow ? "Edit the request and send it" : `a ${flow.mode} flow cannot be resent`,
                on: { click: () => openResend(flow) },
            }, "Edit and resend"),
            // Map Local from this flow (Proxyman's right click → Map Local): mock-from-flow.js.
            h("button", {
                type: "button", id: "mock-from-flow", disabled: !mockable,
                title: !httpFlow ? `a ${flow.mode} flow cannot be mocked`
                    : store.info?.mode === "proxy" ? "Answer this URL with this response, edited, from now on (M)"
                        : "no proxy runs behind this web UI: no rule can be added",
                on: { click: () => openMock(flow) },
            }, "Mock…"),
            // "Compare…" makes it the base; on another flow, "Compare with GET /path" (compare.js).
            compareButton(flow),
            // A flow without a request (a tunnel, a handshake the client refused) has no curl command.
            h("button", {
                type: "button", id: "copy-curl", disabled: !flow.request,
                title: flow.request ? "Copy the request as a curl command" : "no request was read",
                on: { click: () => copyCurl(flow.id) },
            }, "Copy as curl"),
            // The request as code in other languages: fetch, Python, HTTPie, PowerShell, wget.
            copyAsMenu(flow),
            flow.request?.url ? h("button", {
                type: "button", id: "copy-url", title: "Copy the request's URL",
                on: { click: () => copyText(flow.request.url, "the URL", "Copy URL") },
            }, "Copy URL") : null,
            apiLink(`/api/flows/${encodeURIComponent(flow.id)}/export?format=har`, "HAR",
                { class: "button", download: `flow-${flow.id}.har` }),
            apiLink(`/api/flows/${encodeURIComponent(flow.id)}/export?format=raw`, "Raw",
                { class: "button", download: `flow-${flow.id}.txt` }));
    }

    /**
     * Shows the tab `step` places after the one on show (ArrowRight / ArrowLeft, as in mitmweb;
     * the first after the last), moving the focus along when it was on a tab (ARIA's tabs pattern).
     */
    stepTab(step) {
        const tabs = [...this.querySelectorAll(".detail-tabs [role='tab']")];
        if (!tabs.length) return;
        const current = tabs.findIndex((tab) => tab.getAttribute("data-tab") === this.#tab);
        const next = tabs[(current + step + tabs.length) % tabs.length];
        const focused = tabs.includes(document.activeElement);
        this.#switch(next.getAttribute("data-tab"));
        if (focused) next.focus();
    }

    /** Moves focus into the pane (Enter from the list). */
    focusPane() {
        (this.querySelector(".detail-panel") ?? this).focus();
    }
}

/** Replays flow `id`; the new flow arrives through the live stream. */
export async function replayFlow(id) {
    if (!store.canReplay) return;
    try {
        const answer = await api.replay(id);
        store.notify(`replayed as flow ${answer.id}`);
        store.announceFlow(answer.id);
    } catch (error) {
        store.notify(`replay failed: ${error.message}`, "error");
    }
}

function copyCurl(id) {
    return copyLoaded(() => api.exportText(id, "curl"), "the curl command", "Copy as curl");
}

function errorBanner(error) {
    const lines = [h("strong", {}, error.kind ?? "error"), ": ", error.message ?? ""];
    const explanation = error.explanation ?? (Object.hasOwn(store.errorKinds ?? {}, error.kind)
        ? store.errorKinds[error.kind] : null);
    const extra = [error.alert && `TLS alert ${error.alert}`, error.code && `code ${error.code}`,
        error.by && `sent by ${error.by}`, error.after_bytes != null && `after ${formatSize(error.after_bytes)}`];
    return h("div", { class: "error-banner", role: "alert" }, h("p", {}, lines),
        explanation ? h("p", { class: "explanation" }, explanation) : null,
        extra.some(Boolean) ? h("p", { class: "muted" }, extra.filter(Boolean).join(" · ")) : null);
}

function headersTable(title, headers) {
    if (!headers || !headers.length) return null;
    return h("table", { class: "headers" },
        h("caption", {}, title),
        h("tbody", {}, headers.map(([name, value]) => h("tr", {}, h("th", { scope: "row" }, name),
            h("td", {}, value, copyButton(`Copy the value of ${name}`, copyRowValue))))));
}

/**
 * Copies the value of the header row whose button was clicked, read from the row then: a running
 * flow's view is merged into the one on show, which keeps the button and its listener.
 */
function copyRowValue(event) {
    const row = event.currentTarget.closest("tr");
    copyText(row.cells[1].textContent, `the value of ${row.cells[0].textContent}`);
}

/** The URL's query decoded into its parameters (as a server reads them: `+` is a space), or null. */
function queryTable(url) {
    let parameters;
    try {
        const query = new URL(url).search;
        if (query.length <= 1) return null;
        parameters = [...new URLSearchParams(query)];
    } catch {
        return null;
    }
    if (!parameters.length) return null;
    const count = parameters.length;
    return headersTable(`Query (${countOf(count, "parameter", "parameters")})`, parameters);
}

/**
 * The request's cookies, each `name=value` of every `Cookie` field (HTTP/2 sends them one per
 * field); name and value without the blanks a sloppy client puts around `=`, as a server that
 * reads cookies the way RFC 6265 §5.2 reads them sees them.
 */
function cookieTable(headers) {
    const pairs = headerValues(headers, "cookie").flatMap((value) => value.split(";"))
        .map((pair) => pair.trim()).filter(Boolean)
        .map((pair) => {
            const equals = pair.indexOf("=");
            return equals < 0 ? ["", pair] : [pair.slice(0, equals).trim(), pair.slice(equals + 1).trim()];
        });
    if (!pairs.length) return null;
    return headersTable(`Cookies (${pairs.length})`, pairs);
}

/**
 * The response's `Set-Cookie` fields read as browsers read them (RFC 6265 §5.2): name, value and
 * attributes side by side, so a cookie that a browser will refuse or scope narrowly (no `Secure`
 * with `SameSite=None`, a `Domain` or `Path` that does not cover the page) is seen at a glance.
 */
function setCookieTable(headers) {
    const cookies = headerValues(headers, "set-cookie").map((field) => {
        const [pair, ...rest] = field.split(";");
        const equals = pair.indexOf("=");
        const cookie = { name: equals < 0 ? "" : pair.slice(0, equals).trim(),
            value: equals < 0 ? pair.trim() : pair.slice(equals + 1).trim(), flags: [] };
        for (const attribute of rest) {
            const at = attribute.indexOf("=");
            const key = (at < 0 ? attribute : attribute.slice(0, at)).trim().toLowerCase();
            const value = at < 0 ? "" : attribute.slice(at + 1).trim();
            if (key === "domain" || key === "path" || key === "expires" || key === "max-age") cookie[key] = value;
            else if (key === "samesite") cookie.flags.push(`SameSite=${value}`);
            else if (key) cookie.flags.push(attribute.trim());
        }
        return cookie;
    });
    if (!cookies.length) return null;
    const columns = ["Name", "Value", "Domain", "Path", "Expires / Max-Age", "Flags"];
    return h("table", { class: "messages set-cookies" },
        h("caption", {}, `Set-Cookie (${cookies.length})`),
        h("thead", {}, h("tr", {}, columns.map((title) => h("th", { scope: "col" }, title)))),
        h("tbody", {}, cookies.map((cookie) => h("tr", {},
            h("td", { class: "data" }, cookie.name), h("td", { class: "data" }, cookie.value),
            h("td", {}, cookie.domain ?? ""), h("td", {}, cookie.path ?? ""),
            h("td", {}, [cookie["max-age"] !== undefined ? `Max-Age ${cookie["max-age"]}` : "", cookie.expires ?? ""]
                .filter(Boolean).join("; ") || "session"),
            h("td", {}, cookie.flags.join("; "))))));
}

/**
 * The actions a flow still running has. Those that need only its request (Replay, Repeat…, Edit
 * and resend, Copy as curl, Copy as ▾, Copy URL), as mitmproxy, Proxyman and Charles replay or
 * copy a pending request, once the request was received whole: while its body still uploads they
 * are disabled, `waits` (the server's `request_waits`) saying why. The server sends and copies
 * the running request as it does a finished one's (`RunningRequest.swift`). Mock… (Proxyman's
 * and Charles's Map Local on a pending request) takes what came of the response. Each button reads
 * the flow again when clicked, or acts by its id, so the button a refresh keeps (`#put` merges the
 * views) never acts on an older view. Its own class: the finished view's toolbar replaces it
 * rather than being merged into it. Compare and the HAR and Raw exports need the response: they
 * come when the flow ends.
 */
function runningActions(id, mode, request, waits) {
    const httpFlow = mode === "http" || mode === "https";
    const url = request?.url;
    const mockable = Boolean(url) && httpFlow && store.info?.mode === "proxy";
    const copyable = Boolean(request) && httpFlow && !waits;
    const replayable = copyable && store.canReplay;
    const notHTTP = `a ${mode ?? "non-HTTP"} flow`;
    const why = (action, title) => (!httpFlow ? `${notHTTP} cannot be ${action}` : waits ?? title);
    return h("div", { class: "detail-actions running-actions", role: "toolbar", "aria-label": "Running flow actions" },
        h("button", {
            type: "button", id: "replay", disabled: !replayable,
            title: why("replayed", "Send this request again now, as it was received (r)"),
            on: { click: () => replayFlow(id) },
        }, "Replay"),
        h("button", {
            type: "button", id: "repeat", disabled: !replayable,
            title: why("repeated", "Send it many times, some at once, and see what came back"),
            on: { click: () => runningDialog(id, openRepeat) },
        }, "Repeat…"),
        h("button", {
            type: "button", id: "resend", disabled: !replayable, title: why("resent", "Edit the request and send it"),
            on: { click: () => runningDialog(id, openResend) },
        }, "Edit and resend"),
        h("button", {
            type: "button", id: "mock-from-flow", disabled: !mockable,
            title: !httpFlow ? `${notHTTP} cannot be mocked`
                : store.info?.mode === "proxy"
                    ? "Answer this URL from now on with what came so far of its response, edited (M)"
                    : "no proxy runs behind this web UI: no rule can be added",
            on: { click: () => openMockOfRunning(id) },
        }, "Mock…"),
        h("button", {
            type: "button", id: "copy-curl", disabled: !copyable,
            title: why("copied", "Copy the request as a curl command"),
            on: { click: () => copyCurl(id) },
        }, "Copy as curl"),
        copyAsMenu({ id, request }, httpFlow ? waits : `${notHTTP} cannot be copied as code`),
        url ? h("button", {
            type: "button", id: "copy-url", title: "Copy the request's URL",
            on: { click: () => copyText(url, "the URL", "Copy URL") },
        }, "Copy URL") : null);
}

/**
 * Opens `open` (Edit and resend, Repeat…) on running flow `id` as it is now: its record so far
 * (its request with its body once received whole), else its request head; a flow that ended
 * meanwhile opens as finished.
 */
async function runningDialog(id, open) {
    try {
        const answer = await api.flow(id);
        if (!answer.pending) return open(answer);
        if (answer.request_complete === false) {
            store.notify(answer.request_waits ?? "the request is still coming", "error");
            return;
        }
        const summary = answer.summary ?? {};
        const flow = answer.record ? { ...answer.record, id }
            : { id, mode: summary.mode, request: { method: summary.method, url: summary.url,
                headers: answer.request?.headers ?? [] } };
        return open({ ...flow, running: true });
    } catch (error) {
        store.notify(`could not read flow ${id}: ${error.message}`, "error");
    }
}

/** `pending`: the message of a flow still running, whose body is stored when it ends. */
function messageView(id, side, message, signal, pending = false) {
    if (!message) return h("p", { class: "muted" }, "no request was read");
    const firstLine = side === "request"
        ? `${message.method} ${message.url} ${message.http_version ?? ""}`
        : `${message.http_version ?? ""} ${message.status} ${message.reason ?? ""}`;
    return h("div", { class: "message" },
        h("p", { class: "first-line" }, firstLine),
        side === "request" ? queryTable(message.url) : null,
        headersTable("Pseudo-headers", message.pseudo_headers),
        headersTable("Headers", message.headers),
        side === "request" ? clientHostNote(message.client_host) : null,
        side === "request" ? cookieTable(message.headers) : setCookieTable(message.headers),
        side === "request" ? bodyCutNote(message.body_cut) : null,
        pending ? pendingBody(message) : bodyView(id, side, message, signal),
        headersTable("Trailers", message.trailers));
}

/**
 * The informational (1xx) responses the origin sent before its final one (103 Early Hints, 102
 * Processing; RFC 9110 §15.2), in order: each one's status line, its headers (an Early Hints'
 * `Link: </style.css>; rel=preload`) and when it came, from the flow's start; and how many more
 * came than the flow keeps. Null when there were none.
 */
function informationalView(flow) {
    const responses = flow.informational ?? [];
    const notKept = flow.informational_not_kept > 0 ? flow.informational_not_kept : 0;
    if (!responses.length && !notKept) return null;
    const start = Date.parse(flow.started);
    const total = responses.length + notKept;
    const items = responses.map((response, index) => {
        const at = Date.parse(response.time);
        const after = Number.isNaN(at) || Number.isNaN(start) ? "" : `+${formatDuration(Math.max(0, at - start))}`;
        const reason = response.reason ?? INFORMATIONAL_NAMES[response.status] ?? "";
        return h("li", { class: "informational-response", "aria-label": `Informational response ${index + 1}` },
            h("p", { class: "first-line" }, h("span", { class: "informational-status" }, `${response.status} ${reason}`.trim()),
                after ? h("span", { class: "informational-time muted", title: response.time ?? "" },
                    ` · ${after} after the request began`) : null),
            headersTable("Headers", response.headers) ?? h("p", { class: "muted" }, "no header fields"));
    });
    return h("section", { class: "informational", "aria-label": "Informational responses" },
        h("h3", {}, `Before the response: ${countOf(total, "informational response", "informational responses")}`),
        h("ol", { class: "informational-list" }, items),
        notKept ? h("p", { class: "muted informational-not-kept" }, `${notKept} more not kept `
            + `(a flow keeps the first ${responses.length}; all ${total} went to the client)`) : null);
}

/**
 * The `Host` the client sent, when DevProxy sent another: an absolute-form request's Host is
 * replaced by the URL's authority (RFC 9112 §3.2.2), and the headers above show what went.
 */
function clientHostNote(clientHost) {
    if (!clientHost) return null;
    return h("p", { class: "client-host", role: "note" },
        `The client sent Host: ${clientHost}`,
        h("span", { class: "muted" }, " · replaced by the URL's authority, as RFC 9112 §3.2.2 has a proxy do;"
            + " the Host above is the one the origin got"));
}

/**
 * A request body the origin did not get whole: it answered before the upload was in (a 413, a
 * 401 to a large POST), and the rest was not sent (RFC 9112 §9.6). The body below is what the
 * client sent.
 */
function bodyCutNote(cut) {
    if (!cut) return null;
    const bytes = `${Number(cut.sent).toLocaleString("en-US")} ${cut.sent === 1 ? "byte" : "bytes"}`;
    return h("p", { class: "body-cut", role: "note" },
        `Request body cut after ${bytes}${cut.sent >= 1000 ? ` (${formatSize(cut.sent)})` : ""}: ${cut.reason ?? ""}`,
        h("span", { class: "muted" }, " · the origin got only those; the body below is what the client sent"));
}

/**
 * The body so far of a flow still running: its size, and its first bytes as text when they are; a
 * `text/event-stream` body (an LLM's tokens, a live feed) also as its events so far, the latest
 * listed, from the part of the body the record so far holds.
 */
function pendingBody(message) {
    const body = message.body;
    if (!body || !body.size) return h("p", { class: "muted" }, "no body so far");
    const facts = [`${formatSize(body.size)} so far`];
    if (body.decoded) facts.push(`decoded from ${body.decoded}`);
    if (body.decode_error) facts.push(`not decoded: ${body.decode_error}`);
    let events = null;
    if (body.text != null && mediaType(headerValue(message.headers, "content-type")) === "text/event-stream") {
        const parsed = eventStreamEvents(body.text);
        const part = body.preview || body.truncated ? ` in the first ${formatSize(new TextEncoder().encode(body.text).length)}` : "";
        events = h("div", { class: "event-stream" },
            ...eventsTable(parsed, `Server-sent events so far (${parsed.length}${part})`, true));
    }
    return h("section", { class: "body", "aria-label": "body so far" },
        h("p", { class: "body-facts" }, facts.join(" · ")),
        events,
        body.text != null
            ? h("pre", { class: "body-so-far" }, body.text, body.preview || body.truncated ? "\n…" : "")
            : h("p", { class: "muted" }, body.base64 != null ? "binary: the body appears when the exchange ends"
                : "past what a running flow's record shows: the body appears when the exchange ends"));
}

/** A message's time cell: `+N.NNN s` from the flow's start (`started`, RFC 3339), the clock time on hover. */
function timeCell(message, started) {
    const start = Date.parse(started) / 1000;
    const known = message.time !== undefined && message.time !== null;
    return h("td", { class: "time", title: known ? new Date(message.time * 1000).toISOString() : "" },
        known && !Number.isNaN(start) ? `+${Math.max(0, message.time - start).toFixed(3)} s` : "");
}

/** A WebSocket's messages (of flow `id`); `started` (the flow's start, RFC 3339) dates them relative to it. */
function webSocketView(messages, started, id, end) {
    const rows = messages.map((message) => h("tr", { class: message.direction },
        h("td", { title: message.direction, "aria-label": message.direction },
            message.direction === "client_to_server" ? "→" : "←"),
        timeCell(message, started),
        h("td", {}, message.opcode),
        h("td", message.compressed_length === undefined ? {}
            : { title: `permessage-deflate: ${formatSize(message.compressed_length)} on the wire` },
            formatSize(message.length) + (message.compressed_length === undefined ? ""
                : ` (${formatSize(message.compressed_length)} deflated)`)),
        h("td", { class: "data" }, h("div", {}, [(message.decode_error ? `(${message.decode_error}) ` : "")
            + messageData(message),
            message.truncated ? h("span", { class: "cut" },
                ` … the first ${formatSize(keptBytes(message))} of ${formatSize(message.length)}`) : null]))));
    const caption = h("caption", {});
    const filter = messageFilterBox(id, rows, messages.map(messageData), caption, "WebSocket messages");
    // How it ended, and what the record did not keep: a socket past 1,000 messages read as if it
    // had carried only those.
    const notKept = end?.messages_not_kept > 0
        ? h("p", { class: "muted websocket-not-kept" }, `${end.messages_not_kept} more message(s) crossed and were not `
            + `kept: ${messages.length + end.messages_not_kept} in all (a flow keeps its first 1,000; Close frames always)`)
        : null;
    const ending = end ? h("p", { class: "muted websocket-end" }, end.by
        ? `Ended: the ${end.by} sent Close${end.code != null ? ` ${end.code}` : ""}${end.reason ? ` “${end.reason}”` : ""}`
            + (end.clean ? ", and the other side answered it" : ", unanswered")
        : "Ended without a Close frame (the peers saw 1006, abnormal closure)") : null;
    return h("section", { class: "websocket", "aria-label": "WebSocket messages" }, filter, ending, notKept,
        h("table", { class: "messages" }, caption,
            h("thead", {}, h("tr", {}, ["", "Time", "Opcode", "Length", "Data"].map((title) => h("th", { scope: "col" }, title)))),
            h("tbody", {}, rows)));
}

/** The messages table's filter text, kept across a running flow's refreshes (of flow `id`). */
const messageFilter = { id: null, text: "" };

/** Each message row's text as the filter searches it, lowercased. */
const rowText = new WeakMap();

/**
 * A filter box over a messages table (a chatty socket's, a long stream's): it keeps the `rows`
 * whose `texts` hold its text in any case, as DevTools' filter does, and `caption` says how many
 * match (`label (N)`, `label (n of N match)`). The text is kept while flow `id` is on show.
 * Typing filters the rows the table holds then: a running flow's refresh adds rows to it.
 */
function messageFilterBox(id, rows, texts, caption, label) {
    if (messageFilter.id !== id) Object.assign(messageFilter, { id, text: "" });
    rows.forEach((row, index) => rowText.set(row, texts[index].toLowerCase()));
    const box = h("input", {
        type: "search", class: "message-filter", placeholder: "filter messages", "aria-label": "Filter messages",
        spellcheck: "false", value: messageFilter.text,
        on: {
            input: (event) => {
                messageFilter.text = event.target.value;
                const table = event.target.closest("section")?.querySelector("table.messages");
                if (table?.tBodies[0]) filterRows([...table.tBodies[0].rows], table.caption, label);
            },
        },
    });
    filterRows(rows, caption, label);
    return box;
}

/** Hides the `rows` that do not hold the filter's text and says in `caption` how many match. */
function filterRows(rows, caption, label) {
    const needle = messageFilter.text.trim().toLowerCase();
    let shown = 0;
    for (const row of rows) {
        row.hidden = needle !== "" && !(rowText.get(row) ?? "").includes(needle);
        if (!row.hidden) shown += 1;
    }
    if (caption) caption.textContent = needle === "" ? `${label} (${rows.length})` : `${label} (${shown} of ${rows.length} match)`;
}

/** A WebSocket message's data as the table shows it: its text, a Close frame's status, or base64. */
function messageData(message) {
    return (message.opcode === "close" ? closeText(message) : null)
        ?? message.text ?? (message.base64 ? `(base64) ${message.base64}` : "");
}

/** RFC 6455 §7.4.1 (and the IANA registry): what a Close frame's status code says. */
const CLOSE_CODES = {
    1000: "normal closure", 1001: "going away", 1002: "protocol error", 1003: "unsupported data",
    1007: "invalid payload data", 1008: "policy violation", 1009: "message too big", 1010: "mandatory extension",
    1011: "internal error", 1012: "service restart", 1013: "try again later", 1014: "bad gateway",
};

/**
 * A Close frame's data as its status code, the code's meaning and its reason (RFC 6455 §5.5.1);
 * null when it is not one (not base64, a lone byte), to be shown as the bytes it is.
 */
function closeText(message) {
    let bytes;
    try {
        bytes = Uint8Array.from(atob(message.base64 ?? ""), (c) => c.charCodeAt(0));
    } catch {
        return null;
    }
    if (bytes.length === 0) return "no status code";
    if (bytes.length === 1) return null;
    const code = bytes[0] * 256 + bytes[1];
    const meaning = CLOSE_CODES[code] ?? (code >= 4000 && code <= 4999 ? "the application's own" : "");
    const reason = new TextDecoder().decode(bytes.subarray(2));
    return `${code}${meaning ? ` (${meaning})` : ""}${reason ? ` · ${reason}` : ""}`;
}

/** The bytes a WebSocket message record keeps: its text's UTF-8, or what its base64 decodes to. */
function keptBytes(message) {
    if (message.text !== undefined && message.text !== null) return new TextEncoder().encode(message.text).length;
    const base64 = message.base64 ?? "";
    return Math.floor(base64.length / 4) * 3 - (base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0);
}

/** A gRPC call's facts and messages; `started` (the flow's start) dates the messages. */
/** The list's summary of flow `id` (its `graphql`, as the store read it), or null. */
function listSummary(id) {
    return document.querySelector("flow-list")?.summaryOf?.(id) ?? null;
}

/** Whether the GraphQL tab shows: the store named its operations, or (a row not loaded) it reads as one. */
function isGraphQL(flow) {
    const summary = listSummary(flow.id);
    return summary ? Boolean(summary.graphql) : looksLikeGraphQL(flow);
}

function grpcView(grpc, started, id) {
    const wire = { "grpc-web": "gRPC-Web", "grpc-web-text": "gRPC-Web, text (base64)", "connect": "Connect, streaming",
        "connect-unary": "Connect, unary" }[grpc.protocol] ?? "gRPC";
    const status = grpc.status == null ? null : `${grpc.status} ${grpcStatusName(grpc.status)}`;
    const facts = definitionList([["Protocol", wire], ["Service", grpc.service], ["Method", grpc.method], ["Status", status],
        ["Message", grpc.message], ["Encoding", grpc.encoding], ["Response encoding", grpc.response_encoding],
        ["Messages", `${grpc.request_messages} sent, ${grpc.response_messages} received`],
        ["Notes", (grpc.notes ?? []).join("; ")]]);
    const messages = grpc.messages ?? [];
    const shown = messages.map((message) => message.typed !== undefined
        // With `--proto`: the message by its schema, field names and all.
        ? `${message.message_type ?? ""} ${JSON.stringify(message.typed, null, 2)}`
        : message.decoded === undefined ? (message.first_bytes ?? "")
        // Without a schema: field numbers and values, in protoc --decode_raw's layout.
        : (typeof message.decoded === "string" ? message.decoded : decodedText(message.decoded)));
    const rows = messages.map((message, index) => h("tr", { class: message.direction },
        h("td", { "aria-label": message.direction }, message.direction === "response" ? "←" : "→"),
        timeCell(message, started),
        h("td", {}, formatSize(message.length)), h("td", {}, message.compressed ? "yes" : ""),
        h("td", { class: "data" }, h("pre", {}, shown[index])),
        h("td", {}, message.note ?? "")));
    const caption = h("caption", {});
    const filter = rows.length > 1
        ? messageFilterBox(id, rows, shown.map((text, index) => `${text} ${messages[index].note ?? ""}`), caption, "Messages")
        : null;
    // A rich error (grpc-status-details-bin, a Connect error's details): each detail by its type.
    const details = grpc.status_details
        ? h("div", { class: "status-details" }, h("h4", {}, "Status details"),
            h("pre", {}, JSON.stringify(grpc.status_details, null, 2)))
        : null;
    if (!filter) caption.textContent = `Messages (${rows.length})`;
    return h("section", { class: "grpc", "aria-label": "gRPC" }, h("h3", {}, "gRPC"), facts, details, filter,
        h("table", { class: "messages" }, caption,
            h("thead", {}, h("tr", {}, ["", "Time", "Length", "Compressed", "Decoded", "Note"]
                .map((title) => h("th", { scope: "col" }, title)))),
            h("tbody", {}, rows)));
}

/** A message decoded without a schema, as `protoc --decode_raw` prints it. */
function decodedText(decoded) {
    const lines = protobufLines(decoded);
    return lines.length ? lines.join("\n") : "(no fields)";
}

function connectionView(flow) {
    const t = flow.timings ?? {};
    const phases = [["connect", t.connect], ["TLS", t.tls], ["send", t.send], ["wait", t.wait], ["receive", t.receive]];
    const total = phases.reduce((sum, [, value]) => sum + (value > 0 ? value : 0), 0);
    const timings = h("table", { class: "timings" }, h("caption", {}, "Timings"),
        h("tbody", {}, phases.map(([name, value]) => {
            const bar = h("span", { class: "bar" });
            if (value > 0 && total > 0) bar.style.width = `${Math.max(1, (value / total) * 100)}%`;
            return h("tr", {}, h("th", { scope: "row" }, name),
                h("td", {}, value >= 0 ? formatDuration(value) : "—"), h("td", { class: "bar-cell" }, bar));
        })));
    const general = definitionList([["Started", flow.started], ["Ended", flow.ended], ["Client", flow.client],
        ["Process", processFacts(flow.client_process)],
        ["Listener", flow.listener ? `${flow.listener.mode} ${flow.listener.address}` : ""],
        ["Server", serverName(flow.server)],
        ["Mapped", mappedBy(flow.mapped)],
        ["Intercepted", interceptFacts(flow.intercept)],
        ["Response intercepted", interceptFacts(flow.intercept_response, true)],
        ["Request named", requestNamed(flow.server)],
        ["Dialled", flow.server?.address], ["Retried", flow.server?.retried ? "yes, on a fresh connection" : ""],
        ["Mode", flow.mode], ["Persona", flow.persona],
        ["HTTP/2", flow.h2 ? `stream ${flow.h2.stream_id} on ${flow.h2.connection_id}` +
            (flow.h2.upstream_stream_id != null ? `, upstream stream ${flow.h2.upstream_stream_id}` : "") : ""],
        ["Tunnel", flow.tunnel ? `${flow.tunnel.reason}; ${formatSize(flow.tunnel.bytes_from_client)} from client, ` +
            `${formatSize(flow.tunnel.bytes_from_server)} from server` : ""],
        ["Upstream verification", flow.insecure_upstream ? "skipped (--insecure-upstream)" : ""],
        ["Alt-Svc removed", flow.response?.alt_svc_removed?.length
            ? `${flow.response.alt_svc_removed.join(", ")} (the client would have left DevProxy; --keep-alt-svc relays it)`
            : ""]]);
    const client = flow.tls?.client;
    const upstream = flow.tls?.upstream;
    return h("div", { class: "connection" }, h("section", {}, h("h3", {}, "Connection"), general), timings,
        h("section", { "aria-label": "TLS with the client" }, h("h3", {}, "TLS with the client"),
            client ? definitionList([["SNI", client.sni], ["Version", client.version], ["Cipher", client.cipher],
                ["ALPN", client.alpn]]) : h("p", { class: "muted" }, "no TLS"),
            client || flow.signer ? shownChain(flow) : null),
        h("section", { "aria-label": "TLS with the server" }, h("h3", {}, "TLS with the server"),
            upstream ? upstreamView(upstream) : h("p", { class: "muted" }, "no TLS")));
}

/** `host:port` as a URL writes it (`[::1]:443`); nothing for a flow that never named a server. */
function serverName(server) {
    if (!server?.host) return "";
    const host = server.host.includes(":") ? `[${server.host}]` : server.host;
    return server.port > 0 ? `${host}:${server.port}` : host;
}

/**
 * Another host than the server's, named by the request (its Host, or HTTP/2's `:authority`) and
 * sent on the connection for the server's name (`server.request_host`): where the request really
 * went, and that the server's TLS was made for the connection's name, not this one.
 */
function requestNamed(server) {
    if (!server?.request_host) return "";
    return `${server.request_host} (its Host; sent on the connection to ${serverName(server)}, ` +
        `whose TLS was for ${server.host}, not this name)`;
}

/**
 * Which intermediate signed the leaf the client saw: its engineer and serial, so flows signed
 * before and after a new intermediate was taken mid-run (the same engineer's, renewed) differ.
 */
export function signedBy(signer) {
    if (!signer?.email && !signer?.serial) return "";
    return `signed by ${signer.email ?? "(no email)"}${signer.serial ? ` (serial ${signer.serial})` : ""}`;
}

/**
 * What `--map-remote` or `--map-local` did to the request (`mapped`), and by which options;
 * nothing when no rule touched it.
 */
function mappedBy(mapped) {
    if (!mapped) return "";
    // `--modify-headers`: each header set or removed (on the request, or `on` the response), and by which option.
    // `--modify-body`: how many matches each rule replaced in which body, or why a body was left as it came.
    const headers = (mapped.headers ?? []).map(c => `${c.action} ${c.name}`
        + (c.on === "response" ? " on the response" : "") + ` (--modify-headers ${c.by})`)
        .concat((mapped.body ?? []).map(c => `${c.replacements} replaced in the ${c.on} body (--modify-body ${c.by})`),
            mapped.note ? [mapped.note] : []).join("; ");
    if (mapped.rule === "modify-headers" || mapped.rule === "modify-body") return headers;
    if (mapped.rule === "block-list") return `blocked, never sent on (--block-list ${(mapped.by ?? []).join("")})`;
    const by = `(--${mapped.rule} ${(mapped.by ?? []).join(" then ")})` + (headers ? `; ${headers}` : "");
    if (mapped.rule === "map-remote") return `sent to ${mapped.to}, asked for ${mapped.from} ${by}`;
    if (mapped.rule === "mock") {
        return `${mapped.from} answered by a mock from the Rules view: ${mapped.to.replace(/^mock /, "")} ${by}`;
    }
    if (mapped.missing) return `${mapped.from}: none of ${mapped.missing.join(", ")} exists, answered 404 ${by}`;
    return `${mapped.from} answered from the file ${mapped.to} ${by}`;
}

/** The chain DevProxy showed the client: leaf → intermediate (serial, email) → root. */
function shownChain(flow) {
    const root = store.ca?.root;
    const leafName = flow.tls?.client?.sni ?? flow.server?.host ?? "";
    const items = [
        h("li", {}, h("span", { class: "chain-role" }, "leaf"), ` ${leafName}`),
        h("li", {}, h("span", { class: "chain-role" }, "intermediate"),
            flow.signer ? ` ${flow.signer.email ?? "(no email)"} · serial ${flow.signer.serial}` : " (not recorded)"),
        h("li", {}, h("span", { class: "chain-role" }, "root"),
            root ? ` ${root.subject ?? root.name ?? ""}${root.pin ?? root.spki_pin ? ` · ${root.pin ?? root.spki_pin}` : ""}`
                : " the team root"),
    ];
    return h("div", {}, h("h4", {}, "Chain shown to the client"), h("ol", { class: "chain" }, items));
}

function upstreamView(upstream) {
    const facts = definitionList([["Version", upstream.version], ["Cipher", upstream.cipher], ["ALPN", upstream.alpn],
        ["Verified", upstream.verified ? "yes" : `no${upstream.verify_error ? `: ${upstream.verify_error}` : ""}`],
        ...(upstream.fetched_issuer
            ? [["Incomplete chain", `the server left out its intermediate; fetched from ${upstream.fetched_issuer}`]] : [])]);
    const chain = h("ol", { class: "chain" }, (upstream.chain ?? []).map((certificate) => h("li", {},
        h("div", {}, certificate.subject), h("div", { class: "muted" }, `issuer ${certificate.issuer}`),
        h("div", { class: "muted" }, `until ${certificate.not_after}`),
        h("div", { class: "pin" }, h("code", {}, certificate.pin)))));
    return append(h("div", {}), [facts, h("h4", {}, "Chain from the server, with pins"), chain]);
}

customElements.define("flow-detail", FlowDetail);

/**
 * The process on this machine that made the flow (the record's `client_process`): `curl · pid 4242
 * · /usr/bin/curl`; "" when not known (another user's, another host's, macOS).
 */
function processFacts(process) {
    if (!process || typeof process.name !== "string") return "";
    return [process.name, Number.isInteger(process.pid) ? `pid ${process.pid}` : "", process.exe ?? ""]
        .filter(Boolean).join(" · ");
}

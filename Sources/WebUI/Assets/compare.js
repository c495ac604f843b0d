// <flow-compare>: two flows side by side, what differs marked, as Proxyman's Diff and Charles's
// Compare: "why does this request work and that one fail?". "Compare…" in the pane (or `c` in the
// list) makes a flow the base; on another flow, "Compare with <base>" (or `c` again) opens the
// comparison, the base on the left; Esc closes it. The address says `#compare=BASE,OTHER`.
//
// Method, URL and each query parameter, status and HTTP versions, each header field (matched by
// name in any case, repeated fields in order), cookies, sizes and timings are compared here; the
// bodies in a worker (compare-worker.js: the first MiB of each, JSON with its keys sorted, a line
// diff), which the page asks for the rows it shows. Captured content is only ever text.

import { api } from "./api.js";
import { bodySection } from "./compare-body.js";
import { cookiesOf, overviewRows, pairRows, queryOf, responseRows, sectionOf, setCookiesOf, sizeRows }
    from "./compare-fields.js";
import { h, replaceChildren, setSafeAttribute } from "./dom.js";
import { liveEvents } from "./events.js";
import { countOf, pathOf } from "./format.js";
import { store } from "./store.js";

/** "GET /path" of each flow seen here (a pane's, a comparison's), for the button and the notes. */
const labels = new Map();

/** What a flow record or summary is called on a button: its method and path. */
function labelOf(flow) {
    const method = flow?.request?.method ?? flow?.method ?? "";
    const url = flow?.request?.url ?? flow?.url ?? "";
    return `${method} ${pathOf(url)}`.trim() || String(flow?.id ?? "");
}

/** The label of flow `id`, asking the API when it was not seen here. */
async function labelFor(id) {
    if (labels.has(id)) return labels.get(id);
    try {
        const answer = await api.flow(id, undefined, 0);
        labels.set(id, labelOf(answer.pending ? answer.summary : answer));
    } catch {
        labels.set(id, id);
    }
    return labels.get(id);
}

/**
 * "Compare…" for flow `id` (the pane's button, the list's `c`): with no base, makes it the base;
 * on the base itself, unsets it; on another flow, opens the comparison of the base with it.
 */
export async function compareFrom(id) {
    const base = store.compareBase;
    if (base && base !== id) {
        store.setComparing([base, id]);
        return;
    }
    if (base === id) {
        store.setCompareBase(null);
        store.notify("no comparison base now");
        return;
    }
    store.setCompareBase(id);
    const label = await labelFor(id);
    if (store.compareBase !== id) return;
    paintButton(document.getElementById("compare"));
    store.notify(`comparison base: ${label}. Open another flow and press c (or Compare with…) to compare them`);
}

/** The pane's "Compare…" / "Compare with GET /path" button for `flow` (its record). */
export function compareButton(flow) {
    labels.set(flow.id, labelOf(flow));
    const button = h("button", {
        type: "button", id: "compare", "data-id": flow.id, on: { click: () => compareFrom(flow.id) },
    });
    paintButton(button);
    return button;
}

function paintButton(button) {
    if (!button) return;
    const id = button.getAttribute("data-id");
    const base = store.compareBase;
    if (!base) {
        button.textContent = "Compare…";
        setSafeAttribute(button, "title", "Make this flow the base of a comparison (c), then open another flow and "
            + "compare it with this one");
    } else if (base === id) {
        button.textContent = "Comparison base";
        setSafeAttribute(button, "title", "This flow is the base: open another flow and compare it with this one "
            + "(c); click to unset");
    } else {
        const label = labels.get(base) ?? base;
        button.textContent = `Compare with ${label}`;
        setSafeAttribute(button, "title", `Compare this flow with the base, ${label} (c)`);
    }
    setSafeAttribute(button, "aria-pressed", String(base === id));
}

store.addEventListener("compare-base", () => paintButton(document.getElementById("compare")));

/** Whether the session no longer has flow `id` (Clear took it): the API answers 404. */
async function gone(id) {
    try {
        await api.flow(id, undefined, 0);
        return false;
    } catch (error) {
        return error.status === 404;
    }
}

// Clear (here or in another page) takes the flows away: the base is unset and a comparison of them
// closed. The live stream also says "cleared" when it starts over (a reset), so the API is asked.
liveEvents.addEventListener("flows", async (event) => {
    if (!event.detail.cleared) return;
    const base = store.compareBase;
    if (base && await gone(base) && store.compareBase === base) store.setCompareBase(null);
    const pair = store.comparing;
    if (pair && (await Promise.all(pair.map(gone))).some(Boolean) && store.comparing === pair) {
        store.setComparing(null);
        store.notify("the compared flows were cleared");
    }
});

/**
 * A flow as the API answers it, as a record to compare: a finished flow's record, a running one's
 * record so far, or what its summary and header fields so far say. `pending`: it has not ended.
 */
function comparable(answer) {
    if (!answer.pending) return { flow: answer, pending: false };
    if (answer.record) return { flow: { ...answer.record, id: answer.id }, pending: true };
    const summary = answer.summary ?? {};
    return {
        pending: true,
        flow: {
            id: answer.id,
            request: { method: summary.method, url: summary.url, headers: answer.request?.headers ?? [] },
            response: answer.response?.headers ? { status: summary.status, headers: answer.response.headers } : null,
        },
    };
}

class FlowCompare extends HTMLElement {
    #controller = null;
    /** Aborted when what is drawn goes (drawn again, or closed): the bodies' worker documents close. */
    #drawn = null;
    /** `{base, other}` of the comparison on show: `{flow, pending}` each. */
    #shown = null;
    #onlyDifferences = true;
    #refresh = 0;
    /** The sections on show: `{title, differences, node}`, differences null while a body is compared. */
    #sections = [];

    connectedCallback() {
        if (this.hasAttribute("role")) return;
        setSafeAttribute(this, "role", "region");
        setSafeAttribute(this, "aria-label", "Compare flows");
        setSafeAttribute(this, "tabindex", -1);
        store.addEventListener("compare", () => this.#open(store.comparing));
        if (store.comparing) this.#open(store.comparing);
        // Esc closes it from anywhere in it, the "only differences" box included (app.js leaves keys
        // typed into a field alone).
        this.addEventListener("keydown", (event) => {
            if (event.key !== "Escape" || !store.comparing) return;
            event.preventDefault();
            event.stopPropagation();
            store.setComparing(null);
        });
    }

    #release() {
        this.#controller?.abort();
        clearTimeout(this.#refresh);
        this.#refresh = 0;
        this.#drawn?.abort();
        this.#drawn = null;
    }

    async #open(pair, again = false) {
        this.#release();
        if (!pair) {
            const focused = this.contains(document.activeElement);
            this.hidden = true;
            this.#shown = null;
            replaceChildren(this);
            if (focused) document.querySelector("flow-list")?.focusList?.();
            return;
        }
        const controller = new AbortController();
        this.#controller = controller;
        this.hidden = false;
        if (!again) {
            setSafeAttribute(this, "aria-busy", "true");
            replaceChildren(this, this.#head(null), h("p", { class: "muted" }, "loading the two flows…"));
        }
        try {
            const [base, other] = await Promise.all(pair.map((id) => api.flow(id, controller.signal, 0)));
            if (controller.signal.aborted) return;
            this.#shown = { base: comparable(base), other: comparable(other) };
            labels.set(pair[0], labelOf(this.#shown.base.flow));
            labels.set(pair[1], labelOf(this.#shown.other.flow));
            this.#render(controller.signal);
            if (!again) this.focus();
            // A flow still running compares what it has; it is compared again until it ends.
            if (this.#shown.base.pending || this.#shown.other.pending) {
                this.#refresh = setTimeout(() => this.#open(pair, true), 1000);
            }
        } catch (error) {
            if (controller.signal.aborted) return;
            replaceChildren(this, this.#head(null), h("p", { class: "error-text", role: "alert" },
                `could not compare ${pair.join(" with ")}: ${error.message}`));
        } finally {
            if (this.#controller === controller) this.removeAttribute("aria-busy");
        }
    }

    #head(shown) {
        const close = h("button", {
            type: "button", class: "close", "aria-label": "Close the comparison (Esc)",
            on: { click: () => store.setComparing(null) },
        }, "×");
        if (!shown) return h("div", { class: "compare-head" }, close, h("h2", { class: "compare-title" }, "Compare"));
        const only = h("input", {
            type: "checkbox", id: "compare-only", checked: this.#onlyDifferences,
            on: {
                change: (event) => {
                    this.#onlyDifferences = event.target.checked;
                    this.#render(this.#controller.signal);
                },
            },
        });
        const swap = h("button", {
            type: "button", id: "compare-swap", title: "Make the other flow the base",
            on: { click: () => store.setComparing([...store.comparing].reverse()) },
        }, "⇄ swap");
        const side = (which, { flow, pending }) => h("div", { class: `compare-side compare-${which}` },
            h("span", { class: "compare-role" }, which === "base" ? "Base" : "Other"), " ",
            h("span", { class: "method" }, flow.request?.method ?? ""), " ",
            h("span", { class: "url" }, flow.request?.url ?? ""),
            h("span", { class: "muted" }, ` · ${flow.response?.status ?? "no response"}`,
                pending ? " · in progress" : "", ` · flow ${flow.id}`));
        return h("div", { class: "compare-head" }, close,
            h("h2", { class: "compare-title" }, "Compare"),
            h("div", { class: "compare-tools" }, h("label", {}, only, " only differences"), swap),
            h("p", { class: "compare-summary", role: "status" }, "comparing…"),
            h("div", { class: "compare-sides" }, side("base", shown.base), side("other", shown.other)));
    }

    #render(signal) {
        const { base, other } = this.#shown;
        this.#drawn?.abort();
        this.#drawn = new AbortController();
        const drawn = AbortSignal.any([signal, this.#drawn.signal]);
        const bodies = { signal: drawn, onlyDifferences: this.#onlyDifferences, compared: () => this.#summarise() };
        const a = base.flow;
        const b = other.flow;
        const only = this.#onlyDifferences;
        const fieldSection = (title, rows, key, note) => sectionOf(title, rows, key, only, note);
        const sections = [
            fieldSection("Request", overviewRows(a, b), "request-line"),
            fieldSection("Query parameters", pairRows(queryOf(a), queryOf(b), false), "query"),
            fieldSection("Request headers", pairRows(a.request?.headers, b.request?.headers, true), "request-headers"),
            fieldSection("Cookies", pairRows(cookiesOf(a), cookiesOf(b), false), "cookies"),
            bodySection("Request body", "request", base, other, bodies),
            fieldSection("Response", responseRows(a, b), "response-line"),
            fieldSection("Response headers", pairRows(a.response?.headers, b.response?.headers, true),
                "response-headers"),
            fieldSection("Set-Cookie", pairRows(setCookiesOf(a), setCookiesOf(b), false), "set-cookies"),
            fieldSection("Trailers", pairRows(a.response?.trailers, b.response?.trailers, true), "trailers"),
            bodySection("Response body", "response", base, other, bodies),
            fieldSection("Sizes and timings", sizeRows(a, b), "timings",
                "timings are measurements: shown side by side, not counted as differences"),
        ].filter(Boolean);
        // Drawn again (a running flow's refresh, the toggle): the reader stays where they were.
        const scrolled = this.querySelector(".compare-body")?.scrollTop ?? 0;
        replaceChildren(this, this.#head(this.#shown), h("div", { class: "compare-body", tabindex: 0 },
            sections.map((section) => section.node)));
        this.querySelector(".compare-body").scrollTop = scrolled;
        this.#sections = sections;
        this.#summarise();
    }

    /** The summary line: how many differences, and where. */
    #summarise() {
        const line = this.querySelector(".compare-summary");
        if (!line) return;
        const waiting = this.#sections.some((section) => section.differences === null);
        const found = this.#sections.filter((section) => section.differences > 0);
        const total = found.reduce((sum, section) => sum + section.differences, 0);
        const where = found.map((section) => `${section.differences} in ${section.title.toLowerCase()}`).join(", ");
        line.textContent = total === 0
            ? (waiting ? "no differences so far; comparing the bodies…" : "no differences")
            : `${countOf(total, "difference", "differences")}: ${where}${waiting ? "; comparing the bodies…" : ""}`;
        for (const section of this.#sections) {
            const count = section.node.querySelector(".compare-count");
            if (!count) continue;
            count.textContent = section.differences === null ? "comparing…"
                : section.differences === 0 ? "the same" : countOf(section.differences, "difference", "differences");
        }
    }

}

customElements.define("flow-compare", FlowCompare);

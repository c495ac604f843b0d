// The page's one piece of shared state: the filter, the selected flow, the server's info.
// Components listen for its events instead of calling each other.

/** What the page's address asks for (`location.js` keeps it up to date), read once at load. */
const addressed = new URLSearchParams(window.location.hash.replace(/^#/, ""));

class Store extends EventTarget {
    /** The list's filter: at first the one the page's address names. */
    filter = addressed.get("filter") ?? "";
    /** The list's column sort (`size`, `-duration`: `-` for descending), or "" for arrival order. */
    sort = addressed.get("sort") ?? "";
    /** The flow shown in the detail pane, or null. */
    selectedID = null;
    /** Flows picked for "export selected" (Ctrl/Cmd-click, Shift-click). */
    picked = new Set();
    /** `GET /api/info`, once it arrives. */
    info = null;
    /** `{kind: explanation}` from `/api/error-kinds`, for the detail pane's error banner. */
    errorKinds = {};
    /** `GET /api/ca`, once it arrives. */
    ca = null;
    /**
     * Breakpoints (`GET /api/intercept`, the live `intercept` event): the Intercept filter (null for
     * none), the ids of the held flows, oldest first, and those of them held at their response
     * (`responses`; the rest are held requests); `available` is false beside no proxy.
     */
    intercept = { available: false, filter: null, held: [], responses: [] };
    /** The flow "Compare…" (or `c`) made the base of a comparison (compare.js), or null. */
    compareBase = null;
    /** The flows compared, `[base, other]` ids, while the comparison is open (`#compare=`); else null. */
    comparing = null;

    setFilter(filter) {
        if (filter === this.filter) return;
        this.filter = filter;
        this.dispatchEvent(new CustomEvent("filter", { detail: filter }));
    }

    setSort(sort) {
        if (sort === this.sort) return;
        this.sort = sort;
        this.dispatchEvent(new CustomEvent("sort", { detail: sort }));
    }

    select(id) {
        this.selectedID = id;
        this.dispatchEvent(new CustomEvent("select", { detail: id }));
    }

    setCompareBase(id) {
        if (id === this.compareBase) return;
        this.compareBase = id;
        this.dispatchEvent(new CustomEvent("compare-base", { detail: id }));
    }

    /** Opens the comparison of two flows (`[base, other]`), or closes it (null). */
    setComparing(pair) {
        const next = Array.isArray(pair) && pair.length === 2 && pair[0] && pair[1] ? [String(pair[0]), String(pair[1])]
            : null;
        if (String(next) === String(this.comparing)) return;
        this.comparing = next;
        this.dispatchEvent(new CustomEvent("compare", { detail: next }));
    }

    setPicked(ids) {
        this.picked = new Set(ids);
        this.dispatchEvent(new CustomEvent("picked", { detail: this.picked }));
    }

    setInfo(info) {
        this.info = info;
        this.dispatchEvent(new CustomEvent("info", { detail: info }));
    }

    setCA(ca) {
        this.ca = ca;
        this.dispatchEvent(new CustomEvent("ca", { detail: ca }));
    }

    /** The breakpoints' board changed: `{filter, held: [ids], responses: [ids]}` (and `available` once known). */
    setIntercept({ filter = null, held = [], responses = [], available = true }) {
        this.intercept = { available, filter, held, responses: responses.filter((id) => held.includes(id)) };
        this.dispatchEvent(new CustomEvent("intercept", { detail: this.intercept }));
    }

    /** Whether flow `id` is held at a breakpoint now (its request or its response). */
    isHeld(id) {
        return Boolean(id) && this.intercept.held.includes(id);
    }

    /** What of flow `id` is held: `"request"`, `"response"`, or null when nothing is. */
    heldPhase(id) {
        if (!this.isHeld(id)) return null;
        return this.intercept.responses.includes(id) ? "response" : "request";
    }

    /** Says something to the user in the status line (and to screen readers). */
    notify(message, kind = "info") {
        this.dispatchEvent(new CustomEvent("notice", { detail: { message, kind } }));
    }

    /** Tells components a flow was added by this page (replay), so the list can show it. */
    announceFlow(id) {
        this.dispatchEvent(new CustomEvent("flow-added", { detail: id }));
    }

    /** True for `devproxy web FILE`: a saved session, nothing to replay or clear. */
    get readOnly() {
        return Boolean(this.info && (this.info.read_only || this.info.mode === "viewer"));
    }

    /** False when the server cannot replay (`devproxy web FILE`, or a read-only session). */
    get canReplay() {
        return !this.readOnly && this.info?.replay !== false;
    }
}

export const store = new Store();

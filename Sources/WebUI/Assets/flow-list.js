// <flow-list>: the virtualised list of flows. It renders only the rows in view (fixed height,
// recycled elements), pages summaries from the server by cursor as the user scrolls, and
// applies live batches from the event stream once per frame. The server filters, the live
// batches too (the stream follows the list's filter); the list only remembers the ids it has
// been given for the current filter.

import { api } from "./api.js";
import { h, setSafeAttribute } from "./dom.js";
import { liveEvents } from "./events.js";
import { COLUMNS, clientText, clientTitle, isPending, markers, pathTitle, signerTitle, statusClass, statusTitle }
    from "./flow-summary.js";
import { countOf } from "./format.js";
import { store } from "./store.js";

const ROW_HEIGHT = 24;
/** The Signer cell's index (its tooltip names the serial whole). */
const SIGNER_CELL = COLUMNS.findIndex((column) => column.key === "signer");
const CLIENT_CELL = COLUMNS.findIndex((column) => column.key === "client");
/**
 * The columns the list sorts by (the server's `sort=`), and each one's value in a summary, as the
 * store orders it: a missing value last either way, ties newest first.
 */
const SORT_KEYS = {
    time: (s) => s.seq,
    method: (s) => s.method,
    host: (s) => (s.host ?? "").toLowerCase(),
    path: (s) => s.url,
    status: (s) => s.status,
    type: (s) => s.content_type,
    size: (s) => s.response_size,
    duration: (s) => s.duration_ms,
    // What the cell shows (the process, else the client's address), without regard to case.
    client: (s) => clientText(s).toLowerCase() || null,
};
/** Columns whose first click sorts largest first (the rest sort A to Z first). */
const LARGEST_FIRST = new Set(["status", "size", "duration"]);

/** `sort` ("size", "-duration") when it names a column the list sorts by, else "" (arrival order). */
function validSort(sort) {
    return SORT_KEYS[String(sort ?? "").replace(/^-/, "")] ? sort : "";
}

/** Orders two summaries as the store's `sort` does (a negative number: `a` comes first). */
function compareBy(sort, a, b) {
    const key = SORT_KEYS[sort.replace(/^-/, "")];
    const x = key(a);
    const y = key(b);
    const xMissing = x === null || x === undefined;
    const yMissing = y === null || y === undefined;
    if (xMissing !== yMissing) return xMissing ? 1 : -1;
    if (!xMissing && x !== y) return (x < y ? -1 : 1) * (sort.startsWith("-") ? -1 : 1);
    return b.seq - a.seq;
}
/** The first column's mark of a request, or a response, held at a breakpoint (`intercept.js`); the
 * Status cell says which (`‖ request`, `‖ response`). */
const HELD_MARKERS = {
    request: { key: "held", symbol: "‖", label: "held at a breakpoint: a resumes it, x aborts it" },
    response: { key: "held", symbol: "‖", label: "response held at a breakpoint: a resumes it, x aborts it" },
};
/** The Status column's index (a held row says there what is held). */
const STATUS_CELL = COLUMNS.findIndex((column) => column.key === "status");
const PAGE = 200;
/** How close to the end of what is loaded (in rows) the next page is asked for. */
const PREFETCH = 60;

class FlowList extends HTMLElement {
    /** Ids in display order (newest first) and their summaries. */
    #ids = [];
    #byID = new Map();
    #total = 0;
    /** The largest `seq` in the store when the first page was read: the total counts none above it. */
    #countedThrough = Infinity;
    /**
     * Flows that came after the first page and sort past the loaded rows (a column sort with more
     * pages to load): counted in the total, and said ("N new below"), until a page loads them.
     */
    #below = new Set();
    #cursor = null;
    #loading = false;
    /** Bumped when the filter changes, so answers to older requests are dropped. */
    #generation = 0;
    /** The filter the shown list answers (the last valid one). */
    #filter = "";
    /** The column sort the shown list is in ("" for arrival order, newest first). */
    #sort = "";
    #header;
    /** The generation whose first page is shown (live batches wait for it). */
    #loaded = 0;
    /** Live batches that came while a page was on its way. */
    #deferred = [];
    #renderFrame = 0;
    #anchor = null;
    #viewport;
    /** A flow this page sent whose row has not arrived yet: scrolled to when it does. */
    #revealing = null;
    #spacer;
    #rows = [];
    #count;
    /** End was pressed while pages were still to load: the last row is selected once they have. */
    #selectLast = false;
    /**
     * The row the pointer went down on and the flow it showed then. Rows are pooled and refilled
     * in place, so a flow arriving on top between the press and the release (a click holds the
     * button ~100 ms, the live stream's batches come every 100 ms) makes the pressed row show the
     * flow that was above it by the click: the click opens the flow that was pressed.
     */
    #pressed = null;

    connectedCallback() {
        if (this.#viewport) return;
        this.#count = h("p", { class: "list-count", role: "status", "aria-live": "polite" }, "loading…");
        // A sortable column's title is a button: the first click sorts by it (largest or A first),
        // the second the other way, the third back to arrival order.
        const header = h("div", { class: "flow-row flow-header", role: "row" },
            COLUMNS.map((column) => h("span", {
                role: "columnheader", class: `c-${column.key}`, title: column.label ?? column.title,
            }, SORT_KEYS[column.key]
                ? h("button", { type: "button", class: "sort", "data-col": column.key,
                    on: { click: () => this.#sortBy(column.key) } }, column.title)
                : column.title)));
        this.#header = header;
        this.#spacer = h("div", { class: "flow-spacer", role: "presentation" });
        this.#viewport = h("div", {
            class: "flow-viewport", role: "grid", tabindex: 0, "aria-label": "Flows", "aria-rowcount": 1,
        }, header, this.#spacer);
        this.append(this.#count, this.#viewport);
        this.#viewport.addEventListener("scroll", () => this.#scheduleRender(), { passive: true });
        this.#viewport.addEventListener("pointerdown", (event) => {
            const row = event.target.closest(".flow-row[data-id]");
            this.#pressed = row ? { row, id: row.getAttribute("data-id") } : null;
        });
        this.#viewport.addEventListener("click", (event) => this.#onClick(event));
        new ResizeObserver(() => this.#scheduleRender()).observe(this.#viewport);
        store.addEventListener("filter", (event) => this.#load(event.detail));
        store.addEventListener("sort", () => this.#load(store.filter));
        store.addEventListener("select", () => this.#scheduleRender());
        store.addEventListener("picked", () => this.#scheduleRender());
        store.addEventListener("compare-base", () => this.#scheduleRender());
        store.addEventListener("intercept", () => this.#scheduleRender());
        store.addEventListener("flow-added", (event) => this.#reveal(event.detail));
        liveEvents.addEventListener("flows", (event) => this.#apply(event.detail));
        liveEvents.addEventListener("reset", () => this.#load(this.#filter, true));
        this.#load(store.filter);
    }

    /** The filter the list shows (the last one the server accepted). */
    get filter() {
        return this.#filter;
    }

    /** Sorts by `key`: the next step of that column's cycle (see the header). */
    #sortBy(key) {
        const current = this.#sort;
        const first = LARGEST_FIRST.has(key) ? `-${key}` : key;
        const second = first.startsWith("-") ? key : `-${key}`;
        // Time's natural order is the list's own (newest first): its cycle is oldest first, then back.
        if (key === "time") store.setSort(current === "time" ? "" : "time");
        else store.setSort(current === first ? second : current === second ? "" : first);
    }

    /** Marks the header cell the list is sorted by (`aria-sort`, and an arrow). */
    #showSort() {
        const key = this.#sort.replace(/^-/, "") || "time";
        const descending = !this.#sort || this.#sort.startsWith("-");
        for (const cell of this.#header.children) {
            const button = cell.querySelector("button.sort");
            if (!button) continue;
            const sorted = button.getAttribute("data-col") === key;
            setSafeAttribute(cell, "aria-sort", sorted ? (descending ? "descending" : "ascending") : false);
            button.className = sorted ? `sort ${descending ? "desc" : "asc"}` : "sort";
        }
    }

    /** How many flows match the list's filter. */
    get total() {
        return this.#total;
    }

    /** Ids of the loaded rows, in order. */
    get ids() {
        return this.#ids;
    }

    /** The summary of a loaded row (the detail pane reads its `graphql`), or null. */
    summaryOf(id) {
        return this.#byID.get(id) ?? null;
    }

    /**
     * Asks the server for the first page under `filter`; an invalid filter keeps the list. Then
     * the live stream follows the filter from the last message seen before the page was asked for.
     */
    async #load(filter, keepScroll = false) {
        const generation = ++this.#generation;
        const seenBefore = liveEvents.lastEventID;
        this.#deferred = [];
        this.setAttribute("aria-busy", "true");
        const sort = validSort(store.sort);
        try {
            const page = await api.flows({ filter, limit: PAGE, sort });
            if (generation !== this.#generation) return;
            this.#filter = filter;
            this.#sort = sort;
            this.#showSort();
            this.#loaded = generation;
            liveEvents.follow(filter, seenBefore);
            this.#ids = [];
            this.#byID.clear();
            this.#below.clear();
            this.#cursor = null;
            // A server without `max_seq` (an older one): nothing is counted past the loaded rows.
            this.#countedThrough = Number(page.max_seq ?? Infinity);
            this.#take(page, true);
            if (!keepScroll) this.#viewport.scrollTop = 0;
            this.dispatchEvent(new CustomEvent("filter-result", { detail: { filter, total: this.#total } }));
        } catch (error) {
            if (generation !== this.#generation) return;
            this.dispatchEvent(new CustomEvent("filter-error", { detail: { filter, error } }));
        } finally {
            if (generation === this.#generation) {
                this.removeAttribute("aria-busy");
                // The list shows a page now (the new one, or the old one when the filter was invalid).
                this.#loaded = generation;
                const deferred = this.#deferred;
                this.#deferred = [];
                for (const batch of deferred) this.#apply(batch);
            }
        }
        this.#scheduleRender();
    }

    /**
     * Appends a page's flows (those not already known) and keeps its cursor. Only the first page
     * sets the total: the live batches after it count what came since. A later page's total would
     * count flows committed before its query whose batch had not arrived yet, and that batch then
     * counts them again. With the last page every matching flow is loaded: the total is the rows.
     */
    #take(page, first) {
        for (const summary of page.flows ?? []) {
            this.#below.delete(summary.id);
            if (this.#byID.has(summary.id)) continue;
            this.#byID.set(summary.id, summary);
            this.#ids.push(summary.id);
        }
        this.#total = Math.max(first ? Number(page.total ?? 0) : this.#total, this.#ids.length);
        this.#cursor = page.next_cursor ?? null;
        if (!this.#cursor) this.#total = this.#ids.length;
    }

    /** Fetches following pages until row `index` is loaded (or the list ends). */
    async #loadThrough(index) {
        if (this.#loading || !this.#cursor || index < this.#ids.length - PREFETCH) return;
        this.#loading = true;
        const generation = this.#generation;
        try {
            while (this.#cursor && index >= this.#ids.length - PREFETCH && generation === this.#generation) {
                // A jump far down the scrollbar catches up in big pages; scrolling uses small ones.
                const limit = index - this.#ids.length > PAGE * 2 ? 1000 : PAGE;
                const page = await api.flows({ filter: this.#filter, limit, cursor: this.#cursor, sort: this.#sort });
                if (generation !== this.#generation) break;
                this.#take(page, false);
                this.#scheduleRender();
            }
        } catch (error) {
            store.notify(`could not load more flows: ${error.message}`, "error");
        } finally {
            this.#loading = false;
            if (this.#selectLast && generation === this.#generation) this.moveTo(Infinity);
        }
    }

    /**
     * A batch from the live stream. Its flows match the list's filter (the stream evaluates it),
     * so a known one is updated and a new one is put in its place by arrival order (a pending flow
     * that starts matching late lands among its contemporaries); `unmatched` ids leave the list.
     * A batch for another filter (the stream has not switched yet) is left out: the new stream
     * sends it again.
     */
    #apply({ flows, unmatched = [], cleared, filter = "" }) {
        if (cleared) {
            this.#ids = [];
            this.#byID.clear();
            this.#below.clear();
            this.#total = 0;
            this.#countedThrough = 0;
            this.#cursor = null;
        }
        if (this.#generation !== this.#loaded) {
            // A page is on its way and may predate this batch: it waits for the page. If the page
            // is for another filter, it is dropped then (the stream, reopened, sends it again).
            this.#deferred.push({ flows, unmatched, filter });
            return;
        }
        if (filter !== this.#filter) {
            this.#scheduleRender();
            return;
        }
        const first = this.#firstInView();
        let shift = 0;
        const gone = new Set(unmatched.filter((id) => this.#byID.has(id)));
        if (gone.size) {
            const kept = [];
            for (let index = 0; index < this.#ids.length; index += 1) {
                const id = this.#ids[index];
                if (!gone.has(id)) kept.push(id);
                else if (index < first) shift -= 1;
            }
            this.#ids = kept;
            for (const id of gone) this.#byID.delete(id);
            this.#total = Math.max(this.#ids.length, this.#total - gone.size);
        }
        for (const id of unmatched) {
            if (this.#below.delete(id)) this.#total = Math.max(this.#ids.length, this.#total - 1);
        }
        const added = new Map();
        for (const summary of flows) {
            const known = this.#byID.get(summary.id);
            // A summary has `mark` and `comment` only when set: one without them took them away.
            if (known) this.#byID.set(summary.id, { ...known, mark: undefined, comment: undefined, ...summary });
            else added.set(summary.id, summary);
        }
        if (added.size) {
            // Newest first, like the list; sorted by a column, each new flow where its value puts
            // it among the loaded rows (a known flow keeps its row when its value changes, a
            // pending one finishing: rows do not jump under the reader).
            const fresh = [...added.values()].sort((a, b) => b.seq - a.seq);
            const top = this.#ids.length ? this.#byID.get(this.#ids[0]).seq : -Infinity;
            let inserted = 0;
            if (!this.#sort && fresh[fresh.length - 1].seq > top) {
                for (const summary of fresh) this.#byID.set(summary.id, summary);
                this.#ids = fresh.map((summary) => summary.id).concat(this.#ids);
                shift += fresh.length;
                inserted = fresh.length;
            } else {
                for (const summary of fresh) {
                    const position = this.#positionFor(summary);
                    // Past the loaded pages: the next page (by cursor) brings it. A flow numbered
                    // after the first page's total is counted once (a flow not loaded that had
                    // been counted, an update of one, is not counted again).
                    if (position === this.#ids.length && this.#cursor) {
                        if (summary.seq > this.#countedThrough && !this.#below.has(summary.id)) {
                            this.#below.add(summary.id);
                            this.#total += 1;
                        }
                        continue;
                    }
                    this.#byID.set(summary.id, summary);
                    this.#ids.splice(position, 0, summary.id);
                    if (position < first) shift += 1;
                    // One counted below that now sorts among the loaded rows was counted then.
                    if (!this.#below.delete(summary.id)) inserted += 1;
                }
            }
            this.#total += inserted;
        }
        if (shift && this.#viewport.scrollTop > 0) {
            // A reader scrolled down keeps the same rows in view.
            this.#viewport.scrollTop = Math.max(0, this.#viewport.scrollTop + shift * ROW_HEIGHT);
        }
        // The selected flow changed: its summary as the batch has it (the pane refreshes on it).
        const selected = flows.findLast((flow) => flow.id === store.selectedID);
        if (selected) this.dispatchEvent(new CustomEvent("selected-changed", { detail: selected }));
        if (this.#revealing && this.#byID.has(this.#revealing)) {
            // Unless the reader opened another flow meanwhile.
            if (store.selectedID === this.#revealing) this.scrollToIndex(this.#ids.indexOf(this.#revealing));
            this.#revealing = null;
        }
        this.#scheduleRender();
    }

    /**
     * Opens flow `id`, which this page just sent (Replay, Edit and resend, New request), and
     * scrolls its row into view once the list has it, as Proxyman's Edit and Repeat opens the new
     * request: what came back is what the sender wants to read (the pane stayed on the original).
     */
    #reveal(id) {
        if (store.selectedID !== id) store.select(id);
        const index = this.#ids.indexOf(id);
        this.#revealing = index < 0 ? id : null;
        if (index >= 0) this.scrollToIndex(index);
    }

    /** The first row index in view. */
    #firstInView() {
        return Math.floor(this.#viewport.scrollTop / ROW_HEIGHT);
    }

    /** Where `summary` goes among the loaded rows, in the list's order (`#sort`, else newest first). */
    #positionFor(summary) {
        const sort = this.#sort || "-time";
        let low = 0;
        let high = this.#ids.length;
        while (low < high) {
            const middle = (low + high) >> 1;
            if (compareBy(sort, this.#byID.get(this.#ids[middle]), summary) < 0) low = middle + 1;
            else high = middle;
        }
        return low;
    }

    #scheduleRender() {
        if (this.#renderFrame) return;
        this.#renderFrame = requestAnimationFrame(() => {
            this.#renderFrame = 0;
            this.#render();
        });
    }

    /** Draws the rows in view from the pool; nothing else is in the DOM. */
    #render() {
        const rows = Math.max(this.#total, this.#ids.length);
        this.#spacer.className = "flow-spacer";
        this.#spacer.style.height = `${rows * ROW_HEIGHT}px`;
        setSafeAttribute(this.#viewport, "aria-rowcount", rows + 1);
        const top = Math.max(0, this.#viewport.scrollTop - ROW_HEIGHT);
        const first = Math.floor(top / ROW_HEIGHT);
        const visible = Math.ceil(this.#viewport.clientHeight / ROW_HEIGHT) + 2;
        const last = Math.min(rows, first + visible);
        while (this.#rows.length < last - first) this.#rows.push(this.#makeRow());
        for (let slot = 0; slot < this.#rows.length; slot += 1) {
            const row = this.#rows[slot];
            const index = first + slot;
            if (index >= last) {
                row.hidden = true;
                setSafeAttribute(row, "data-id", false);
                continue;
            }
            row.hidden = false;
            this.#fill(row, index);
        }
        this.#count.textContent = this.#countText();
        this.#loadThrough(last);
    }

    #countText() {
        const shown = countOf(this.#total, "flow", "flows");
        const text = this.#filter ? `${shown} ${this.#total === 1 ? "matches" : "match"} ${this.#filter}` : shown;
        // Sorted by a column, new flows land where their value puts them: past the loaded rows
        // they would go unseen, so the list says how many wait below.
        return this.#below.size ? `${text} · ${this.#below.size.toLocaleString("en")} new below` : text;
    }

    #makeRow() {
        const row = h("div", { class: "flow-row", role: "row", "aria-selected": "false" },
            COLUMNS.map((column, index) => h("span", {
                role: "gridcell", class: `c-${column.key}`, "aria-colindex": index + 1,
            })));
        this.#viewport.appendChild(row);
        return row;
    }

    #fill(row, index) {
        const id = this.#ids[index];
        const summary = id === undefined ? null : this.#byID.get(id);
        row.style.transform = `translateY(${(index + 1) * ROW_HEIGHT}px)`;
        setSafeAttribute(row, "aria-rowindex", index + 2);
        const cells = row.children;
        if (!summary) {
            row.className = "flow-row placeholder";
            setSafeAttribute(row, "data-id", false);
            setSafeAttribute(row, "aria-selected", "false");
            for (let c = 0; c < cells.length; c += 1) cells[c].textContent = c === 3 ? "loading…" : "";
            return;
        }
        setSafeAttribute(row, "data-id", id);
        const classes = ["flow-row", statusClass(summary)];
        // Held at a breakpoint (the board says so, not the summary): ‖ in place of the pending mark,
        // and what is held, the request or the response, in the Status cell.
        const phase = store.heldPhase(id);
        const held = Boolean(phase);
        const marks = held ? [HELD_MARKERS[phase], ...markers(summary).filter((marker) => marker.key !== "pending")]
            : markers(summary);
        // The base of a comparison ("Compare…" or `c`, compare.js), said in words as the other markers are.
        if (id === store.compareBase) marks.push({ key: "compare-base", symbol: "⇆", label: "comparison base" });
        for (const marker of marks) classes.push(`m-${marker.key}`);
        if (held) classes.push("held", `held-${phase}`);
        if (id === store.selectedID) classes.push("selected");
        if (store.picked.has(id)) classes.push("picked");
        row.className = classes.filter(Boolean).join(" ");
        setSafeAttribute(row, "aria-selected", id === store.selectedID || store.picked.has(id) ? "true" : "false");
        for (let c = 0; c < COLUMNS.length; c += 1) {
            const text = c === 0 ? marks.map((marker) => marker.symbol).join("\u2009")
                : c === STATUS_CELL && held ? `‖ ${phase}` : COLUMNS[c].text(summary);
            if (cells[c].textContent !== text) cells[c].textContent = text;
        }
        const labels = marks.map((marker) => marker.label).join(", ");
        setSafeAttribute(cells[0], "title", labels || false);
        setSafeAttribute(cells[0], "aria-label", labels || "no markers");
        setSafeAttribute(cells[3], "title", cells[3].textContent || false);
        // A row without a request says its error's kind; the tooltip, what that kind means.
        const explained = !summary.url && summary.error_kind && Object.hasOwn(store.errorKinds ?? {}, summary.error_kind)
            ? store.errorKinds[summary.error_kind] : null;
        setSafeAttribute(cells[4], "title", pathTitle(summary) ?? explained ?? false);
        setSafeAttribute(cells[5], "title", held ? HELD_MARKERS[phase].label : statusTitle(summary) || false);
        setSafeAttribute(cells[SIGNER_CELL], "title", signerTitle(summary) || false);
        setSafeAttribute(cells[CLIENT_CELL], "title", clientTitle(summary) || false);
        setSafeAttribute(row, "title", held ? (phase === "response" ? "response held at a breakpoint"
            : "held at a breakpoint") : isPending(summary) ? "pending" : false);
    }

    #onClick(event) {
        const row = event.target.closest(".flow-row[data-id]");
        const pressed = this.#pressed;
        this.#pressed = null;
        if (!row) return;
        // A click the pointer made (`detail` counts its presses; a script's `click()` has none and no
        // pointerdown of its own, so a press left by a drag must not stand for it).
        const id = event.detail > 0 && pressed?.row === row && this.#byID.has(pressed.id)
            ? pressed.id : row.getAttribute("data-id");
        if (event.ctrlKey || event.metaKey) {
            const picked = new Set(store.picked);
            if (picked.has(id)) picked.delete(id);
            else picked.add(id);
            this.#anchor = id;
            store.setPicked(picked);
            return;
        }
        if (event.shiftKey && this.#anchor) {
            const from = this.#ids.indexOf(this.#anchor);
            const to = this.#ids.indexOf(id);
            if (from >= 0 && to >= 0) {
                store.setPicked(this.#ids.slice(Math.min(from, to), Math.max(from, to) + 1));
                return;
            }
        }
        this.#anchor = id;
        store.select(id);
        this.#viewport.focus({ preventScroll: true });
    }

    /** Moves the selection `step` rows (j/k), loading more when needed, and keeps it in view. */
    move(step) {
        if (!this.#ids.length) return;
        const current = this.#ids.indexOf(store.selectedID);
        this.moveTo(current < 0 ? 0 : current + step);
    }

    /** Rows a page holds (PageUp / PageDown move by that many, less one kept in view, as a list box does). */
    get pageRows() {
        return Math.max(1, Math.floor(this.#viewport.clientHeight / ROW_HEIGHT) - 2);
    }

    /**
     * Selects row `index` (clamped to the loaded rows) and keeps it in view. Infinity (End) is the
     * last of every flow that matches: while pages remain, the list scrolls to the end, loads
     * them, and selects the last row once they are in.
     */
    moveTo(index) {
        this.#selectLast = index === Infinity && Boolean(this.#cursor);
        if (this.#selectLast) {
            this.scrollToIndex(Math.max(this.#total, this.#ids.length) - 1);
            return;
        }
        if (!this.#ids.length) return;
        const next = Math.min(this.#ids.length - 1, Math.max(0, index));
        this.#anchor = this.#ids[next];
        store.select(this.#ids[next]);
        this.scrollToIndex(next);
    }

    /** Scrolls row `index` into view if it is not. */
    scrollToIndex(index) {
        const top = (index + 1) * ROW_HEIGHT;
        const viewport = this.#viewport;
        if (top - ROW_HEIGHT < viewport.scrollTop) viewport.scrollTop = top - ROW_HEIGHT;
        else if (top + ROW_HEIGHT > viewport.scrollTop + viewport.clientHeight) {
            viewport.scrollTop = top + ROW_HEIGHT - viewport.clientHeight;
        }
        this.#scheduleRender();
    }

    focusList() {
        this.#viewport.focus();
    }
}

customElements.define("flow-list", FlowList);

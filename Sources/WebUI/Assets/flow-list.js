// <flow-list>: the virtualised list of flows. It renders only the rows in view (fixed height,
// recycled elements), pages summaries from the server by cursor as the user scrolls, and
// applies live batches from the event stream once per frame. The server filters; the list
// only remembers the ids it has been given for the current filter.

import { api } from "./api.js";
import { h, setSafeAttribute } from "./dom.js";
import { liveEvents } from "./events.js";
import { COLUMNS, isPending, markers, statusClass } from "./flow-summary.js";
import { store } from "./store.js";

const ROW_HEIGHT = 24;
const PAGE = 200;
/** How close to the end of what is loaded (in rows) the next page is asked for. */
const PREFETCH = 60;
/** How often (ms) a filtered list asks for the newest flows again while new ones arrive. */
const HEAD_REFRESH = 300;

class FlowList extends HTMLElement {
    /** Ids in display order (newest first) and their summaries. */
    #ids = [];
    #byID = new Map();
    #total = 0;
    #cursor = null;
    #loading = false;
    /** Bumped when the filter changes, so answers to older requests are dropped. */
    #generation = 0;
    /** The filter the shown list answers (the last valid one). */
    #filter = "";
    #headTimer = 0;
    #renderFrame = 0;
    #anchor = null;
    #viewport;
    #spacer;
    #rows = [];
    #count;

    connectedCallback() {
        if (this.#viewport) return;
        this.#count = h("p", { class: "list-count", role: "status", "aria-live": "polite" }, "loading…");
        const header = h("div", { class: "flow-row flow-header", role: "row" },
            COLUMNS.map((column) => h("span", {
                role: "columnheader", class: `c-${column.key}`, title: column.label ?? column.title,
            }, column.title)));
        this.#spacer = h("div", { class: "flow-spacer", role: "presentation" });
        this.#viewport = h("div", {
            class: "flow-viewport", role: "grid", tabindex: 0, "aria-label": "Flows", "aria-rowcount": 1,
        }, header, this.#spacer);
        this.append(this.#count, this.#viewport);
        this.#viewport.addEventListener("scroll", () => this.#scheduleRender(), { passive: true });
        this.#viewport.addEventListener("click", (event) => this.#onClick(event));
        new ResizeObserver(() => this.#scheduleRender()).observe(this.#viewport);
        store.addEventListener("filter", (event) => this.#load(event.detail));
        store.addEventListener("select", () => this.#scheduleRender());
        store.addEventListener("picked", () => this.#scheduleRender());
        liveEvents.addEventListener("flows", (event) => this.#apply(event.detail));
        liveEvents.addEventListener("reset", () => this.#load(this.#filter, true));
        this.#load(store.filter);
    }

    /** The filter the list shows (the last one the server accepted). */
    get filter() {
        return this.#filter;
    }

    /** Ids of the loaded rows, in order. */
    get ids() {
        return this.#ids;
    }

    /** Asks the server for the first page under `filter`; an invalid filter keeps the list. */
    async #load(filter, keepScroll = false) {
        const generation = ++this.#generation;
        this.setAttribute("aria-busy", "true");
        try {
            const page = await api.flows({ filter, limit: PAGE });
            if (generation !== this.#generation) return;
            this.#filter = filter;
            this.#ids = [];
            this.#byID.clear();
            this.#cursor = null;
            this.#take(page);
            if (!keepScroll) this.#viewport.scrollTop = 0;
            this.dispatchEvent(new CustomEvent("filter-result", { detail: { filter, total: this.#total } }));
        } catch (error) {
            if (generation !== this.#generation) return;
            this.dispatchEvent(new CustomEvent("filter-error", { detail: { filter, error } }));
        } finally {
            if (generation === this.#generation) this.removeAttribute("aria-busy");
        }
        this.#scheduleRender();
    }

    /** Appends a page's flows (those not already known) and keeps its cursor. */
    #take(page) {
        for (const summary of page.flows ?? []) {
            if (this.#byID.has(summary.id)) continue;
            this.#byID.set(summary.id, summary);
            this.#ids.push(summary.id);
        }
        this.#total = Math.max(Number(page.total ?? 0), this.#ids.length);
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
                const page = await api.flows({ filter: this.#filter, limit, cursor: this.#cursor });
                if (generation !== this.#generation) break;
                this.#take(page);
                this.#scheduleRender();
            }
        } catch (error) {
            store.notify(`could not load more flows: ${error.message}`, "error");
        } finally {
            this.#loading = false;
        }
    }

    /** A batch from the live stream: updates known rows; new flows go on top when they match. */
    #apply({ flows, cleared }) {
        if (cleared) {
            this.#ids = [];
            this.#byID.clear();
            this.#total = 0;
            this.#cursor = null;
        }
        const added = [];
        for (const summary of flows) {
            const known = this.#byID.get(summary.id);
            if (known) {
                this.#byID.set(summary.id, { ...known, ...summary });
            } else if (this.#filter === "") {
                if (!added.some((flow) => flow.id === summary.id)) added.push(summary);
                else added[added.findIndex((flow) => flow.id === summary.id)] = summary;
            } else {
                this.#scheduleHeadRefresh();
            }
        }
        if (added.length) {
            // The batch is in commit order; the list is newest first.
            added.reverse();
            for (const summary of added) this.#byID.set(summary.id, summary);
            this.#prepend(added.map((summary) => summary.id));
            this.#total += added.length;
        }
        if (flows.some((flow) => flow.id === store.selectedID)) {
            this.dispatchEvent(new CustomEvent("selected-changed", { detail: store.selectedID }));
        }
        this.#scheduleRender();
    }

    /** Puts `ids` on top; a reader scrolled down keeps the same rows in view. */
    #prepend(ids) {
        this.#ids = ids.concat(this.#ids);
        if (this.#viewport.scrollTop > 0) this.#viewport.scrollTop += ids.length * ROW_HEIGHT;
    }

    #scheduleHeadRefresh() {
        if (this.#headTimer) return;
        this.#headTimer = setTimeout(() => this.#refreshHead(), HEAD_REFRESH);
    }

    /** Under a filter, only the server knows which new flows match: ask for the newest page again. */
    async #refreshHead() {
        const generation = this.#generation;
        try {
            const page = await api.flows({ filter: this.#filter, limit: PAGE });
            if (generation !== this.#generation) return;
            const fresh = [];
            let insertAt = 0;
            const inserted = [];
            for (const summary of page.flows ?? []) {
                if (this.#byID.has(summary.id)) {
                    this.#byID.set(summary.id, summary);
                    const position = this.#ids.indexOf(summary.id, 0);
                    if (position >= 0 && position < PAGE * 4) insertAt = position + 1 + inserted.length;
                    continue;
                }
                this.#byID.set(summary.id, summary);
                inserted.push([insertAt, summary.id]);
                fresh.push(summary.id);
                insertAt += 1;
            }
            if (inserted.length) {
                const atTop = inserted.filter(([position]) => position === 0).length;
                for (const [position, id] of inserted) this.#ids.splice(position, 0, id);
                if (atTop && this.#viewport.scrollTop > 0) this.#viewport.scrollTop += atTop * ROW_HEIGHT;
            }
            this.#total = Math.max(Number(page.total ?? this.#total), this.#ids.length);
        } catch (error) {
            store.notify(`could not refresh the list: ${error.message}`, "error");
        } finally {
            this.#headTimer = 0;
            this.#scheduleRender();
        }
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
        const shown = this.#total === 1 ? "1 flow" : `${this.#total.toLocaleString("en")} flows`;
        return this.#filter ? `${shown} ${this.#total === 1 ? "matches" : "match"} ${this.#filter}` : shown;
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
        for (const marker of markers(summary)) classes.push(`m-${marker.key}`);
        if (id === store.selectedID) classes.push("selected");
        if (store.picked.has(id)) classes.push("picked");
        row.className = classes.filter(Boolean).join(" ");
        setSafeAttribute(row, "aria-selected", id === store.selectedID || store.picked.has(id) ? "true" : "false");
        for (let c = 0; c < COLUMNS.length; c += 1) {
            const text = COLUMNS[c].text(summary);
            if (cells[c].textContent !== text) cells[c].textContent = text;
        }
        const labels = markers(summary).map((marker) => marker.label).join(", ");
        setSafeAttribute(cells[0], "title", labels || false);
        setSafeAttribute(cells[0], "aria-label", labels || "no markers");
        setSafeAttribute(cells[4], "title", summary.url ?? false);
        setSafeAttribute(row, "title", isPending(summary) ? "pending" : false);
    }

    #onClick(event) {
        const row = event.target.closest(".flow-row[data-id]");
        if (!row) return;
        const id = row.getAttribute("data-id");
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
        const next = current < 0 ? 0 : Math.min(this.#ids.length - 1, Math.max(0, current + step));
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

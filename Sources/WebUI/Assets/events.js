// The one place that holds the live stream (`GET /api/events`, Server-Sent Events). Messages
// are gathered and handed to listeners once per animation frame, so a burst of a thousand flows
// a second costs one list update per frame, not one per message.
//
// The stream follows the list's filter (`?filter=`): the server then sends, per batch, the flows
// that match now and the ids of those that do not (`unmatched`), so a flow that starts or stops
// matching after it was first seen enters or leaves the list. Changing the filter reopens the
// stream from the last message seen before the list was fetched (`last_event_id`), so nothing
// between the list's answer and the new stream is lost.
//
// A tab hidden for `hiddenRelease` lets its stream go ("paused") and resumes after the last
// message seen when shown again. A browser gives one host six HTTP/1.1 connections for all its
// tabs, and each open stream holds one: with six tabs open, a seventh could not even load.
//
// The server serves 64 connections at once and answers more with 503, which an EventSource takes
// as final: it closes without a word of why. The page asks the server why (`#diagnose`) and, when
// it is full (other tabs, scripts reading the stream), says so and tries again after 1 s, 2 s, 4 s…
// up to 30 s, where it used to say "disconnected" (and "lost DevProxy") and never come back.

import { api } from "./api.js";

class LiveEvents extends EventTarget {
    #source = null;
    /** The filter the open stream evaluates ("" for every flow). */
    #filter = "";
    /** The id of the last message received (what a reopened stream resumes after). */
    #lastID = null;
    #pending = [];
    #unmatched = new Set();
    #cleared = false;
    #pinning = false;
    #frame = 0;
    #releaseTimer = 0;
    /** The next try after a refused stream: its timer, the countdown's, and the wait (ms) after it. */
    #retryTimer = 0;
    #countdown = 0;
    #retryDelay = 0;
    /** How long (ms) a hidden tab keeps its stream open. */
    hiddenRelease = 15000;
    /** The first wait (ms) after the server refused a stream for being full, doubled each time up to `retryMax`. */
    retryFirst = 1000;
    retryMax = 30000;

    /** Opens the stream; EventSource reconnects by itself (with `Last-Event-ID`) after a drop. */
    start() {
        if (this.#source) return;
        document.addEventListener("visibilitychange", () => this.#visibilityChanged());
        this.#open(null);
    }

    #visibilityChanged() {
        clearTimeout(this.#releaseTimer);
        this.#releaseTimer = 0;
        if (document.hidden) {
            this.#releaseTimer = setTimeout(() => this.#release(), this.hiddenRelease);
        } else if (!this.#source && !this.#retryTimer) {
            this.#open(this.#lastID);
        }
    }

    /** Closes the stream of a tab still hidden; what it gathered is handed over first. */
    #release() {
        this.#releaseTimer = 0;
        if (!document.hidden || !this.#source) return;
        this.#source.close();
        this.#source = null;
        this.#flush();
        this.#state("paused");
    }

    /** The id of the last message received; pass it to `follow` when the list was fetched after it. */
    get lastEventID() {
        return this.#lastID;
    }

    /**
     * Makes the stream evaluate `filter` (the list's, once the server accepted it), resuming after
     * message `resumeAfter`. Batches the old stream gathered are dropped: the new one sends them again.
     */
    follow(filter, resumeAfter) {
        if (filter === this.#filter && this.#source) return;
        this.#filter = filter;
        this.#source?.close();
        this.#source = null;
        this.#pending = [];
        this.#unmatched.clear();
        this.#open(resumeAfter ?? this.#lastID);
    }

    #open(resumeAfter) {
        this.#stopRetry();
        const filter = this.#filter;
        const source = new EventSource(api.paths.events(filter, resumeAfter), { withCredentials: true });
        this.#source = source;
        const onFlows = (event) => {
            if (source !== this.#source) return;
            this.#seen(event);
            this.#take(event.data);
        };
        source.addEventListener("message", onFlows);
        source.addEventListener("flows", onFlows);
        source.addEventListener("update", onFlows);
        source.addEventListener("hello", (event) => this.#seen(event));
        source.addEventListener("cleared", (event) => {
            this.#seen(event);
            this.#queue([], [], true);
        });
        // The breakpoints' board changed: `{filter, held: [ids]}` (intercept.js).
        source.addEventListener("intercept", (event) => {
            this.#seen(event);
            try {
                this.dispatchEvent(new CustomEvent("intercept", { detail: JSON.parse(event.data) }));
            } catch {
                // Not JSON: the next change, or the next fetch, says it.
            }
        });
        // The map rules changed (in this tab, another, or a script): the Rules view fetches them again.
        source.addEventListener("rules", (event) => {
            this.#seen(event);
            this.dispatchEvent(new CustomEvent("rules"));
        });
        // Missed too much while away: the list must be fetched again.
        source.addEventListener("reset", (event) => {
            this.#seen(event);
            this.dispatchEvent(new CustomEvent("reset"));
        });
        for (const name of ["verdict", "verdicts", "pinning", "report"]) {
            source.addEventListener(name, () => {
                this.#pinning = true;
                this.#schedule();
            });
        }
        source.addEventListener("open", () => {
            this.#retryDelay = 0;
            this.#state("live");
        });
        source.addEventListener("error", () => {
            if (source !== this.#source) return;
            if (source.readyState !== EventSource.CLOSED) {
                this.#state("reconnecting…");
                return;
            }
            // An answer other than the stream (a 503, a 401): EventSource gives up for good.
            this.#source = null;
            this.#diagnose(resumeAfter);
        });
    }

    /**
     * Why the stream was refused, asked of `/api/info`: full (503), the next try is scheduled;
     * answered (the room freed meanwhile), likewise; anything else (a token the server no longer
     * knows: it restarted) is "disconnected", as before.
     */
    async #diagnose(resumeAfter) {
        let status = 0;
        let message = "";
        try {
            await api.info();
            status = 200;
        } catch (error) {
            status = error.status ?? 0;
            message = error.message ?? "";
        }
        // Meanwhile the filter changed (a new stream is open) or the tab let its stream go.
        if (this.#source) return;
        if (status !== 503 && status !== 200) {
            this.#state("disconnected");
            return;
        }
        this.#retryDelay = this.#retryDelay ? Math.min(this.#retryDelay * 2, this.retryMax) : this.retryFirst;
        const delay = this.#retryDelay;
        if (status === 503) {
            this.dispatchEvent(new CustomEvent("full", { detail: { message, seconds: Math.ceil(delay / 1000) } }));
        }
        if (status === 503) {
            const due = Date.now() + delay;
            const say = () => this.#state(`server full: retrying in ${Math.max(1, Math.ceil((due - Date.now()) / 1000))} s`);
            say();
            this.#countdown = setInterval(say, 1000);
        } else {
            this.#state("reconnecting…");
        }
        this.#retryTimer = setTimeout(() => {
            this.#stopRetry();
            if (this.#source) return;
            // A hidden tab waits to be shown (`#visibilityChanged` opens it then).
            if (document.hidden) {
                this.#state("paused");
                return;
            }
            this.#open(this.#lastID ?? resumeAfter);
        }, delay);
    }

    #stopRetry() {
        clearTimeout(this.#retryTimer);
        clearInterval(this.#countdown);
        this.#retryTimer = 0;
        this.#countdown = 0;
    }

    #seen(event) {
        if (event.lastEventId) this.#lastID = event.lastEventId;
    }

    /** The filter the stream's batches answer. */
    get filter() {
        return this.#filter;
    }

    #state(state) {
        this.dispatchEvent(new CustomEvent("state", { detail: state }));
    }

    /** One message: `{flows: [summary], cleared}` or a bare array of summaries. */
    #take(data) {
        let message;
        try {
            message = JSON.parse(data);
        } catch {
            return;
        }
        if (Array.isArray(message)) {
            this.#queue(message, [], false);
        } else if (message && typeof message === "object") {
            const flows = Array.isArray(message.flows) ? message.flows : (message.id ? [message] : []);
            const unmatched = Array.isArray(message.unmatched) ? message.unmatched : [];
            this.#queue(flows, unmatched, Boolean(message.cleared || message.reset));
            if (message.verdicts || message.pinning) this.#pinning = true;
        }
    }

    /** Within a frame, a flow's latest word wins: matching (its summary) or not (its id). */
    #queue(flows, unmatched, cleared) {
        if (cleared) {
            // Whatever came before a clear is gone with it.
            this.#pending = [];
            this.#unmatched.clear();
            this.#cleared = true;
        }
        for (const flow of flows) {
            this.#unmatched.delete(flow.id);
            this.#pending.push(flow);
        }
        for (const id of unmatched) this.#unmatched.add(id);
        this.#schedule();
    }

    #schedule() {
        if (this.#frame) return;
        // rAF does not run in a hidden tab; a timer keeps the queue from growing without bound there.
        const flush = () => this.#flush();
        this.#frame = document.hidden ? setTimeout(flush, 250) : requestAnimationFrame(flush);
    }

    #flush() {
        this.#frame = 0;
        const unmatched = this.#unmatched;
        // A flow that matched earlier in the frame and then stopped matching is only unmatched.
        const flows = unmatched.size ? this.#pending.filter((flow) => !unmatched.has(flow.id)) : this.#pending;
        const cleared = this.#cleared;
        const pinning = this.#pinning;
        this.#pending = [];
        this.#unmatched = new Set();
        this.#cleared = false;
        this.#pinning = false;
        if (flows.length || unmatched.size || cleared) {
            const detail = { flows, unmatched: [...unmatched], cleared, filter: this.#filter };
            this.dispatchEvent(new CustomEvent("flows", { detail }));
        }
        if (pinning || flows.some((flow) => flow.verdict)) {
            this.dispatchEvent(new CustomEvent("pinning"));
        }
    }
}

export const liveEvents = new LiveEvents();

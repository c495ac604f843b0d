// The one place that holds the live stream (`GET /api/events`, Server-Sent Events). Messages
// are gathered and handed to listeners once per animation frame, so a burst of a thousand flows
// a second costs one list update per frame, not one per message.

import { api } from "./api.js";

class LiveEvents extends EventTarget {
    #source = null;
    #pending = [];
    #cleared = false;
    #pinning = false;
    #frame = 0;

    /** Opens the stream; EventSource reconnects by itself (with `Last-Event-ID`) after a drop. */
    start() {
        if (this.#source) return;
        const source = new EventSource(api.paths.events, { withCredentials: true });
        this.#source = source;
        const onFlows = (event) => this.#take(event.data);
        source.addEventListener("message", onFlows);
        source.addEventListener("flows", onFlows);
        source.addEventListener("update", onFlows);
        source.addEventListener("cleared", () => this.#queue([], true));
        // Missed too much while away: the list must be fetched again.
        source.addEventListener("reset", () => this.dispatchEvent(new CustomEvent("reset")));
        for (const name of ["verdict", "verdicts", "pinning", "report"]) {
            source.addEventListener(name, () => {
                this.#pinning = true;
                this.#schedule();
            });
        }
        source.addEventListener("open", () => this.#state("live"));
        source.addEventListener("error", () => {
            this.#state(source.readyState === EventSource.CLOSED ? "disconnected" : "reconnecting…");
        });
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
            this.#queue(message, false);
        } else if (message && typeof message === "object") {
            const flows = Array.isArray(message.flows) ? message.flows : (message.id ? [message] : []);
            this.#queue(flows, Boolean(message.cleared || message.reset));
            if (message.verdicts || message.pinning) this.#pinning = true;
        }
    }

    #queue(flows, cleared) {
        if (cleared) {
            // Whatever came before a clear is gone with it.
            this.#pending = [];
            this.#cleared = true;
        }
        for (const flow of flows) this.#pending.push(flow);
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
        const flows = this.#pending;
        const cleared = this.#cleared;
        const pinning = this.#pinning;
        this.#pending = [];
        this.#cleared = false;
        this.#pinning = false;
        if (flows.length || cleared) {
            this.dispatchEvent(new CustomEvent("flows", { detail: { flows, cleared } }));
        }
        if (pinning || flows.some((flow) => flow.verdict)) {
            this.dispatchEvent(new CustomEvent("pinning"));
        }
    }
}

export const liveEvents = new LiveEvents();

// "Repeat…" (Charles's and Proxyman's "Repeat Advanced"): a dialog that sends a captured request
// N times, C at once, with a delay between a lane's sends (`POST /api/flows/ID/repeat`), then
// shows its progress and summary (`GET /api/repeats/ID`): sent, done, how many of each status,
// errors by kind, the fastest, median and slowest time; Cancel sends no more (`DELETE`).

import { api } from "./api.js";
import { h, replaceChildren } from "./dom.js";
import { formatDuration } from "./format.js";
import { store } from "./store.js";

/** How often the dialog asks for progress while the repeat runs. */
const POLL_MS = 300;

/** The limits the server takes (docs/web-ui.md). */
const LIMITS = { count: [1, 1000], concurrency: [1, 50], delay_ms: [0, 60000] };

/** `{"200": 8, "429": 2}` as rows, lowest status first. */
export function statusRows(statuses) {
    return Object.entries(statuses ?? {}).sort(([a], [b]) => Number(a) - Number(b));
}

/** The summary's one line: `20 of 20 done · 200 × 8 · 429 × 12 · 2 errors`. */
export function summaryLine(state) {
    const parts = [`${state.done} of ${state.count} done`];
    if (state.sent > state.done) parts.push(`${state.sent - state.done} in flight`);
    for (const [status, count] of statusRows(state.statuses)) parts.push(`${status} × ${count}`);
    const errors = Object.values(state.errors ?? {}).reduce((sum, count) => sum + count, 0);
    if (errors) parts.push(`${errors} error${errors === 1 ? "" : "s"}`);
    return parts.join(" · ");
}

/** Opens the dialog for `flow` (its record). */
export function openRepeat(flow) {
    if (!flow.request) return;
    const dialog = document.getElementById("resend-dialog");
    let polling = null;
    const stopPolling = () => {
        if (polling) clearTimeout(polling);
        polling = null;
    };
    dialog.addEventListener("close", stopPolling, { once: true });
    const number = (name, label, value) => {
        const [min, max] = LIMITS[name];
        const input = h("input", { type: "number", name, min, max, step: 1, required: true, "aria-label": label });
        input.value = String(value);
        return h("label", { class: "field" }, h("span", {}, label), input);
    };
    const error = h("p", { class: "error-text", role: "alert" });
    const start = h("button", { type: "submit", id: "repeat-start" }, "Start");
    const form = h("form", { class: "resend repeat" },
        h("h2", { id: "repeat-title" }, "Repeat ", flow.request.method, " ", flow.request.url),
        h("div", { class: "repeat-line" },
            number("count", "Repetitions", 10), number("concurrency", "At once", 1),
            number("delay_ms", "Delay between a lane's sends (ms)", 0)),
        h("p", { class: "muted" }, "Each repetition is sent as Replay sends it: a new flow marked as a replay of this one."),
        error,
        h("div", { class: "dialog-buttons" },
            h("button", { type: "button", on: { click: () => dialog.close() } }, "Close"), start));
    form.addEventListener("submit", async (event) => {
        event.preventDefault();
        error.textContent = "";
        const options = {};
        for (const name of Object.keys(LIMITS)) options[name] = Number(form.elements[name].value);
        try {
            start.disabled = true;
            const state = await api.repeat(flow.id, options);
            showProgress(dialog, flow, state, (next) => { polling = next; });
        } catch (failure) {
            error.textContent = failure.message;
            start.disabled = false;
        }
    });
    replaceChildren(dialog, form);
    dialog.showModal();
    form.elements.count.focus();
}

/** Replaces the form with the repeat's progress, asked for every POLL_MS until it ends. */
function showProgress(dialog, flow, first, setPolling) {
    const line = h("p", { id: "repeat-summary", role: "status" });
    const statuses = h("tbody");
    const errors = h("ul", { id: "repeat-errors" });
    const times = h("p", { id: "repeat-times" });
    const error = h("p", { class: "error-text", role: "alert" });
    const cancel = h("button", { type: "button", id: "repeat-cancel" }, "Cancel repetitions");
    const links = h("div", { class: "repeat-links" });
    const state = h("span", { id: "repeat-state" });
    let current = first;
    cancel.addEventListener("click", async () => {
        cancel.disabled = true;
        try {
            render(await api.cancelRepeat(current.id));
        } catch (failure) {
            error.textContent = failure.message;
        }
    });
    const open = (id) => {
        dialog.close();
        store.select(id);
    };
    function render(next) {
        current = next;
        state.textContent = next.state;
        line.textContent = summaryLine(next);
        replaceChildren(statuses, statusRows(next.statuses).map(([status, count]) =>
            h("tr", {}, h("td", {}, status), h("td", {}, String(count)))));
        replaceChildren(errors, Object.entries(next.errors ?? {}).map(([kind, count]) =>
            h("li", {}, `${kind} × ${count}`)));
        const time = next.time_ms;
        times.textContent = time ? `time: fastest ${formatDuration(time.min)}, median ${formatDuration(time.median)}, `
            + `slowest ${formatDuration(time.max)}; all in ${formatDuration(next.elapsed_ms)}` : "";
        const running = next.state === "running";
        cancel.disabled = !running;
        const flows = next.flows ?? [];
        replaceChildren(links, flows.length === 0 ? [] : [
            h("button", { type: "button", id: "repeat-first", on: { click: () => open(flows[0]) } }, "Open the first"),
            h("button", { type: "button", id: "repeat-last", on: { click: () => open(flows[flows.length - 1]) } },
                "Open the last"),
            h("span", { class: "muted" }, `the repetitions are listed as replays of ${flow.id}`),
        ]);
    }
    const poll = async () => {
        try {
            render(await api.repeatState(current.id));
        } catch (failure) {
            error.textContent = failure.message;
            return;
        }
        if (current.state === "running" || current.state === "cancelling") {
            setPolling(setTimeout(poll, POLL_MS));
        } else {
            setPolling(null);
        }
    };
    replaceChildren(dialog, h("div", { class: "resend repeat", id: "repeat-progress" },
        h("h2", { id: "repeat-title" }, "Repeat ", flow.request.method, " ", flow.request.url, " — ", state),
        h("p", { class: "muted" }, `${first.count} times, ${first.concurrency} at once`,
            first.delay_ms ? `, ${first.delay_ms} ms between a lane's sends` : ""),
        line,
        h("table", { class: "repeat-statuses", id: "repeat-statuses" },
            h("thead", {}, h("tr", {}, h("th", {}, "Status"), h("th", {}, "Count"))), statuses),
        errors, times, links, error,
        h("div", { class: "dialog-buttons" }, cancel,
            h("button", { type: "button", id: "repeat-close", on: { click: () => dialog.close() } }, "Close"))));
    render(first);
    setPolling(setTimeout(poll, POLL_MS));
}

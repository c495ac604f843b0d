// A flow's mark and comment (mitmproxy's `m`, Proxyman's highlight colours and comments): the
// detail pane's row of colour swatches and its comment box, and the `m` key. The list shows them
// through `markers()` (flow-summary.js); every open page hears of a change on the live stream.

import { APIError, api } from "./api.js";
import { h, setSafeAttribute } from "./dom.js";
import { liveEvents } from "./events.js";
import { store } from "./store.js";

/** The colours a flow can be marked with, as the API names them. */
export const MARKS = ["red", "orange", "yellow", "green", "blue", "purple"];
/** The mark `m` toggles, as mitmweb's `m` toggles its default mark. */
const DEFAULT_MARK = "red";
/** The longest comment the server keeps (characters). */
const COMMENT_LIMIT = 2000;

/**
 * Flows' notes as last seen (a record opened in the pane, a live batch, a change made here):
 * id → {mark, comment}. A live flow without a note is not kept (a long session streams millions):
 * a flow not here has none, or was never opened (`m` then asks for it).
 */
const known = new Map();

function remember(id, { mark = null, comment = null } = {}, keepEmpty = true) {
    const note = { mark: MARKS.includes(mark) ? mark : null, comment: typeof comment === "string" ? comment : null };
    if (keepEmpty || note.mark || note.comment) known.set(id, note);
    else known.delete(id);
}

liveEvents.addEventListener("flows", (event) => {
    if (event.detail.cleared) known.clear();
    for (const summary of event.detail.flows) {
        remember(summary.id, summary, false);
        refresh(summary.id);
    }
});

/** Keeps what the API said of flow `id` (its record or summary: `mark` and `comment` when set). */
export function rememberNote(id, flow) {
    if (id && flow) remember(id, flow);
}

/** Why this session cannot be marked (a saved session that is not writable), or null. */
function refusal() {
    return store.info?.can_mark === false ? (store.info.mark_refusal ?? "this session cannot be marked") : null;
}

/**
 * The pane's marks row for flow `id`: a swatch a colour and "none" (each a toggle button naming its
 * colour), and the comment box (saved on Enter or leaving it, Escape puts it back). Built again at
 * each refresh of a running flow and merged into the one on show: its listeners read the flow and
 * its note when called.
 */
export function notePanel(id) {
    const note = known.get(id) ?? { mark: null, comment: null };
    const refused = refusal();
    const swatches = [...MARKS, null].map((mark) => h("button", {
        type: "button", class: mark ? `swatch swatch-${mark}` : "swatch swatch-none",
        "aria-label": mark ? `mark ${mark}` : "no mark", title: refused ?? (mark ? `Mark ${mark}` : "No mark"),
        "aria-pressed": String(note.mark === mark), disabled: Boolean(refused),
        on: { click: (event) => save(panelID(event.target), { mark }) },
    }, mark ? "" : "∅"));
    const comment = h("input", {
        type: "text", class: "note-comment", "aria-label": "Comment", spellcheck: "true", autocomplete: "off",
        placeholder: "Comment: Enter saves, Esc cancels", value: note.comment ?? "", readonly: Boolean(refused),
        title: refused ?? false,
        on: {
            keydown: (event) => {
                if (event.key === "Enter") {
                    event.preventDefault();
                    saveComment(event.target);
                } else if (event.key === "Escape") {
                    event.preventDefault();
                    event.stopPropagation();
                    event.target.value = known.get(panelID(event.target))?.comment ?? "";
                    event.target.blur();
                }
            },
            blur: (event) => saveComment(event.target),
        },
    });
    comment.maxLength = COMMENT_LIMIT;
    return h("div", { class: "flow-note", "data-id": id, "aria-label": "Mark and comment" },
        h("div", { class: "swatches", role: "group", "aria-label": "Mark" }, swatches),
        comment,
        h("span", { class: "note-error error-text", role: "status" }));
}

/** The flow of the marks row `element` is in. */
function panelID(element) {
    return element.closest(".flow-note")?.getAttribute("data-id") ?? null;
}

function saveComment(input) {
    const id = panelID(input);
    if (!id || input.readOnly) return;
    const text = input.value.trim();
    if (text === (known.get(id)?.comment ?? "")) return;
    save(id, { comment: text || null });
}

/** `m`: marks flow `id` red, or takes its mark away when it has one (mitmweb's `m`). */
export async function toggleMark(id) {
    if (!id) return;
    let note = known.get(id);
    if (!note) {
        try {
            remember(id, await api.flow(id, undefined, 1));
            note = known.get(id);
        } catch (error) {
            store.notify(`could not mark flow ${id}: ${error.message}`, "error");
            return;
        }
    }
    const mark = note.mark ? null : DEFAULT_MARK;
    if (await save(id, { mark })) store.notify(mark ? `marked ${mark}` : "mark removed");
}

/** Sends `change` (`{mark}` and/or `{comment}`) for flow `id`; the pages hear of it on the live stream. */
async function save(id, change) {
    if (!id) return false;
    const refused = refusal();
    if (refused) {
        store.notify(refused, "error");
        return false;
    }
    try {
        const summary = await api.mark(id, change);
        remember(id, summary);
        refresh(id);
        return true;
    } catch (error) {
        const message = error instanceof APIError ? error.message : String(error);
        for (const panel of panels(id)) panel.querySelector(".note-error").textContent = message;
        store.notify(`could not mark flow ${id}: ${message}`, "error");
        return false;
    }
}

function panels(id) {
    return [...document.querySelectorAll(".flow-note")].filter((panel) => panel.getAttribute("data-id") === id);
}

/** Shows flow `id`'s note as known now in its marks row, if on show (a comment being typed is left alone). */
function refresh(id) {
    const note = known.get(id) ?? { mark: null, comment: null };
    for (const panel of panels(id)) {
        for (const swatch of panel.querySelectorAll(".swatch")) {
            const mark = MARKS.find((name) => swatch.classList.contains(`swatch-${name}`)) ?? null;
            setSafeAttribute(swatch, "aria-pressed", String(note.mark === mark));
        }
        const input = panel.querySelector(".note-comment");
        setSafeAttribute(input, "value", note.comment ?? "");
        if (document.activeElement !== input) input.value = note.comment ?? "";
        panel.querySelector(".note-error").textContent = "";
    }
}

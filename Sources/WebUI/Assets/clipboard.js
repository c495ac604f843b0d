// Copying to the clipboard: a flow's curl command, its URL, a header's value, a body. Where the
// browser refuses (no permission, an embedded or headless browser), the text is shown selected in
// a dialog to copy by hand. The text goes into a textarea's value, never into markup.

import { api } from "./api.js";
import { h, replaceChildren } from "./dom.js";
import { formatSize } from "./format.js";
import { store } from "./store.js";

/** Bodies longer than this (characters) are not copied: the download link takes them. */
const COPY_LIMIT = 16 * 1024 * 1024;

/**
 * Copies `text`; `what` names it in the notice ("the URL", "the value of content-type").
 * `title`: the dialog's heading when the clipboard is refused.
 */
export async function copyText(text, what, title = "Copy") {
    try {
        await navigator.clipboard.writeText(text);
        store.notify(`copied ${what}`);
    } catch {
        const dialog = document.getElementById("resend-dialog");
        const area = h("textarea", { rows: 8, cols: 80, "aria-label": what, spellcheck: "false", readonly: true });
        area.value = text;
        replaceChildren(dialog, h("h2", { id: "resend-title" }, title), area,
            h("p", { class: "muted" }, "The browser did not let the page copy: press Ctrl+C (⌘C) to copy the text above."),
            h("form", { method: "dialog" }, h("button", { type: "submit" }, "Close")));
        dialog.showModal();
        area.select();
    }
}

/** Copies what `load` resolves to (a fetch), or says why it could not. */
export async function copyLoaded(load, what, title) {
    let text;
    try {
        text = await load();
    } catch (error) {
        store.notify(`could not copy ${what}: ${error.message}`, "error");
        return;
    }
    await copyText(text, what, title);
}

/**
 * A header row's copy button: `label` is what a screen reader says ("Copy the value of accept").
 * It has no text of its own (the stylesheet writes "copy"), so its cell's text stays the value.
 */
export function copyButton(label, onCopy) {
    return h("button", { type: "button", class: "copy", title: label, "aria-label": label, on: { click: onCopy } });
}

/**
 * Copies one side's body of flow `id` as text: decoded (gzip, br… undone) and read in its charset
 * (`logged.charset`, else UTF-8), as the pane shows it. A body that is not text in that charset,
 * or larger than COPY_LIMIT, is not copied: the notice says to use download.
 */
export function copyBody(id, side, logged) {
    const what = `the ${side} body`;
    if (logged.size > COPY_LIMIT) {
        store.notify(`${what} is ${formatSize(logged.size)}, too large to copy: use download`, "error");
        return Promise.resolve();
    }
    return copyLoaded(async () => {
        const bytes = await (await api.body(id, side)).arrayBuffer();
        if (bytes.byteLength > COPY_LIMIT) throw new Error(`it is ${formatSize(bytes.byteLength)}: use download`);
        let decoder;
        try {
            decoder = new TextDecoder(logged.charset || "utf-8", { fatal: true });
        } catch {
            decoder = new TextDecoder("utf-8", { fatal: true });
        }
        try {
            return decoder.decode(bytes);
        } catch {
            throw new Error("it is not text: use download");
        }
    }, what, `Copy the ${side} body`);
}

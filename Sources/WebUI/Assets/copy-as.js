// "Copy as ▾": the flow's request as code in other languages, beside the pane's Copy as curl
// (which stays the default). Each item copies `GET /api/flows/ID/export?format=…` as text; the
// code goes to the clipboard (or a textarea), never into markup. A menu button as in ARIA's
// menu-button pattern: Enter, Space or ArrowDown opens it on the first item, the arrows, Home and
// End move, Escape closes it and gives the focus back to the button.

import { api } from "./api.js";
import { copyLoaded } from "./clipboard.js";
import { h } from "./dom.js";

/** The formats, curl first, with their menu labels and what a notice calls them. */
export const COPY_FORMATS = [
    { format: "curl", label: "curl", what: "the curl command" },
    { format: "fetch", label: "fetch (browser)", what: "the fetch call" },
    { format: "node", label: "fetch (Node.js)", what: "the Node.js fetch call" },
    { format: "python", label: "Python requests", what: "the Python code" },
    { format: "httpie", label: "HTTPie", what: "the HTTPie command" },
    { format: "powershell", label: "PowerShell", what: "the PowerShell command" },
    { format: "wget", label: "wget", what: "the wget command" },
    { format: "swift", label: "Swift (URLSession)", what: "the Swift code" },
    { format: "okhttp", label: "Java (OkHttp)", what: "the Java code" },
    { format: "kotlin", label: "Kotlin (OkHttp)", what: "the Kotlin code" },
];

/**
 * The "▾" button and its menu for `flow`; disabled when the flow has no request, or when `waits`
 * says why it cannot be copied yet (a running flow's request still being received).
 */
export function copyAsMenu(flow, waits = null) {
    const menu = h("div", { class: "copy-as-menu", role: "menu", id: "copy-as-menu", hidden: true,
        "aria-label": "Copy the request as" },
    ...COPY_FORMATS.map(({ format, label, what }) => h("button", {
        type: "button", role: "menuitem", tabindex: "-1", "data-id": format,
        on: {
            click: () => {
                close(false);
                copyLoaded(() => api.exportText(flow.id, format), what, `Copy as ${label}`);
            },
        },
    }, label)));
    const button = h("button", {
        type: "button", id: "copy-as", disabled: !flow.request || Boolean(waits), "aria-label": "Copy as…",
        "aria-expanded": "false", "aria-controls": "copy-as-menu",
        title: waits ?? (flow.request ? "Copy the request as code: curl, fetch, Python, HTTPie, PowerShell, wget, Swift, "
            + "OkHttp (Java, Kotlin)"
            : "no request was read"),
        on: {
            click: () => (menu.hidden ? open(0) : close(true)),
            keydown: (event) => {
                if (event.key === "ArrowDown" || event.key === "Enter" || event.key === " ") {
                    event.preventDefault();
                    open(0);
                } else if (event.key === "ArrowUp") {
                    event.preventDefault();
                    open(COPY_FORMATS.length - 1);
                }
            },
        },
    }, "Copy as ▾");
    // A constant, and not on dom.js's allowlist of attributes copied from flows.
    button.setAttribute("aria-haspopup", "menu");
    const items = () => [...menu.querySelectorAll("[role='menuitem']")];

    function open(index) {
        menu.hidden = false;
        button.setAttribute("aria-expanded", "true");
        items()[index]?.focus();
    }

    function close(focusButton) {
        menu.hidden = true;
        button.setAttribute("aria-expanded", "false");
        if (focusButton) button.focus();
    }

    menu.addEventListener("keydown", (event) => {
        const list = items();
        const current = list.indexOf(document.activeElement);
        const moves = { ArrowDown: current + 1, ArrowUp: current - 1, Home: 0, End: list.length - 1 };
        if (event.key in moves) {
            event.preventDefault();
            list[(moves[event.key] + list.length) % list.length].focus();
        } else if (event.key === "Escape" || event.key === "Tab") {
            if (event.key === "Escape") {
                // The page's Escape closes the pane: this one closes only the menu.
                event.preventDefault();
                event.stopPropagation();
            }
            close(event.key === "Escape");
        }
    });
    // Closed when the focus or a click goes elsewhere.
    menu.addEventListener("focusout", (event) => {
        if (!menu.contains(event.relatedTarget) && event.relatedTarget !== button) close(false);
    });
    return h("span", { class: "copy-as" }, button, menu);
}

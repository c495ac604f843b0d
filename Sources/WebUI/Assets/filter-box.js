// <filter-box>: mitmproxy filter expressions, evaluated by the server. An expression the
// server refuses shows its message and marks the column; the list keeps what it showed.

import { h, setSafeAttribute } from "./dom.js";
import { store } from "./store.js";

const DEBOUNCE = 250;

class FilterBox extends HTMLElement {
    #input;
    #error;
    #timer = 0;

    connectedCallback() {
        if (this.#input) return;
        setSafeAttribute(this, "role", "search");
        this.#input = h("input", {
            type: "search", id: "filter", name: "filter", autocomplete: "off", spellcheck: "false",
            placeholder: "filter: ~d example.com & ~c 500   ( / )", "aria-describedby": "filter-error",
            title: "~d host, ~u URL, ~m method, ~c status, ~h header, ~b body, ~t type, ~q, ~s, ~e, "
                + "~marked (any mark), ~mark red, ~comment text, ~graphql (name), ~gqlerr (GraphQL errors), "
                + "~mapped (a rule changed or answered it; ~mapped mock one kind), ~replay (sent again from here), ~src client ip:port, "
                + "~dst server host:port, ~proc client process (curl, /usr/bin/curl); "
                + "& | ! and ( ); patterns are regular expressions",
        });
        this.#error = h("p", { id: "filter-error", class: "filter-error", role: "alert", hidden: true });
        this.append(h("label", { for: "filter", class: "visually-hidden" }, "Filter flows"), this.#input, this.#error);
        // The filter may come from elsewhere (the page's address, a link followed in this tab).
        this.#input.value = store.filter;
        store.addEventListener("filter", (event) => {
            if (this.#input.value.trim() !== event.detail) this.#input.value = event.detail;
        });
        this.#input.addEventListener("input", () => {
            clearTimeout(this.#timer);
            this.#timer = setTimeout(() => store.setFilter(this.#input.value.trim()), DEBOUNCE);
        });
        this.#input.addEventListener("keydown", (event) => {
            if (event.key === "Enter") {
                clearTimeout(this.#timer);
                store.setFilter(this.#input.value.trim());
            } else if (event.key === "Escape") {
                this.#input.blur();
                document.querySelector("flow-list")?.focusList();
            }
        });
        const list = document.querySelector("flow-list");
        list?.addEventListener("filter-error", (event) => this.#showError(event.detail));
        list?.addEventListener("filter-result", () => this.#clearError());
    }

    focus() {
        this.#input.focus();
        this.#input.select();
    }

    #clearError() {
        this.#error.hidden = true;
        this.#error.textContent = "";
        setSafeAttribute(this.#input, "aria-invalid", false);
    }

    /** The server's message, and the expression with a caret under the column it names. */
    #showError({ filter, error }) {
        if (filter !== this.#input.value.trim()) return;
        setSafeAttribute(this.#input, "aria-invalid", "true");
        this.#error.replaceChildren(h("span", { class: "filter-message" }, error.message));
        const column = Number(error.column);
        if (Number.isInteger(column) && column >= 1) {
            // Columns count Unicode scalars, as the server does.
            const scalars = Array.from(filter);
            const at = Math.min(column - 1, scalars.length);
            this.#error.append(h("code", { class: "filter-where", "aria-label": `column ${column}` },
                scalars.slice(0, at).join(""),
                h("mark", {}, scalars[at] ?? " "),
                scalars.slice(at + 1).join("")));
            // Marked in the input only when the user is not typing there: a selection made while
            // typing was replaced by the next key (`~u [a-z]+` lost characters as it was typed).
            if (document.activeElement !== this.#input) {
                this.#input.setSelectionRange(
                    scalars.slice(0, at).join("").length, scalars.slice(0, at + 1).join("").length);
            }
        }
        this.#error.hidden = false;
    }
}

customElements.define("filter-box", FilterBox);

// <throttle-menu>: the network conditions while the proxy runs, as Chrome DevTools' throttling
// menu, Charles's Throttle toggle and Proxyman's Network Conditions: no throttling, a preset, or
// DOWN/UP/LATENCY typed in. A change reaches connections already open (an app's keep-alive
// connection is slowed from its next request). Hidden when the page shows a saved session.

import { api } from "./api.js";
import { h } from "./dom.js";
import { store } from "./store.js";

const OFF = "";
const CUSTOM = "custom…";

/** `slow-4g` as Chrome names it: `Slow 4G`. */
function presetLabel(name) {
    return name.split("-").map((part) => (/^\d+g$/.test(part) ? part.toUpperCase() : part[0].toUpperCase() + part.slice(1)))
        .join(" ");
}

class ThrottleMenu extends HTMLElement {
    #select;
    #custom;
    #error;
    #presets = [];
    #current = null;

    connectedCallback() {
        if (this.#select) return;
        this.#select = h("select", { id: "throttle-menu", name: "throttle", title: "Network conditions for every connection" });
        this.#custom = h("input", {
            type: "text", id: "throttle-custom", name: "throttle-custom", autocomplete: "off", spellcheck: "false",
            placeholder: "1.6mbit/750kbit/150ms", hidden: true, "aria-label": "Custom profile: DOWN/UP/LATENCY",
            title: "DOWN/UP/LATENCY: rates in kbit or mbit a second, the latency in ms or s; Enter sets it, Esc cancels",
        });
        this.#error = h("span", { class: "throttle-error", role: "alert", hidden: true });
        this.append(h("label", { for: "throttle-menu", class: "visually-hidden" }, "Throttle"), this.#select,
            this.#custom, this.#error);
        this.#select.addEventListener("change", () => this.#chosen());
        this.#custom.addEventListener("keydown", (event) => {
            if (event.key === "Enter") {
                event.preventDefault();
                this.#apply(this.#custom.value.trim());
            } else if (event.key === "Escape") {
                this.#show(this.#current);
            }
        });
        store.addEventListener("info", (event) => this.#sync(event.detail ?? {}));
        if (store.info) this.#sync(store.info);
    }

    async #sync(info) {
        this.hidden = !info.can_throttle;
        if (this.hidden) return;
        if (!this.#presets.length) {
            try {
                this.#presets = (await api.throttle()).presets ?? [];
            } catch {
                // The menu still offers "no throttling" and a custom profile.
            }
        }
        this.#show(info.throttle ?? null);
    }

    /** Fills the menu and selects `throttle` (null: no throttling). */
    #show(throttle) {
        this.#current = throttle;
        const selected = throttle?.profile ?? OFF;
        const options = [h("option", { value: OFF }, "No throttling")];
        for (const preset of this.#presets) {
            options.push(h("option", { value: preset.name, title: preset.description }, presetLabel(preset.name)));
        }
        if (selected !== OFF && !this.#presets.some((preset) => preset.name === selected)) {
            options.push(h("option", { value: selected, title: throttle.description ?? selected }, selected));
        }
        options.push(h("option", { value: CUSTOM }, "Custom…"));
        this.#select.replaceChildren(...options);
        this.#select.value = selected;
        this.#select.title = throttle ? `Throttled: ${throttle.description ?? throttle.profile}`
            : "Network conditions for every connection: full speed";
        this.#custom.hidden = true;
        this.#error.hidden = true;
        this.#error.textContent = "";
    }

    #chosen() {
        const value = this.#select.value;
        if (value !== CUSTOM) {
            this.#apply(value === OFF ? null : value);
            return;
        }
        this.#custom.hidden = false;
        this.#custom.value = this.#current && !this.#presets.some((p) => p.name === this.#current.profile)
            ? this.#current.profile : "";
        this.#custom.focus();
    }

    async #apply(profile) {
        if (profile === "") return;
        try {
            const answer = await api.setThrottle({ profile });
            store.setInfo({ ...(store.info ?? {}), throttle: answer.throttle ?? undefined });
        } catch (error) {
            // The server's reason (`profile 5g: not a profile; use a preset …`); the menu keeps what is set.
            const keepTyping = profile !== null && !this.#presets.some((preset) => preset.name === profile);
            if (!keepTyping) this.#show(this.#current);
            this.#error.textContent = error.message;
            this.#error.hidden = false;
        }
    }
}

customElements.define("throttle-menu", ThrottleMenu);

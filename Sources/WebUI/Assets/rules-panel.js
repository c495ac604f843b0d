// <rules-panel>: the map rules while the proxy runs, as Charles's and Proxyman's Map Local, Map
// Remote and Block List windows: each rule with its kind, text and where it came from, an on/off
// switch, Delete for the ones added here, and a form that adds one in its option's syntax (or a
// mock: a URL regex answered with a typed status, content type and body). The server's reason
// shows beside the form when a rule does not parse.

import { api } from "./api.js";
import { h, replaceChildren, setSafeAttribute } from "./dom.js";

/** Per kind: the syntax (the text box's placeholder) and one line of help. */
export const KINDS = {
    "map-local": ["|~d api.example.com|/v1/user|/home/me/user.json",
        "answers a request whose URL matches from a local file or directory; the origin is not asked"],
    "mock": ["|~m GET|/v1/user",
        "answers a request whose URL matches (after an optional filter) with the status, type and body below"],
    "map-remote": ["|~d api.example.com|https://api.example.com|http://localhost:3000",
        "sends a request whose URL matches to the URL the replacement makes (\\1, \\g<name> for groups)"],
    "block-list": ["|~d ads.example.com|404",
        "answers a request the filter passes with the status (444: closes the connection); never sent"],
    "modify-headers": ["|~d api.example.com|X-Debug|1",
        "sets a header on the requests and responses the filter passes (an empty value removes it)"],
    "modify-body": ["|~d api.example.com|\"premium\":false|\"premium\":true",
        "replaces every match of the regex in the bodies the filter passes"],
};

const ORIGINS = { flag: "command line", config: "--config file", web: "added here" };

class RulesPanel extends HTMLElement {
    #rules = [];
    #error = null;
    #form = null;

    connectedCallback() {
        if (this.hasAttribute("role")) return;
        setSafeAttribute(this, "role", "region");
        setSafeAttribute(this, "aria-label", "Rules");
        document.getElementById("tab-rules")?.addEventListener("click", () => this.load());
        this.#form = this.#buildForm();
        this.load();
    }

    async load() {
        try {
            this.#rules = (await api.rules()).rules ?? [];
            this.#error = null;
        } catch (error) {
            this.#rules = [];
            this.#error = error.status === 409 ? "no proxy runs behind this web UI: its rules cannot change"
                : `could not load the rules: ${error.message}`;
        }
        this.#render();
    }

    #render() {
        const list = this.#rules.length
            ? h("table", { class: "rules-table" },
                h("thead", {}, h("tr", {},
                    ["On", "Kind", "Rule", "From", ""].map((name) => h("th", { scope: "col" }, name)))),
                h("tbody", {}, this.#rules.map((rule, index) => this.#row(rule, index))))
            : h("p", { class: "empty" }, "No rules: requests go where they name. Add one below.");
        replaceChildren(this,
            h("h2", {}, "Rules"),
            h("p", { class: "hint" }, "Changes apply to the next request on every connection, open or not."),
            this.#error ? h("p", { class: "error-text", role: "alert" }, this.#error) : list,
            this.#error ? null : this.#form);
    }

    /** One rule's row; `index` its place in the list (rules of one kind apply in that order). */
    #row(rule, index) {
        const toggle = h("input", {
            type: "checkbox", checked: rule.enabled, "aria-label": `${rule.kind} ${rule.text} on`,
            on: { change: (event) => this.#change(rule.id, { enabled: event.target.checked }) },
        });
        const answer = rule.answer
            ? h("div", { class: "rule-answer" }, `→ ${rule.answer.status} ${rule.answer.content_type}`,
                rule.answer.body ? h("pre", {}, rule.answer.body.slice(0, 400)) : null)
            : null;
        const remove = rule.origin === "web"
            ? h("button", { type: "button", class: "rule-delete", title: "delete this rule",
                on: { click: () => this.#remove(rule.id) } }, "Delete")
            : null;
        const up = index > 0
            ? h("button", { type: "button", class: "rule-up", title: "move up: applied before the rule above",
                "aria-label": "move up", on: { click: () => this.#change(rule.id, { position: index - 1 }) } }, "↑")
            : null;
        return h("tr", { "data-id": rule.id, class: rule.enabled ? "rule" : "rule rule-off" },
            h("td", {}, toggle), h("td", { class: "rule-kind" }, rule.kind),
            h("td", {}, h("code", { class: "rule-text" }, rule.text), answer),
            h("td", {}, ORIGINS[rule.origin] ?? rule.origin), h("td", {}, up, " ", remove));
    }

    #buildForm() {
        const kind = h("select", { id: "rule-kind", "aria-label": "kind" },
            Object.keys(KINDS).map((name) => h("option", { value: name }, name)));
        const text = h("input", { id: "rule-text", type: "text", spellcheck: "false", autocomplete: "off",
            "aria-label": "rule", required: true });
        const help = h("p", { id: "rule-help", class: "hint" });
        const status = h("input", { id: "mock-status", type: "number", min: "200", max: "599", value: "200",
            "aria-label": "status" });
        const type = h("input", { id: "mock-type", type: "text", value: "application/json",
            "aria-label": "content type", spellcheck: "false" });
        const body = h("textarea", { id: "mock-body", rows: "6", spellcheck: "false", "aria-label": "body" });
        const mock = h("div", { class: "mock-fields" },
            h("label", {}, "Status ", status), h("label", {}, "Content type ", type),
            h("label", { class: "mock-body" }, "Body", body));
        const error = h("p", { id: "rule-error", class: "error-text", role: "alert", hidden: true });
        const shown = () => {
            const [syntax, line] = KINDS[kind.value];
            setSafeAttribute(text, "placeholder", syntax);
            help.textContent = `${kind.value}: ${line}`;
            mock.hidden = kind.value !== "mock";
        };
        kind.addEventListener("change", shown);
        shown();
        const form = h("form", { class: "rule-form", "aria-label": "add a rule" },
            h("h3", {}, "Add a rule"),
            h("div", { class: "rule-line" }, kind, text, h("button", { type: "submit" }, "Add")),
            help, mock, error);
        form.addEventListener("submit", async (event) => {
            event.preventDefault();
            const rule = { kind: kind.value, text: text.value };
            if (kind.value === "mock") {
                rule.answer = { status: Number(status.value), content_type: type.value, body: body.value };
            }
            try {
                await api.addRule(rule);
                error.hidden = true;
                text.value = "";
                await this.load();
            } catch (failure) {
                error.textContent = failure.message;
                error.hidden = false;
            }
        });
        return form;
    }

    async #change(id, change) {
        try {
            await api.changeRule(id, change);
        } catch (failure) {
            this.#error = null;
            this.#showError(failure.message);
        }
        await this.load();
    }

    async #remove(id) {
        try {
            await api.removeRule(id);
        } catch (failure) {
            this.#showError(failure.message);
        }
        await this.load();
    }

    #showError(message) {
        const error = this.#form?.querySelector("#rule-error");
        if (!error) return;
        error.textContent = message;
        error.hidden = false;
    }
}

customElements.define("rules-panel", RulesPanel);

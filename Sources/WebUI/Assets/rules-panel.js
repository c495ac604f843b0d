// <rules-panel>: the map rules while the proxy runs, as Charles's and Proxyman's Map Local, Map
// Remote and Block List windows: each rule with its kind, text and where it came from, an on/off
// switch, Edit and Delete for the ones added here, and a form that adds one in its option's syntax
// (or a mock: a URL regex answered with a typed status, content type and body) or saves the one
// being edited. The server's reason shows beside the form when a rule does not parse. A change
// made in another tab or by a script arrives on the live stream (`rules`) and the list is fetched
// again. The flow pane's Mock… fills the form from a flow (mock-from-flow.js, `fillMock`).

import { api } from "./api.js";
import { h, replaceChildren, setSafeAttribute } from "./dom.js";
import { liveEvents } from "./events.js";

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

/** Why a rule from the flags or the file is switched here and not edited (the row's tooltip). */
function fixedReason(rule) {
    const source = rule.origin === "flag" ? `--${rule.kind} on the command line` : "the --config file";
    const where = rule.origin === "flag" ? "the flag" : "the file";
    return `from ${source}: switch it off here; to change it, change ${where}`
        + " and restart, or add a rule here";
}

/** The number of bytes `base64` decodes to. */
function decodedSize(base64) {
    const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
    return Math.floor(base64.length / 4) * 3 - padding;
}

class RulesPanel extends HTMLElement {
    #rules = [];
    #error = null;
    #form = null;
    /** The form's fields, by name (`kind`, `text`, `status`, `type`, `body`, …). */
    #fields = {};
    /** The rule the form edits (`{id, kind}`), or null while it adds one. */
    #editing = null;
    /** A body of bytes that are not text, sent as they are: `{base64, size}`; null for the text box's. */
    #binary = null;

    connectedCallback() {
        if (this.hasAttribute("role")) return;
        setSafeAttribute(this, "role", "region");
        setSafeAttribute(this, "aria-label", "Rules");
        document.getElementById("tab-rules")?.addEventListener("click", () => this.load());
        // Another tab, or a script, changed the rules; after a reset the stream may have missed it.
        liveEvents.addEventListener("rules", () => this.load());
        liveEvents.addEventListener("reset", () => this.load());
        this.#form = this.#buildForm();
        this.load();
    }

    /** How many loads were asked for: only the latest one's answer is shown. */
    #loads = 0;

    async load() {
        // A load the live stream asked for may be answered after a later one (this tab's own save's):
        // its older list must not replace the newer (an added rule vanished until the next change).
        const load = ++this.#loads;
        let rules = [], error = null;
        try {
            rules = (await api.rules()).rules ?? [];
        } catch (failure) {
            error = failure.status === 409 ? "no proxy runs behind this web UI: its rules cannot change"
                : `could not load the rules: ${failure.message}`;
        }
        if (load !== this.#loads) return;
        this.#rules = rules;
        this.#error = error;
        if (this.#editing && !this.#error && !this.#rules.some((rule) => rule.id === this.#editing.id)) {
            const gone = this.#editing.id;
            this.#reset();
            this.#showError(`rule ${gone} was deleted meanwhile (in another tab or by a script)`);
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
            h("p", { class: "hint" }, "Changes apply to the next request on every connection, open or not, "
                + "and show in every open page."),
            this.#error ? h("p", { class: "error-text", role: "alert" }, this.#error) : list,
            this.#error ? null : this.#form);
    }

    /** One rule's row; `index` its place in the list (rules of one kind apply in that order). */
    #row(rule, index) {
        const toggle = h("input", {
            type: "checkbox", checked: rule.enabled, "aria-label": `${rule.kind} ${rule.text} on`,
            on: { change: (event) => this.#change(rule.id, { enabled: event.target.checked }) },
        });
        const body = rule.answer?.body_base64 !== undefined
            ? h("p", { class: "muted rule-binary" }, `binary body, ${decodedSize(rule.answer.body_base64)} bytes`)
            : rule.answer?.body ? h("pre", {}, rule.answer.body.slice(0, 400)) : null;
        const answer = rule.answer
            ? h("div", { class: "rule-answer" }, `→ ${rule.answer.status} ${rule.answer.content_type}`, body)
            : null;
        const web = rule.origin === "web";
        const edit = web
            ? h("button", { type: "button", class: "rule-edit", title: "load this rule into the form below",
                on: { click: () => this.#edit(rule) } }, "Edit")
            : null;
        const remove = web
            ? h("button", { type: "button", class: "rule-delete", title: "delete this rule",
                on: { click: () => this.#remove(rule.id) } }, "Delete")
            : null;
        const up = index > 0
            ? h("button", { type: "button", class: "rule-up", title: "move up: applied before the rule above",
                "aria-label": "move up", on: { click: () => this.#change(rule.id, { position: index - 1 }) } }, "↑")
            : null;
        const editing = this.#editing?.id === rule.id;
        const classes = `${rule.enabled ? "rule" : "rule rule-off"}${editing ? " rule-editing" : ""}`;
        return h("tr", { "data-id": rule.id, class: classes },
            h("td", {}, toggle), h("td", { class: "rule-kind" }, rule.kind),
            h("td", {}, h("code", { class: "rule-text" }, rule.text), answer),
            h("td", web ? {} : { class: "rule-fixed", title: fixedReason(rule) }, ORIGINS[rule.origin] ?? rule.origin),
            h("td", {}, up, " ", edit, " ", remove));
    }

    #buildForm() {
        const fields = this.#fields;
        fields.kind = h("select", { id: "rule-kind", "aria-label": "kind" },
            Object.keys(KINDS).map((name) => h("option", { value: name }, name)));
        fields.text = h("input", { id: "rule-text", type: "text", spellcheck: "false", autocomplete: "off",
            "aria-label": "rule", required: true });
        fields.help = h("p", { id: "rule-help", class: "hint" });
        fields.note = h("p", { id: "mock-note", class: "hint", hidden: true });
        fields.status = h("input", { id: "mock-status", type: "number", min: "200", max: "599", value: "200",
            "aria-label": "status" });
        fields.type = h("input", { id: "mock-type", type: "text", value: "application/json",
            "aria-label": "content type", spellcheck: "false" });
        fields.body = h("textarea", { id: "mock-body", rows: "6", spellcheck: "false", "aria-label": "body" });
        fields.binaryText = h("span", {});
        fields.binary = h("p", { id: "mock-binary", class: "mock-binary", hidden: true }, fields.binaryText, " ",
            h("button", { type: "button", id: "mock-binary-replace", title: "type a text body instead of these bytes",
                on: { click: () => this.#setBinary(null) } }, "Replace with text"));
        fields.mock = h("div", { class: "mock-fields" },
            h("label", {}, "Status ", fields.status), h("label", {}, "Content type ", fields.type),
            h("label", { class: "mock-body" }, "Body", fields.body), fields.binary);
        fields.error = h("p", { id: "rule-error", class: "error-text", role: "alert", hidden: true });
        fields.heading = h("h3", {}, "Add a rule");
        fields.submit = h("button", { type: "submit", id: "rule-submit" }, "Add");
        fields.cancel = h("button", { type: "button", id: "rule-cancel", hidden: true,
            title: "leave the rule as it is", on: { click: () => this.#reset() } }, "Cancel");
        fields.kind.addEventListener("change", () => this.#shown());
        this.#shown();
        const form = h("form", { class: "rule-form", "aria-label": "add a rule" },
            fields.heading,
            h("div", { class: "rule-line" }, fields.kind, fields.text, fields.submit, fields.cancel),
            fields.help, fields.note, fields.mock, fields.error);
        form.addEventListener("submit", (event) => {
            event.preventDefault();
            this.#save();
        });
        return form;
    }

    /** Shows the kind's syntax, help and (for a mock) the answer's fields. */
    #shown() {
        const { kind, text, help, mock } = this.#fields;
        const [syntax, line] = KINDS[kind.value];
        setSafeAttribute(text, "placeholder", syntax);
        help.textContent = `${kind.value}: ${line}`;
        mock.hidden = kind.value !== "mock";
    }

    /** Sets the body to bytes sent as they are (`{base64, size}`), or back to the text box (null). */
    #setBinary(binary) {
        const { body, binary: shown, binaryText } = this.#fields;
        this.#binary = binary;
        shown.hidden = !binary;
        body.hidden = Boolean(binary);
        body.closest("label").hidden = Boolean(binary);
        binaryText.textContent = binary
            ? `binary body, ${binary.size.toLocaleString("en-US")} bytes: sent as recorded` : "";
        if (!binary) body.value = "";
    }

    /** Adds the rule the form holds, or saves the one it edits (its switch and place kept). */
    async #save() {
        const { kind, text, status, type, body, error } = this.#fields;
        const rule = { text: text.value };
        if (kind.value === "mock") {
            rule.answer = { status: Number(status.value), content_type: type.value };
            if (this.#binary) rule.answer.body_base64 = this.#binary.base64;
            else rule.answer.body = body.value;
        }
        try {
            if (this.#editing) {
                await api.changeRule(this.#editing.id, rule);
                this.#reset();
            } else {
                await api.addRule({ kind: kind.value, ...rule });
                // The kind and the answer stay, for the next rule like it; the heading no longer
                // names the flow the mock came from.
                text.value = "";
                this.#fields.heading.textContent = "Add a rule";
                this.#fields.note.hidden = true;
                if (this.#binary) this.#setBinary(null);
            }
            error.hidden = true;
            await this.load();
        } catch (failure) {
            error.textContent = failure.message;
            error.hidden = false;
        }
    }

    /** Loads `rule` (one added here) into the form; saving rewrites it, Cancel leaves it. */
    #edit(rule) {
        this.#reset();
        const { kind, text, status, type, body, heading, submit, cancel, note } = this.#fields;
        this.#editing = { id: rule.id, kind: rule.kind };
        kind.value = rule.kind;
        kind.disabled = true;
        text.value = rule.text;
        if (rule.answer) {
            status.value = String(rule.answer.status);
            type.value = rule.answer.content_type;
            if (rule.answer.body_base64 !== undefined) {
                this.#setBinary({ base64: rule.answer.body_base64, size: decodedSize(rule.answer.body_base64) });
            } else {
                body.value = rule.answer.body ?? "";
            }
        }
        heading.textContent = `Edit rule ${rule.id} (${rule.kind})`;
        submit.textContent = "Save";
        cancel.hidden = false;
        note.hidden = true;
        this.#shown();
        this.#render();
        text.focus();
        this.#form.scrollIntoView?.({ block: "nearest" });
    }

    /**
     * Fills the mock form (mock-from-flow.js, the flow pane's Mock…): `{text, status, contentType,
     * body, binary: {base64, size} | null, note}`. Nothing is added until it is saved.
     */
    fillMock(draft) {
        this.#reset();
        const { kind, text, status, type, body, note } = this.#fields;
        kind.value = "mock";
        text.value = draft.text;
        status.value = String(draft.status ?? 200);
        type.value = draft.contentType ?? "";
        body.value = draft.body ?? "";
        if (draft.binary) this.#setBinary(draft.binary);
        note.textContent = draft.note ?? "";
        note.hidden = !draft.note;
        this.#shown();
        this.#fields.heading.textContent = "Add a mock from the flow";
        text.focus();
    }

    /** Back to adding: an empty form, the kind's choice free again. */
    #reset() {
        const { kind, text, status, type, body, heading, submit, cancel, note } = this.#fields;
        const wasEditing = this.#editing !== null;
        this.#editing = null;
        this.#setBinary(null);
        kind.disabled = false;
        text.value = "";
        status.value = "200";
        type.value = "application/json";
        body.value = "";
        heading.textContent = "Add a rule";
        submit.textContent = "Add";
        cancel.hidden = true;
        note.hidden = true;
        note.textContent = "";
        if (wasEditing) this.#render();
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
        const error = this.#fields.error;
        if (!error) return;
        error.textContent = message;
        error.hidden = false;
    }
}

customElements.define("rules-panel", RulesPanel);

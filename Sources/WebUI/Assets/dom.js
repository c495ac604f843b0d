// Building DOM nodes without markup: every string becomes a text node, and attributes go
// through an allowlist, so captured content can never turn into HTML, a script or a link.

const SAFE_ATTRIBUTES = new Set([
    "id", "class", "role", "title", "tabindex", "type", "name", "value", "for", "colspan", "hidden",
    "disabled", "checked", "placeholder", "spellcheck", "autocomplete", "rows", "cols", "download",
    "aria-label", "aria-labelledby", "aria-describedby", "aria-selected", "aria-expanded", "aria-controls",
    "aria-live", "aria-rowcount", "aria-rowindex", "aria-colindex", "aria-busy", "aria-invalid",
    "aria-hidden", "aria-level", "aria-pressed", "aria-current", "aria-sort", "data-id", "data-col", "data-tab",
    "datetime", "open", "method", "scope", "alt", "required", "readonly", "min", "max", "step", "inputmode",
]);

/**
 * Sets `name` on `element` when it is on the allowlist; throws otherwise, so a mistake shows in
 * tests rather than as an injection point.
 */
export function setSafeAttribute(element, name, value) {
    if (!SAFE_ATTRIBUTES.has(name)) throw new Error(`attribute ${name} is not on the allowlist`);
    if (value === false || value === null || value === undefined) {
        element.removeAttribute(name);
    } else {
        element.setAttribute(name, value === true ? "" : String(value));
    }
}

/**
 * `h("td", {class: "x", on: {click}}, "text", child)`: an element with safe attributes, event
 * listeners and children; strings and numbers become text nodes.
 */
export function h(tag, props = {}, ...children) {
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(props || {})) {
        if (name === "on") {
            for (const [event, listener] of Object.entries(value)) element.addEventListener(event, listener);
        } else {
            setSafeAttribute(element, name, value);
        }
    }
    append(element, children);
    return element;
}

/** Appends children (nodes, strings, numbers, arrays of them; null and false are skipped). */
export function append(parent, children) {
    for (const child of children.flat(Infinity)) {
        if (child === null || child === undefined || child === false) continue;
        parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return parent;
}

/** Replaces every child of `parent`. */
export function replaceChildren(parent, ...children) {
    parent.replaceChildren();
    return append(parent, children);
}

/**
 * A link to one of the UI's own API routes (a download or an export): the path must start with
 * `/api/`, so a captured URL can never become a link.
 */
export function apiLink(path, label, props = {}) {
    if (!path.startsWith("/api/")) throw new Error("links go to the UI's own API only");
    const link = h("a", props, label);
    link.setAttribute("href", path);
    return link;
}

/** A term/description list from `[label, value]` pairs, skipping empty values. */
export function definitionList(pairs, className = "facts") {
    const list = h("dl", { class: className });
    for (const [label, value] of pairs) {
        if (value === null || value === undefined || value === "") continue;
        append(list, [h("dt", {}, label), h("dd", {}, value)]);
    }
    return list;
}

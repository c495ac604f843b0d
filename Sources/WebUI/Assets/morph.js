// Updating a part of the page in place: a freshly built tree is merged into the one on show, node
// by node, so what did not change stays the very same node. A text selection in it, the focus, an
// element's scroll position and the caret in an input then survive an update (a running flow's
// detail pane is rebuilt twice a second). Nothing here reads captured content as markup: the
// fresh tree was built with `h()`, and its attributes and text are copied as they are.

/**
 * Makes `target`'s children match `source`'s, keeping each child of `target` that is of the same
 * kind as the one in its place (`sameKind`) and merging into it; the rest of `source`'s children
 * are moved over, with their listeners. `source` is left empty.
 *
 * A kept element keeps its own event listeners: those must not hold on to the data they were
 * built from (read the current state when called).
 */
export function morphChildren(target, source) {
    let current = target.firstChild;
    for (const incoming of [...source.childNodes]) {
        const match = findKind(current, incoming);
        if (match) {
            // Nodes skipped over have no counterpart left in this position.
            while (current !== match) {
                const skipped = current;
                current = current.nextSibling;
                skipped.remove();
            }
            morphNode(match, incoming);
            current = match.nextSibling;
        } else {
            target.insertBefore(incoming, current);
        }
    }
    while (current) {
        const rest = current;
        current = current.nextSibling;
        rest.remove();
    }
}

/** How far ahead among the old siblings a node of the incoming one's kind is looked for. */
const LOOKAHEAD = 3;

/** `current` or one of its next few siblings when of `incoming`'s kind, else null. */
function findKind(current, incoming) {
    let node = current;
    for (let step = 0; node && step <= LOOKAHEAD; step += 1, node = node.nextSibling) {
        if (sameKind(node, incoming)) return node;
    }
    return null;
}

/**
 * Whether `old` can take `incoming`'s content: text for text; an element of the same tag, `id`,
 * `class` and `aria-label`. A custom element (`line-view`) is never merged: it holds state of its
 * own (a worker, what it has drawn) that its attributes do not say.
 */
function sameKind(old, incoming) {
    if (old.nodeType !== incoming.nodeType) return false;
    if (old.nodeType === Node.TEXT_NODE) return true;
    if (old.nodeType !== Node.ELEMENT_NODE || old.tagName !== incoming.tagName) return false;
    if (old.tagName.includes("-")) return false;
    return ["id", "class", "aria-label"].every((name) => old.getAttribute(name) === incoming.getAttribute(name));
}

function morphNode(old, incoming) {
    if (old.nodeType === Node.TEXT_NODE) {
        if (old.data === incoming.data) return;
        // Text that grew (a body so far) is appended to: a selection in the part that was there stays.
        if (incoming.data.startsWith(old.data)) old.appendData(incoming.data.slice(old.data.length));
        else old.data = incoming.data;
        return;
    }
    for (const { name, value } of [...incoming.attributes]) {
        if (old.getAttribute(name) !== value) old.setAttribute(name, value);
    }
    for (const { name } of [...old.attributes]) {
        if (!incoming.hasAttribute(name)) old.removeAttribute(name);
    }
    morphChildren(old, incoming);
}

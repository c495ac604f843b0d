// The page's address says what it shows, so that a link, a bookmark or a reload opens the same
// view: `#flow=ID` (the flow in the detail pane), `filter=EXPR` (the list's filter), `sort=-size`
// (the list's column sort), `view=pinning`, `view=rules` or `view=ca` (the tab; the flows by default) and
// `compare=BASE,OTHER` (two flows compared side by side, compare.js), as hash parameters that never
// reach the server. The address follows the page with `history.replaceState` (no history entry
// for each flow looked at), and an address typed or pasted into the tab is followed (`hashchange`).
// The sign-in token is never part of it (`api.js` takes it out of the address first).

import { store } from "./store.js";

const VIEWS = ["flows", "pinning", "rules", "ca"];

/** What the address asks for: `{view, flow, filter, sort, compare}`, each null when it does not say. */
export function readLocation() {
    const params = new URLSearchParams(window.location.hash.replace(/^#/, ""));
    const view = params.get("view");
    return {
        view: VIEWS.includes(view) ? view : null,
        flow: params.get("flow") || null,
        filter: params.get("filter"),
        sort: params.get("sort"),
        compare: comparedPair(params.get("compare")),
    };
}

/** `BASE,OTHER` as the two ids, or null when it does not name two. */
function comparedPair(value) {
    const ids = (value ?? "").split(",");
    return ids.length === 2 && ids[0] && ids[1] ? ids : null;
}

let currentView = "flows";
let showView = () => {};

/** The address of what the page shows now. */
function address() {
    const params = new URLSearchParams();
    if (currentView !== "flows") params.set("view", currentView);
    if (store.selectedID) params.set("flow", store.selectedID);
    if (store.filter) params.set("filter", store.filter);
    if (store.sort) params.set("sort", store.sort);
    let hash = params.toString();
    // The comma stays a comma (URLSearchParams would write %2C), as the address is typed and read.
    if (store.comparing) hash += `${hash ? "&" : ""}compare=${store.comparing.map(encodeURIComponent).join(",")}`;
    return window.location.pathname + window.location.search + (hash ? `#${hash}` : "");
}

function write() {
    const next = address();
    if (next !== window.location.pathname + window.location.search + window.location.hash) {
        window.history.replaceState(null, "", next);
    }
}

/** Shows what `wanted` (from `readLocation`) asks for; what it does not name stays as it is, but
 * for the flow: an address without one closes the detail pane. */
function apply(wanted) {
    if (wanted.view && wanted.view !== currentView) showView(wanted.view);
    if (wanted.filter !== null && wanted.filter !== store.filter) store.setFilter(wanted.filter);
    if (wanted.sort !== null && wanted.sort !== store.sort) store.setSort(wanted.sort);
    if (wanted.flow !== store.selectedID) store.select(wanted.flow);
    store.setComparing(wanted.compare);
}

/**
 * Opens what the address names, then keeps the address up to date. `show(view)` switches tabs;
 * the page calls `viewShown(view)` whenever the tab changes.
 */
export function followLocation(show) {
    showView = show;
    apply(readLocation());
    store.addEventListener("select", write);
    store.addEventListener("filter", write);
    store.addEventListener("sort", write);
    store.addEventListener("compare", write);
    window.addEventListener("hashchange", () => apply(readLocation()));
    write();
}

/** Tells the address which tab is on show. */
export function viewShown(view) {
    currentView = view;
    write();
}

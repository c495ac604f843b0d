// The page shell: views, header actions, keyboard, the status line. Components do the rest.

import { api } from "./api.js";
import { apiLink, setSafeAttribute } from "./dom.js";
import { liveEvents } from "./events.js";
import { loadCA } from "./ca-panel.js";
import { replayFlow } from "./flow-detail.js";
import { followLocation, viewShown } from "./location.js";
import { store } from "./store.js";
import "./filter-box.js";
import { abortHeld, resumeAllHeld, resumeHeld } from "./intercept.js";
import { toggleMark } from "./marks.js";
import { openNewRequest } from "./new-request.js";
import { compareFrom } from "./compare.js";
import "./flow-list.js";
import "./throttle-menu.js";
import "./pinning-panel.js";
import "./wireguard-panel.js";
import "./rules-panel.js";

const $ = (id) => document.getElementById(id);

function setupViews() {
    const tabs = ["flows", "pinning", "rules", "ca"];
    const show = (name) => {
        for (const other of tabs) {
            setSafeAttribute($(`tab-${other}`), "aria-selected", String(other === name));
            $(`view-${other}`).hidden = other !== name;
        }
        viewShown(name);
    };
    for (const name of tabs) $(`tab-${name}`).addEventListener("click", () => show(name));
    // The address names the tab, the flow and the filter to open (a link, a reload).
    followLocation(show);
}

/** Clicks a temporary same-origin link: exports and downloads go through the cookie. */
function download(path, filename) {
    const link = apiLink(path, "download", { download: filename });
    document.body.append(link);
    link.click();
    link.remove();
}

function setupActions() {
    const list = document.querySelector("flow-list");
    const exportSelected = $("export-selected");
    store.addEventListener("picked", () => {
        exportSelected.disabled = store.picked.size === 0;
        exportSelected.textContent = store.picked.size
            ? `Export ${store.picked.size} selected as HAR` : "Export selected as HAR";
    });
    exportSelected.addEventListener("click", () => download(api.paths.harForIDs([...store.picked]), "selection.har"));
    $("export-filtered").addEventListener("click", () => {
        download(api.paths.harForFilter(list.filter), "flows.har");
        // The server exports at most 10,000 (the newest); the archive's comment says so too.
        if (list.total > 10000) {
            store.notify(`exported the newest 10,000 of ${list.total} flows: narrow the filter to export the others`);
        }
    });
    // Two clicks, no confirm(): a modal prompt would block the page and tests watch for dialogs.
    const clear = $("clear-list");
    let armed = 0;
    clear.addEventListener("click", async () => {
        if (!armed) {
            clear.textContent = "Click again to clear";
            armed = setTimeout(() => {
                armed = 0;
                clear.textContent = "Clear";
            }, 3000);
            return;
        }
        clearTimeout(armed);
        armed = 0;
        clear.textContent = "Clear";
        try {
            await api.clear();
            store.setPicked([]);
            store.select(null);
            store.notify("cleared the list");
        } catch (error) {
            store.notify(`could not clear: ${error.message}`, "error");
        }
    });
    store.addEventListener("info", () => {
        clear.disabled = store.readOnly;
    });
    // A request written or pasted as curl: only where a proxy runs to send it.
    const compose = $("new-request");
    compose.addEventListener("click", () => openNewRequest());
    store.addEventListener("info", (event) => {
        compose.hidden = !event.detail?.replay;
    });
}

function isTyping(target) {
    return target instanceof HTMLElement &&
        (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

function setupKeyboard() {
    const list = document.querySelector("flow-list");
    const detail = document.querySelector("flow-detail");
    document.addEventListener("keydown", (event) => {
        if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
        if (document.querySelector("dialog[open]")) return;
        // The comparison covers the list and the pane: Esc closes it, the list's keys wait for it.
        if (store.comparing) {
            if (event.key === "Escape") {
                event.preventDefault();
                store.setComparing(null);
            }
            return;
        }
        const flowsShown = !$("view-flows").hidden;
        // Inside the detail pane the arrows scroll it (a long body), not the list's selection.
        const inDetail = Boolean(event.target instanceof Element && event.target.closest("flow-detail"));
        if (inDetail && ["ArrowDown", "ArrowUp", "j", "k", "PageDown", "PageUp", "Home", "End"].includes(event.key)) return;
        switch (event.key) {
        case "/":
            event.preventDefault();
            document.querySelector("filter-box").focus();
            break;
        case "j":
        case "ArrowDown":
            if (!flowsShown) return;
            event.preventDefault();
            list.move(1);
            break;
        case "k":
        case "ArrowUp":
            if (!flowsShown) return;
            event.preventDefault();
            list.move(-1);
            break;
        case "PageDown":
        case "PageUp":
            if (!flowsShown) return;
            event.preventDefault();
            list.move(event.key === "PageDown" ? list.pageRows : -list.pageRows);
            break;
        case "ArrowLeft":
        case "ArrowRight":
            // The open flow's tabs (Request, Response, …), as in mitmweb; inside the panel the
            // arrows scroll it (a long line of a body).
            if (!flowsShown || !store.selectedID || event.target.closest?.(".detail-panel, filter-box")) return;
            event.preventDefault();
            detail.stepTab(event.key === "ArrowRight" ? 1 : -1);
            break;
        case "Home":
        case "End":
            // As in mitmweb and a list box: the first flow, or the last (the pages down to it load).
            if (!flowsShown) return;
            event.preventDefault();
            list.moveTo(event.key === "Home" ? 0 : Infinity);
            break;
        case "Enter":
            if (!flowsShown || !store.selectedID || event.target.closest?.("button, a")) return;
            event.preventDefault();
            detail.focusPane();
            break;
        case "Escape":
            if (store.selectedID) {
                store.select(null);
                list.focusList();
            }
            break;
        case "r":
            if (store.selectedID) replayFlow(store.selectedID);
            break;
        // A new request (Proxyman's Compose): `n`, as the toolbar's button.
        case "n":
            if (!store.info?.replay) return;
            event.preventDefault();
            openNewRequest();
            break;
        // As in mitmweb: `m` marks the selected flow (red), or takes its mark away.
        case "m":
            if (!flowsShown || !store.selectedID) return;
            event.preventDefault();
            toggleMark(store.selectedID);
            break;
        // As Proxyman's Diff: `c` makes the selected flow the base of a comparison, and on another
        // flow opens the comparison of the base with it (on the base itself, unsets it).
        case "c":
            if (!flowsShown || !store.selectedID) return;
            event.preventDefault();
            compareFrom(store.selectedID);
            break;
        // As Proxyman's Map Local from a flow: `M` opens the Rules view's mock form filled from the
        // selected flow (the pane's Mock… button).
        case "M":
            if (!flowsShown || !store.selectedID || !$("mock-from-flow") || $("mock-from-flow").disabled) return;
            event.preventDefault();
            $("mock-from-flow").click();
            break;
        // Breakpoints, as in mitmweb: `a` resumes the selected held request or response (with the
        // editor's changes, as its Resume button sends them), `A` every held one, `x` aborts it.
        case "a":
            if (!store.isHeld(store.selectedID)) return;
            event.preventDefault();
            if ($("intercept-resume")) $("intercept-resume").click();
            else resumeHeld(store.selectedID);
            break;
        case "A":
            if (!store.intercept.held.length) return;
            event.preventDefault();
            resumeAllHeld();
            break;
        case "x":
            if (!store.isHeld(store.selectedID)) return;
            event.preventDefault();
            abortHeld(store.selectedID);
            break;
        default:
        }
    });
}

function setupStatus() {
    const notice = $("notice");
    let timer = 0;
    store.addEventListener("notice", (event) => {
        notice.textContent = event.detail.message;
        notice.className = `notice ${event.detail.kind}`;
        notice.hidden = false;
        clearTimeout(timer);
        timer = setTimeout(() => {
            notice.hidden = true;
        }, 6000);
    });
    // A proxy that stopped, or restarted (a new run has a new token and maybe a new port): the
    // page says what to do instead of showing the old run's flows under "disconnected".
    let failures = 0;
    // The server refused the stream for being full: said once until the stream is live again.
    let fullSaid = false;
    liveEvents.addEventListener("full", (event) => {
        if (fullSaid) return;
        fullSaid = true;
        store.notify(`${event.detail.message || "the web UI is serving all the connections it can"} (other tabs or ` +
            "scripts hold its live streams): this tab tries again on its own, less often each time; close a tab " +
            "to make room", "error");
    });
    liveEvents.addEventListener("state", (event) => {
        const full = event.detail.startsWith("server full");
        $("connection-state").textContent = event.detail;
        $("connection-state").className = full ? "state-full" : `state-${event.detail.replace(/\W/g, "")}`;
        if (event.detail === "live" || event.detail === "paused") {
            // Paused: a tab hidden for a while let its stream go (events.js); shown, it resumes.
            failures = 0;
            fullSaid = false;
            return;
        }
        // A full server is not a lost one: the countdown says when the next try is.
        if (full) return;
        failures += 1;
        if (event.detail === "disconnected" || failures === 3) {
            store.notify("lost DevProxy: it stopped, or restarted with a new token. Run it again and open the "
                + "\"web ui:\" link it prints; the flows shown here are the earlier run's", "error");
        }
    });
    store.addEventListener("info", (event) => {
        const info = event.detail ?? {};
        const parts = [];
        if (info.version) parts.push(`DevProxy ${info.version}`);
        const proxy = info.proxy ?? info.listeners ?? info.listen;
        // `devproxy web FILE` proxies nothing: its empty list of listeners is no "proxy ·" part.
        const listening = Array.isArray(proxy) ? proxy.map((p) => p.address ?? p).filter(Boolean).join(", ") : proxy;
        if (listening) parts.push(`proxy ${listening}`);
        if (info.session) parts.push(`session ${info.session}`);
        if (store.readOnly) parts.push("read-only");
        $("info-line").textContent = parts.join(" · ");
        // A session store that could not write (a full disk): its flows are not in this view.
        const storeError = $("store-error");
        storeError.hidden = !info.store_error;
        storeError.textContent = info.store_error
            ? `The session store could not write some flows (${info.store_error}): they are missing from this ` +
              "list and from the saved session."
            : "";
        // `devproxy web FILE` skipped records it could not read: said here as on its terminal.
        const imported = info.import;
        const importNote = $("import-note");
        importNote.hidden = !(imported?.skipped > 0);
        importNote.textContent = importNote.hidden ? "" : importNoteText(imported);
        showThrottle(info.throttle);
    });
}

/** `devproxy run --throttle`: a marker in the top bar, so a slow app is not blamed on its backend;
 * its tooltip says which connections (`--throttle-hosts`). Nothing when the proxy does not throttle. */
function showThrottle(throttle) {
    const marker = $("throttle-state");
    const description = throttle?.description ?? throttle?.profile;
    marker.hidden = !description;
    if (marker.hidden) {
        marker.textContent = "";
        marker.removeAttribute("title");
        return;
    }
    const hosts = Array.isArray(throttle.hosts) ? throttle.hosts.filter((host) => typeof host === "string") : [];
    marker.textContent = `⏱ throttled: ${description}`;
    marker.title = `throttle ${throttle.profile ?? description}: ` +
        (hosts.length ? `only connections to ${hosts.join(", ")} are slowed` : "every connection is slowed") +
        (store.info?.can_throttle ? "; choose No throttling in the menu beside it for full speed"
            : "; run without --throttle for full speed");
}

/** What the page says of an import that skipped records: how many, and the first with its reason. */
function importNoteText(imported) {
    const first = imported.first_skipped ?? {};
    const unit = first.entry !== undefined ? "entry" : "line";
    const units = imported.skipped === 1 ? unit : unit === "entry" ? "entries" : "lines";
    const where = first[unit] !== undefined ? ` (the first, ${unit} ${first[unit]}: ${first.reason})` : "";
    return `Imported ${imported.flows} flow${imported.flows === 1 ? "" : "s"} from ${imported.file}; ` +
        `${imported.skipped} ${units} could not be read and ${imported.skipped === 1 ? "was" : "were"} skipped${where}.`;
}

/** Asks for the server's info again every few seconds while a proxy runs, so that a session store
 * that starts failing (a full disk) is said at once rather than at the next reload. Only a change
 * of that is passed on: an `info` event redraws the CA panel, and a pin being selected there. */
function watchInfo() {
    setInterval(async () => {
        if (store.readOnly) return;
        try {
            const info = await api.info();
            // Another tab (or a script) may have changed the throttle.
            if ((info.store_error ?? null) !== (store.info?.store_error ?? null) ||
                JSON.stringify(info.throttle ?? null) !== JSON.stringify(store.info?.throttle ?? null)) store.setInfo(info);
        } catch {
            // A server that went away shows in the connection state.
        }
    }, 5000);
}

async function start() {
    setupViews();
    setupActions();
    setupKeyboard();
    setupStatus();
    liveEvents.start();
    loadCA();
    try {
        store.setInfo(await api.info());
    } catch (error) {
        store.notify(`could not load the proxy's info: ${error.message}`, "error");
    }
    watchInfo();
    try {
        store.errorKinds = await api.errorKinds();
    } catch {
        // The error banner then shows the kind and message without the explanation.
    }
}

start();

// <pinning-panel>: per host and persona the live `qa verdict` (enforced, report-only, not
// pinned, debuggable…) as a grid of chips, and the captured pin-failure reports beside the
// flows that caused them. A chip or a report opens its evidence flows.

import { api } from "./api.js";
import { definitionList, h, replaceChildren, setSafeAttribute } from "./dom.js";
import { liveEvents } from "./events.js";
import { formatClock } from "./format.js";
import { store } from "./store.js";

/** Opens flow `id` in the Flows view. */
function openFlow(id) {
    document.getElementById("tab-flows")?.click();
    store.select(id);
}

function flowButton(id, label = id) {
    return h("button", { type: "button", class: "link", title: `open flow ${id}`, on: { click: () => openFlow(id) } },
        label);
}

/** A verdict's evidence ids (`flows` or `reports`), top-level as the API sends them or under `evidence`. */
function evidence(verdict, kind) {
    return verdict[kind] ?? verdict.evidence?.[kind] ?? [];
}

/**
 * Who signed the chain a report sent, as `devproxy reports` names it: the engineer's email (their
 * intermediate), "QA alternate root" (the `unpinned` persona's chain), or the team root; each with
 * its serial.
 */
function signerText(signer) {
    if (!signer) return "";
    if (signer.qa_alternate_root) return `QA alternate root ${signer.serial}`;
    return signer.email ? `${signer.email} ${signer.serial}` : `root ${signer.serial}`;
}

class PinningPanel extends HTMLElement {
    #data = null;
    #chosen = null;
    #timer = 0;

    connectedCallback() {
        if (this.hasAttribute("role")) return;
        setSafeAttribute(this, "role", "region");
        setSafeAttribute(this, "aria-label", "Pinning");
        liveEvents.addEventListener("pinning", () => this.#scheduleLoad());
        document.getElementById("tab-pinning")?.addEventListener("click", () => this.load());
        this.load();
    }

    #scheduleLoad() {
        if (this.#timer) return;
        this.#timer = setTimeout(() => {
            this.#timer = 0;
            this.load();
        }, 500);
    }

    /** How many loads were asked for: only the latest one's answer is shown. */
    #loads = 0;

    async load() {
        // The live stream's loads, the tab's click and the first load overlap: an older answer that
        // came last replaced the newer one, and the panel missed the last report until clicked again.
        const load = ++this.#loads;
        try {
            const data = await api.pinning();
            if (load !== this.#loads) return;
            this.#data = data;
            this.#render();
        } catch (error) {
            if (load !== this.#loads) return;
            replaceChildren(this, h("p", { class: "error-text" }, `could not load pinning verdicts: ${error.message}`));
        }
    }

    #render() {
        const verdicts = this.#data?.verdicts ?? [];
        const reports = this.#data?.reports ?? [];
        const hosts = [...new Set(verdicts.map((verdict) => verdict.host))].sort();
        const personas = [...new Set(verdicts.map((verdict) => verdict.persona ?? "—"))].sort();
        const cell = (host, persona) => verdicts.find((verdict) => verdict.host === host &&
            (verdict.persona ?? "—") === persona);
        const matrix = verdicts.length
            ? h("table", { class: "pin-matrix" },
                h("caption", {}, "QA verdict per host and persona"),
                h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Host"),
                    personas.map((persona) => h("th", { scope: "col" }, persona)))),
                h("tbody", {}, hosts.map((host) => h("tr", {}, h("th", { scope: "row" }, host),
                    personas.map((persona) => {
                        const verdict = cell(host, persona);
                        if (!verdict) return h("td", {});
                        const chosen = this.#chosen === verdict;
                        return h("td", {}, h("button", {
                            type: "button", class: `chip verdict-${verdict.verdict}`, title: verdict.note ?? "",
                            "aria-pressed": String(chosen),
                            "aria-label": `${host}, persona ${persona}: ${verdict.verdict}`,
                            on: { click: () => { this.#chosen = chosen ? null : verdict; this.#render(); } },
                        }, verdict.verdict));
                    })))))
            : h("p", { class: "muted" },
                "No verdicts yet: run traffic under the team persona and a non-team persona (`--persona`).");
        replaceChildren(this, h("h2", {}, "Pinning"), matrix,
            this.#chosen ? this.#evidence(this.#chosen, reports) : null,
            h("h2", {}, `Pin-failure reports (${reports.length})`), this.#reports(reports));
    }

    #evidence(verdict, reports) {
        const byID = new Map(reports.map((report) => [report.id, report]));
        return h("section", { class: "card evidence", "aria-label": "Evidence" },
            h("h3", {}, `${verdict.host} · ${verdict.persona ?? "no persona"} · ${verdict.verdict}`),
            h("p", {}, verdict.note ?? ""),
            h("p", {}, "Flows: ", evidence(verdict, "flows").map((id) => [flowButton(id), " "])),
            evidence(verdict, "reports").length
                ? h("p", {}, "Reports: ", evidence(verdict, "reports").map((id) => {
                    const report = byID.get(id);
                    return [report ? flowButton(report.flow_id, `report ${id}`) : h("span", {}, id), " "];
                }))
                : null);
    }

    #reports(reports) {
        if (!reports.length) return h("p", { class: "muted" }, "No pin-failure reports captured.");
        return h("table", { class: "reports" },
            h("thead", {}, h("tr", {}, ["Received", "Host", "App", "Enforced", "Known pins", "Signer", "Flow"]
                .map((title) => h("th", { scope: "col" }, title)))),
            h("tbody", {}, reports.map((report) => h("tr", {},
                h("td", {}, formatClock(report.received)),
                h("td", {}, `${report.hostname ?? ""}${report.port ? `:${report.port}` : ""}`),
                h("td", {}, [report["app-bundle-id"], report["app-platform"]].filter(Boolean).join(" · ")),
                h("td", {}, report["enforce-pinning"] === undefined ? "" : (report["enforce-pinning"] ? "yes" : "no")),
                h("td", {}, definitionList([["pins", (report["known-pins"] ?? []).join(" ")],
                    ["expire", report["known-pins-expiration-date"]]], "facts compact")),
                h("td", {}, signerText(report.signer)),
                h("td", {}, flowButton(report.flow_id, "open flow"))))));
    }
}

customElements.define("pinning-panel", PinningPanel);

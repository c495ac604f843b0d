// <ca-panel> and <ca-badge>: who signs the leaves, the root's pin, and the intermediate's
// expiry as a live countdown (amber under a day, red under an hour) with the command to renew.

import { api } from "./api.js";
import { definitionList, h, replaceChildren, setSafeAttribute } from "./dom.js";
import { formatCountdown } from "./format.js";
import { store } from "./store.js";

const HOUR = 3600 * 1000;

/** The signer, its expiry and the renew command, whichever names the server used. */
export function caFacts(ca) {
    const signer = ca?.signer ?? ca?.intermediate ?? null;
    const root = ca?.root ?? null;
    const expires = signer?.not_after ?? signer?.expires ?? ca?.expires ?? null;
    return {
        signer, root,
        expires: expires ? new Date(expires) : null,
        renew: ca?.renew_command ?? ca?.renew ?? signer?.renew_command ?? null,
        rootPin: root?.pin ?? root?.spki_pin ?? ca?.root_pin ?? null,
    };
}

function urgency(remaining) {
    if (remaining < HOUR) return "expiry-red";
    if (remaining < 24 * HOUR) return "expiry-amber";
    return "expiry-ok";
}

let ticking = false;

/** Loads `/api/ca` once into the store, then ticks every second for the countdowns. */
export async function loadCA() {
    try {
        store.setCA(await api.ca());
    } catch (error) {
        store.notify(`could not load the CA: ${error.message}`, "error");
    }
    if (!ticking) {
        ticking = true;
        setInterval(() => store.dispatchEvent(new CustomEvent("tick")), 1000);
    }
}

class CABadge extends HTMLElement {
    connectedCallback() {
        if (this.hasAttribute("role")) return;
        setSafeAttribute(this, "role", "status");
        setSafeAttribute(this, "aria-live", "off");
        const update = () => this.#update();
        store.addEventListener("ca", update);
        store.addEventListener("tick", update);
        this.addEventListener("click", () => document.getElementById("tab-ca")?.click());
    }

    #update() {
        const { signer, expires } = caFacts(store.ca);
        if (!expires || Number.isNaN(expires.getTime())) {
            this.textContent = signer?.email ? `signing as ${signer.email}` : "";
            return;
        }
        const remaining = expires.getTime() - Date.now();
        this.className = urgency(remaining);
        this.textContent = `${signer?.email ?? "intermediate"} · expires in ${formatCountdown(remaining)}`;
        setSafeAttribute(this, "title", `the intermediate expires at ${expires.toISOString()}`);
    }
}

class CAPanel extends HTMLElement {
    #countdown = null;

    connectedCallback() {
        if (this.hasAttribute("role")) return;
        setSafeAttribute(this, "role", "region");
        setSafeAttribute(this, "aria-label", "Certificate authority");
        store.addEventListener("ca", () => this.#render());
        store.addEventListener("info", () => this.#render());
        store.addEventListener("tick", () => this.#tick());
        this.#render();
    }

    #render() {
        const ca = store.ca;
        if (!ca) {
            replaceChildren(this, h("p", { class: "muted" }, "loading…"));
            return;
        }
        const { signer, root, expires, renew, rootPin } = caFacts(ca);
        this.#countdown = h("strong", { class: "countdown" });
        const onboarding = store.info?.onboarding_url ?? store.info?.onboarding ?? ca.onboarding_url;
        const qr = [ca.qr, store.info?.qr, store.info?.qr_svg_path].find((path) => typeof path === "string" &&
            path.startsWith("/api/"));
        const qrImage = qr ? h("img", { class: "qr", alt: `QR code of ${onboarding ?? "the onboarding page"}` }) : null;
        if (qrImage) qrImage.src = qr;
        replaceChildren(this,
            h("section", { class: "card" }, h("h2", {}, "Who signs the leaves"),
                definitionList([["Engineer", signer?.email], ["Serial", signer?.serial],
                    ["Subject", signer?.subject], ["Valid from", signer?.not_before],
                    ["Valid until", expires ? expires.toISOString() : ""], ["SPKI pin", signer?.pin ?? signer?.spki_pin]]),
                expires ? h("p", { class: "expiry" }, "Expires in ", this.#countdown) : null,
                renew ? h("div", {}, h("p", {}, "To renew:"), h("pre", { class: "command" }, renew)) : null),
            h("section", { class: "card" }, h("h2", {}, "The root"),
                definitionList([["Subject", root?.subject ?? root?.name], ["SPKI pin", rootPin],
                    ["SHA-256", root?.sha256 ?? root?.sha256_fingerprint ?? root?.fingerprint],
                    ["Valid until", root?.not_after]])),
            onboarding || qrImage ? h("section", { class: "card" }, h("h2", {}, "Put the root on a phone"),
                store.info?.onboarding_loopback
                    ? h("p", { class: "onboarding-loopback" }, "DevProxy listens on this machine only (", h("code", {}, onboarding),
                        "): a phone cannot reach it. Run with ", h("code", {}, "--listen 0.0.0.0:PORT --allow-remote"),
                        " and open the address it prints on the device.")
                    : onboarding ? h("p", {}, "Open ", h("code", {}, onboarding), " on the device.") : null, qrImage) : null);
        this.#tick();
    }

    #tick() {
        const { expires } = caFacts(store.ca);
        if (!this.#countdown || !expires) return;
        const remaining = expires.getTime() - Date.now();
        this.#countdown.textContent = formatCountdown(remaining);
        this.#countdown.className = `countdown ${urgency(remaining)}`;
    }
}

customElements.define("ca-badge", CABadge);
customElements.define("ca-panel", CAPanel);

// <wireguard-panel>: the CA view's Devices (WireGuard) part. With `devproxy run --mode wireguard`,
// each device (peer) of the keys file, whether its tunnel is up now (a handshake within 3 minutes)
// and where it came from, refreshed every few seconds while the view is shown; the selected
// device's config as a QR code for the WireGuard app, as text to copy or download, written with the
// endpoint the field says. Without a wireguard listener it says how to start one, and shows nothing
// secret. The config is the server's (`/api/wireguard/peers/N/config`); it is never put in markup.

import { api } from "./api.js";
import { apiLink, h, replaceChildren, setSafeAttribute } from "./dom.js";
import { copyText } from "./clipboard.js";

/** How often the devices' state is asked for while the CA view is shown (ms). */
const POLL = 3000;
/** How long the endpoint field waits after a keystroke before the config follows it (ms). */
const TYPING = 400;
/** How long a Remove button, clicked once, waits for the second click that removes (ms). */
const ARMED = 4000;

/** `12 s`, `4 min`, `2 h`: how long ago a handshake was. */
function ago(seconds) {
    if (seconds < 90) return `${Math.round(seconds)} s`;
    if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
    return `${Math.round(seconds / 3600)} h`;
}

/** A device's state as the table says it. */
function stateText(peer) {
    const last = peer.last_handshake_seconds;
    if (peer.connected) return `connected · handshake ${ago(last ?? 0)} ago`;
    return last === null || last === undefined ? "never connected" : `not connected · last handshake ${ago(last)} ago`;
}

/** The filter of a device's flows: its tunnel address as the client (`~src`), any port. */
function deviceFilter(address) {
    return `~src ^${address.replace(/\./g, "\\.")}:`;
}

/** The Flows tab, filtered to the device at `address` (through the page's address, as a link would). */
function showFlowsOf(address) {
    window.location.hash = new URLSearchParams({ view: "flows", filter: deviceFilter(address) }).toString();
}

/** Whether `listening` (HOST:PORT) is a loopback address: a phone cannot reach it. */
function isLoopback(listening) {
    return listening.startsWith("127.") || listening.startsWith("[::1]");
}

class WireGuardPanel extends HTMLElement {
    #data = null;
    #listening;
    #peer = 1;
    #timer = 0;
    #typing = 0;
    #rows = null;
    #endpoint = null;
    #qr = null;
    #config = null;
    #download = null;
    #error = null;
    #actions = null;
    #announce = null;
    /** Each peer's `connected` as last shown, to announce a change. */
    #was = new Map();
    #loaded = 0;
    /** The Remove button clicked once, waiting for its second click: `{button, timer}`, or null. */
    #armed = null;

    connectedCallback() {
        if (this.hasAttribute("role")) return;
        setSafeAttribute(this, "role", "region");
        setSafeAttribute(this, "aria-label", "Devices (WireGuard)");
        document.getElementById("tab-ca")?.addEventListener("click", () => this.load());
        this.#timer = setInterval(() => {
            if (this.#shown()) this.load();
        }, POLL);
        this.load();
    }

    disconnectedCallback() {
        clearInterval(this.#timer);
    }

    /** Whether the CA view is on show in a visible tab. */
    #shown() {
        return document.visibilityState === "visible" && !this.closest("[hidden]");
    }

    async load() {
        try {
            this.#data = await api.wireGuard();
        } catch (error) {
            if (!this.#data) replaceChildren(this, h("p", { class: "error-text" }, `could not load the WireGuard devices: ${error.message}`));
            return;
        }
        const listening = this.#data.listening ?? null;
        if (listening !== this.#listening) {
            this.#listening = listening;
            this.#build();
        }
        // A run never gains a listener: nothing more to ask.
        if (!listening) clearInterval(this.#timer);
        this.#renderRows();
    }

    /** The part's frame: the hint without a listener, else the table, the endpoint field and the config. */
    #build() {
        const data = this.#data;
        if (!data.listening) {
            this.#rows = null;
            replaceChildren(this, h("section", { class: "card wireguard" }, h("h2", {}, "Devices (WireGuard)"),
                h("p", {}, "This run has no WireGuard listener. For a phone's every connection (apps that ignore the proxy "
                    + "setting too), start DevProxy with one and scan its QR code here in the WireGuard app:"),
                h("pre", { class: "command" }, "devproxy run --mode wireguard@0.0.0.0:51820 --allow-remote")));
            return;
        }
        const port = data.listening.slice(data.listening.lastIndexOf(":") + 1);
        this.#rows = h("tbody");
        this.#endpoint = h("input", { id: "wg-endpoint", type: "text", spellcheck: "false", autocomplete: "off",
            value: data.endpoint ?? "", "aria-describedby": "wg-endpoint-note",
            on: { input: () => this.#endpointTyped() } });
        this.#error = h("p", { id: "wg-endpoint-error", class: "error-text", role: "alert", hidden: true });
        this.#qr = h("img", { class: "qr wg-qr", alt: "QR code of the device's WireGuard config" });
        this.#config = h("pre", { id: "wg-config", class: "command wg-config", "aria-label": "the device's WireGuard config" });
        this.#download = h("span", { class: "wg-download" });
        this.#announce = h("p", { class: "muted wg-announce", role: "status", "aria-live": "polite" });
        const copy = h("button", { type: "button", id: "wg-copy", on: { click: () => this.#copy() } }, "Copy");
        replaceChildren(this, h("section", { class: "card wireguard" }, h("h2", {}, "Devices (WireGuard)"),
            h("p", {}, "Listening on ", h("code", {}, data.listening), " (UDP). ",
                isLoopback(data.listening)
                    ? h("span", { class: "onboarding-loopback" }, "On loopback, this machine only: an Android emulator reaches it "
                        + `as 10.0.2.2:${port} (write that below); for a phone run with `,
                    h("code", {}, `--mode wireguard@0.0.0.0:${port} --allow-remote`), ".")
                    : null),
            h("table", { class: "rules-table wg-peers" },
                h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Device"), h("th", { scope: "col" }, "Tunnel address"),
                    h("th", { scope: "col" }, "State"), h("th", { scope: "col" }, "From"),
                    h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Remove")))),
                this.#rows),
            this.#announce,
            h("ol", { class: "wg-steps" },
                h("li", {}, "Install the WireGuard app on the device; tap + → Create from QR code and scan this code "
                    + "(or import the file); turn the tunnel on."),
                h("li", {}, "Then install DevProxy's root on the device from ", h("code", {}, "http://devproxy.test/"),
                    " (opened through the tunnel).")),
            h("div", { class: "wg-config-part" },
                this.#qr,
                h("div", { class: "wg-config-text" },
                    h("label", { for: "wg-endpoint" }, "Endpoint written in the config "), this.#endpoint,
                    h("p", { id: "wg-endpoint-note", class: "muted" }, "Where the device sends: this machine's address and "
                        + "the listener's port, another address for a phone on another network, 10.0.2.2:PORT for an "
                        + "Android emulator."),
                    this.#error, this.#config, this.#actions = h("div", { class: "wg-actions" }, copy, " ",
                        this.#download)))));
        this.#showConfig();
    }

    /**
     * The table's rows, the selected device marked; a row's button selects it. Rows of the same
     * peers are updated in place (a focused button keeps its focus); a device that connects or goes
     * away is announced.
     */
    #renderRows() {
        if (!this.#rows) return;
        const peers = this.#data.peers ?? [];
        if (!peers.some((peer) => peer.peer === this.#peer) && peers.length) {
            this.#peer = peers[0].peer;
            this.#showConfig();
        } else if (!peers.length && this.#peer !== 0) {
            ++this.#loaded;
            // Every device removed: nothing of the last one's config stays on the page.
            this.#peer = 0;
            this.#qr.removeAttribute("src");
            this.#config.textContent = "No device may connect: devproxy wireguard --peer N adds one (a new number).";
            replaceChildren(this.#download);
        }
        const same = this.#rows.children.length === peers.length
            && peers.every((peer, index) => this.#rows.children[index].dataset.id === String(peer.peer));
        if (!same) {
            replaceChildren(this.#rows, peers.map((peer) => h("tr", { "data-id": peer.peer },
                h("td", {}, h("button", { type: "button", class: "link", title: `show peer ${peer.peer}'s config and QR code`,
                    on: { click: () => this.#select(peer.peer) } }, `peer ${peer.peer}`)),
                h("td", {}, h("button", { type: "button", class: "link wg-flows", title: `show this device's flows `
                    + `(${deviceFilter(peer.address)})`, on: { click: () => showFlowsOf(peer.address) } }, peer.address)),
                h("td"), h("td"),
                h("td", {}, h("button", { type: "button", class: "wg-remove", title: `revoke peer ${peer.peer}: its key is `
                    + "deleted and the run drops it at once (two clicks)", on: {
                    click: (event) => this.#remove(peer, event.currentTarget),
                    blur: () => this.#disarm(),
                    keydown: (event) => {
                        if (event.key === "Escape" && this.#armed) {
                            event.preventDefault();
                            this.#disarm();
                        }
                    },
                } }, "Remove")))));
        }
        peers.forEach((peer, index) => {
            const row = this.#rows.children[index];
            const selected = peer.peer === this.#peer;
            row.className = selected ? "selected" : "";
            setSafeAttribute(row.querySelector("button"), "aria-pressed", String(selected));
            row.children[2].textContent = stateText(peer);
            row.children[2].className = peer.connected ? "wg-connected" : "wg-not-connected";
            row.children[3].textContent = peer.from ?? "—";
            const was = this.#was.get(peer.peer);
            if (was !== undefined && was !== peer.connected) {
                this.#announce.textContent = peer.connected ? `peer ${peer.peer} connected from ${peer.from ?? "?"}`
                    : `peer ${peer.peer} is no longer connected`;
            }
            this.#was.set(peer.peer, peer.connected);
        });
    }

    /**
     * Revokes `peer` on the second click of its Remove `button` (`DELETE /api/wireguard/peers/N`, as
     * `devproxy wireguard --remove-peer N`): the device loses its tunnel, its number is not given again.
     * The first click only arms the button, which then says what a second one does; it disarms after
     * `ARMED` ms, on blur or on Esc. Two clicks, no confirm(): a modal prompt would block the page
     * (and its polling) until answered.
     */
    async #remove(peer, button) {
        if (this.#armed?.button !== button) {
            this.#disarm();
            this.#armed = { button, timer: setTimeout(() => this.#disarm(), ARMED) };
            button.textContent = `Remove peer ${peer.peer}? Click again`;
            button.classList.add("armed");
            this.#announce.textContent = `Click again to remove peer ${peer.peer} (${peer.address}): its key is deleted, `
                + "the device loses its tunnel at once and needs a new device's config to come back.";
            return;
        }
        this.#disarm();
        try {
            await api.removeWireGuardPeer(peer.peer);
            this.#announce.textContent = `peer ${peer.peer} (${peer.address}) removed`;
        } catch (error) {
            this.#announce.textContent = `could not remove peer ${peer.peer}: ${error.message}`;
        }
        this.load();
    }

    /** Puts an armed Remove button back as it was, and takes its question off the page. */
    #disarm() {
        const armed = this.#armed;
        if (!armed) return;
        this.#armed = null;
        clearTimeout(armed.timer);
        armed.button.textContent = "Remove";
        armed.button.classList.remove("armed");
        if (this.#announce.textContent.startsWith("Click again to remove")) this.#announce.textContent = "";
    }

    #select(peer) {
        if (peer === this.#peer) return;
        this.#peer = peer;
        this.#renderRows();
        this.#showConfig();
    }

    #endpointTyped() {
        clearTimeout(this.#typing);
        this.#typing = setTimeout(() => this.#showConfig(), TYPING);
    }

    /** The selected device's config and QR code, written with the field's endpoint. */
    async #showConfig() {
        const endpoint = this.#endpoint.value.trim();
        const peer = this.#peer;
        const turn = ++this.#loaded;
        let text;
        try {
            text = await api.wireGuardConfig(peer, endpoint);
        } catch (error) {
            if (turn !== this.#loaded) return;
            this.#error.textContent = error.message;
            this.#error.hidden = false;
            // No config of another endpoint is left to scan or copy while this one is wrong.
            this.#qr.hidden = this.#config.hidden = this.#actions.hidden = true;
            setSafeAttribute(this.#endpoint, "aria-invalid", "true");
            return;
        }
        if (turn !== this.#loaded) return;
        this.#error.hidden = true;
        this.#qr.hidden = this.#config.hidden = this.#actions.hidden = false;
        setSafeAttribute(this.#endpoint, "aria-invalid", null);
        this.#config.textContent = text;
        const paths = api.paths.wireGuard(peer, endpoint);
        this.#qr.src = paths.qr;
        this.#qr.alt = `QR code of peer ${peer}'s WireGuard config`;
        const filename = `devproxy-peer${peer}.conf`;
        replaceChildren(this.#download, apiLink(paths.config, "Download", { id: "wg-download", download: filename }));
    }

    /** Copies the config shown (the text follows the endpoint field). */
    #copy() {
        copyText(this.#config.textContent, `peer ${this.#peer}'s WireGuard config`, "Copy the WireGuard config");
    }
}

customElements.define("wireguard-panel", WireGuardPanel);

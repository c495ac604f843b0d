// <line-view>: a long text shown as fixed-height lines, only those in view in the DOM, with
// folding where the formatter says an object or array spans lines. Used for every body, so a
// 50 MiB JSON costs the same DOM as a 50-byte one.

import { h, setSafeAttribute } from "./dom.js";

const LINE_HEIGHT = 18;
const UTF16 = new TextDecoder("utf-16le");

class LineView extends HTMLElement {
    /** The text as UTF-16 code units (transferred from the worker, never one big string here). */
    #units = new Uint16Array(0);
    #starts = new Uint32Array(1);
    #ends = null;
    /** Indices of the lines shown, after folding. */
    #visible = new Uint32Array(1);
    #collapsed = new Set();
    #pool = [];
    #spacer;
    #frame = 0;

    connectedCallback() {
        if (this.#spacer) return;
        setSafeAttribute(this, "role", "document");
        setSafeAttribute(this, "tabindex", 0);
        this.#spacer = h("div", { class: "line-spacer", role: "presentation" });
        this.append(this.#spacer);
        this.addEventListener("scroll", () => this.#schedule(), { passive: true });
        this.addEventListener("click", (event) => {
            const toggle = event.target.closest(".fold");
            if (toggle) this.#toggle(Number(toggle.getAttribute("data-id")));
        });
        new ResizeObserver(() => this.#schedule()).observe(this);
    }

    /** Shows `{units, starts, ends}` from the format worker; folds nothing. */
    show({ units, starts, ends }) {
        this.#units = units;
        this.#starts = starts.length ? starts : new Uint32Array(1);
        this.#ends = ends;
        this.#collapsed.clear();
        this.#layout();
    }

    /** The whole text, as shown (for tests and "copy"; costly for a big body). */
    get text() {
        return UTF16.decode(this.#units);
    }

    get lineCount() {
        return this.#starts.length;
    }

    #line(index) {
        const start = this.#starts[index];
        const end = index + 1 < this.#starts.length ? this.#starts[index + 1] : this.#units.length;
        let text = UTF16.decode(this.#units.subarray(start, end));
        if (text.endsWith("\n")) text = text.slice(0, -1);
        return text;
    }

    #toggle(line) {
        if (this.#collapsed.has(line)) this.#collapsed.delete(line);
        else this.#collapsed.add(line);
        this.#layout();
    }

    /** Recomputes which lines show, skipping folded ranges. */
    #layout() {
        const count = this.#starts.length;
        if (!this.#collapsed.size) {
            if (this.#visible.length !== count || this.#visible[count - 1] !== count - 1) {
                this.#visible = new Uint32Array(count);
                for (let i = 0; i < count; i += 1) this.#visible[i] = i;
            }
        } else {
            const visible = new Uint32Array(count);
            let shown = 0;
            for (let i = 0; i < count; i += 1) {
                visible[shown] = i;
                shown += 1;
                if (this.#collapsed.has(i) && this.#ends && this.#ends[i] > i) i = this.#ends[i];
            }
            this.#visible = visible.subarray(0, shown);
        }
        this.#spacer.style.height = `${this.#visible.length * LINE_HEIGHT}px`;
        this.#schedule();
    }

    #schedule() {
        if (this.#frame) return;
        this.#frame = requestAnimationFrame(() => {
            this.#frame = 0;
            this.#render();
        });
    }

    #render() {
        const first = Math.max(0, Math.floor(this.scrollTop / LINE_HEIGHT) - 2);
        const last = Math.min(this.#visible.length, first + Math.ceil(this.clientHeight / LINE_HEIGHT) + 4);
        while (this.#pool.length < last - first) {
            const row = h("div", { class: "line" }, h("span", { class: "gutter", "aria-hidden": "true" }),
                h("span", { class: "fold", role: "button", tabindex: -1 }), h("span", { class: "code" }));
            this.#pool.push(row);
            this.append(row);
        }
        for (let slot = 0; slot < this.#pool.length; slot += 1) {
            const row = this.#pool[slot];
            const position = first + slot;
            if (position >= last) {
                row.hidden = true;
                continue;
            }
            row.hidden = false;
            const index = this.#visible[position];
            row.style.transform = `translateY(${position * LINE_HEIGHT}px)`;
            const [gutter, fold, code] = row.children;
            gutter.textContent = String(index + 1);
            const foldable = this.#ends && this.#ends[index] > index + 1;
            const collapsed = foldable && this.#collapsed.has(index);
            fold.textContent = foldable ? (collapsed ? "▸" : "▾") : "";
            setSafeAttribute(fold, "data-id", foldable ? index : false);
            setSafeAttribute(fold, "aria-expanded", foldable ? String(!collapsed) : false);
            setSafeAttribute(fold, "aria-label", foldable ? (collapsed ? "expand" : "fold") : false);
            let text = this.#line(index);
            if (collapsed) {
                const hidden = this.#ends[index] - index - 1;
                text += ` … ${hidden} lines … ${this.#line(this.#ends[index]).trim()}`;
            }
            code.textContent = text;
        }
    }
}

customElements.define("line-view", LineView);

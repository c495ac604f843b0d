// Formatting numbers, sizes, times and durations for display; pure functions.

/** `1.3 kB`, `512 B`, `4.2 MB`: decimal units, as the console line prints them. */
export function formatSize(bytes) {
    if (bytes === null || bytes === undefined || bytes < 0) return "";
    if (bytes < 1000) return `${bytes} B`;
    const units = ["kB", "MB", "GB", "TB"];
    let value = bytes;
    let unit = -1;
    do {
        value /= 1000;
        unit += 1;
    } while (value >= 1000 && unit < units.length - 1);
    return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/** `212 ms`, `1.4 s`, `` for unknown. */
export function formatDuration(ms) {
    if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return "";
    if (ms < 1000) return `${Math.round(ms)} ms`;
    if (ms < 60000) return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
    return `${Math.floor(ms / 60000)} m ${Math.round((ms % 60000) / 1000)} s`;
}

/** The local wall-clock time of an RFC 3339 stamp, `09:31:02.123`. */
export function formatClock(stamp) {
    const date = new Date(stamp);
    if (Number.isNaN(date.getTime())) return String(stamp ?? "");
    const pad = (n, width = 2) => String(n).padStart(width, "0");
    return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

/** `3 d 4 h`, `3 h 12 m`, `4 m 09 s` until `milliseconds` run out; `expired 2 h ago` after. */
export function formatCountdown(milliseconds) {
    const past = milliseconds < 0;
    let seconds = Math.floor(Math.abs(milliseconds) / 1000);
    const days = Math.floor(seconds / 86400);
    seconds -= days * 86400;
    const hours = Math.floor(seconds / 3600);
    seconds -= hours * 3600;
    const minutes = Math.floor(seconds / 60);
    seconds -= minutes * 60;
    let text;
    if (days > 0) text = `${days} d ${hours} h`;
    else if (hours > 0) text = `${hours} h ${String(minutes).padStart(2, "0")} m`;
    else text = `${minutes} m ${String(seconds).padStart(2, "0")} s`;
    return past ? `expired ${text} ago` : text;
}

/** The path and query of a URL, or the URL itself when it does not parse. */
export function pathOf(url) {
    if (!url) return "";
    try {
        const parsed = new URL(url);
        return parsed.pathname + parsed.search;
    } catch {
        return url;
    }
}

/** The media type of a Content-Type value, lower case, without parameters. */
export function mediaType(contentType) {
    return String(contentType ?? "").split(";")[0].trim().toLowerCase();
}

/** `n` and the noun for it: `1 line`, `1,234 lines`. */
export function countOf(n, one, many) {
    return `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
}

/** Every value of header `name` in `[[name, value]]` pairs, any case, in order. */
export function headerValues(headers, name) {
    const wanted = name.toLowerCase();
    return (headers ?? []).filter((entry) => String(entry[0]).toLowerCase() === wanted).map((entry) => entry[1]);
}

/** The first value of header `name` in `[[name, value]]` pairs, any case. */
export function headerValue(headers, name) {
    return headerValues(headers, name)[0];
}

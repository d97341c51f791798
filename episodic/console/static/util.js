// Small DOM and formatting helpers. Everything the server sends is put into the page as text:
// el() appends strings as text nodes and never sets innerHTML.

export function $(id) {
  return document.getElementById(id);
}

/** A new element: attrs (class, text, dataset, title, aria-*, on<event>…) then children
 *  (nodes, or strings/numbers, which become text nodes). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = String(v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (k.startsWith("on")) {
      if (typeof v === "function") node.addEventListener(k.slice(2), v); // never an inline handler
    } else node.setAttribute(k, v === true ? "" : String(v));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

/** Stream time as m:ss or h:mm:ss (``long``: always h:mm:ss); ``tenths`` adds a decimal. */
export function fmtTime(seconds, { long = false, tenths = false } = {}) {
  if (!Number.isFinite(seconds)) return "–";
  const neg = seconds < 0;
  let s = Math.abs(seconds);
  const whole = tenths ? Math.floor(s * 10) / 10 : Math.floor(s + 1e-6);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  s = whole - h * 3600 - m * 60;
  const ss = tenths ? s.toFixed(1).padStart(4, "0") : String(Math.floor(s)).padStart(2, "0");
  const out = h > 0 || long ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
  return neg ? `-${out}` : out;
}

export function fmtRange(a, b, opts) {
  return `${fmtTime(a, opts)}–${fmtTime(b, opts)}`;
}

/** A duration in words: "45 s", "12 min", "3 h 05 min", "2 d 4 h". */
export function fmtDuration(seconds) {
  if (!Number.isFinite(seconds) || seconds < 0) return "–";
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min${seconds % 60 >= 1 ? ` ${String(Math.floor(seconds % 60)).padStart(2, "0")} s` : ""}`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ${String(Math.floor((seconds % 3600) / 60)).padStart(2, "0")} min`;
  return `${Math.floor(seconds / 86400)} d ${Math.floor((seconds % 86400) / 3600)} h`;
}

export function fmtBytes(n) {
  if (!Number.isFinite(n)) return "–";
  const units = ["B", "kB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i += 1;
  }
  return `${n >= 100 || i === 0 ? Math.round(n) : n.toFixed(1)} ${units[i]}`;
}

/** "12 s ago", "5 min ago", "3 h ago", or a date, for a Unix time in seconds. */
export function fmtAgo(unixSeconds, now = Date.now() / 1000) {
  if (!unixSeconds) return "never";
  const d = Math.max(0, now - unixSeconds);
  if (d < 60) return `${Math.round(d)} s ago`;
  if (d < 3600) return `${Math.floor(d / 60)} min ago`;
  if (d < 86400) return `${Math.floor(d / 3600)} h ago`;
  return new Date(unixSeconds * 1000).toLocaleDateString();
}

export function fmtCount(n, one, many = `${one}s`) {
  return `${Number(n || 0).toLocaleString()} ${n === 1 ? one : many}`;
}

export function clamp(x, lo, hi) {
  return Math.min(hi, Math.max(lo, x));
}

export function debounce(fn, ms) {
  let timer = 0;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

let toastTimer = 0;
/** A short message at the bottom of the page (as text). */
export function toast(message, kind = "error") {
  const box = $("toast");
  box.textContent = message;
  box.dataset.kind = kind;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    box.hidden = true;
  }, kind === "error" ? 7000 : 3500);
}

/** A confidence/score bar: a labelled track with a fill of ``value`` (0..1). */
export function bar(value, label) {
  const v = clamp(Number(value) || 0, 0, 1);
  const fill = el("span", { class: "bar-fill" });
  fill.style.width = `${(v * 100).toFixed(1)}%`;
  fill.dataset.level = v >= 0.66 ? "high" : v >= 0.33 ? "mid" : "low";
  return el(
    "span",
    { class: "bar", role: "meter", "aria-valuemin": 0, "aria-valuemax": 1, "aria-valuenow": v.toFixed(2), "aria-label": label },
    el("span", { class: "bar-track" }, fill),
    el("span", { class: "bar-value", text: `${Math.round(v * 100)}%` }),
  );
}

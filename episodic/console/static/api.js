// The REST API client: JSON in and out, the API key as a Bearer header (never in a URL, never a
// cookie), kept in sessionStorage for this tab only. A 401 asks for a key and retries.

const KEY_NAME = "episodic.apiKey";

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || `HTTP ${status}`);
    this.status = status;
    this.code = code || "";
  }
}

let key = readKey();
let askForKey = null; // (reason) => Promise<string|null>
let pendingPrompt = null;
const keyListeners = new Set();

function readKey() {
  try {
    return sessionStorage.getItem(KEY_NAME) || "";
  } catch {
    return "";
  }
}

export function hasKey() {
  return Boolean(key);
}

export function setKey(value) {
  key = (value || "").trim();
  try {
    if (key) sessionStorage.setItem(KEY_NAME, key);
    else sessionStorage.removeItem(KEY_NAME);
  } catch {
    /* storage may be off: the key lives in memory only */
  }
  for (const fn of keyListeners) fn(key);
}

export function onKeyChange(fn) {
  keyListeners.add(fn);
}

/** Who asks the user for a key when a call answers 401. */
export function setKeyPrompt(fn) {
  askForKey = fn;
}

async function promptForKey(reason) {
  if (!askForKey) return null;
  if (!pendingPrompt) {
    pendingPrompt = askForKey(reason).finally(() => {
      pendingPrompt = null;
    });
  }
  return pendingPrompt;
}

function headers(extra = {}) {
  const h = { Accept: "application/json", ...extra };
  if (key) h.Authorization = `Bearer ${key}`;
  return h;
}

async function errorOf(res) {
  let code = "";
  let message = "";
  try {
    const body = await res.json();
    const err = body && (body.error || body.detail);
    if (err && typeof err === "object") {
      code = String(err.code || "");
      message = String(err.message || "");
    } else if (typeof err === "string") {
      message = err;
    }
  } catch {
    /* not JSON */
  }
  return new ApiError(res.status, code, message || `${res.status} ${res.statusText}`);
}

/** One call. ``json``: a body sent as JSON; ``form``: a FormData body; ``as``: "json" or "blob".
 *  ``quiet401``: do not ask for a key, just fail (background polls). */
export async function api(path, { method = "GET", json, form, signal, as = "json", quiet401 = false } = {}) {
  for (let attempt = 0; ; attempt += 1) {
    const init = { method, signal, credentials: "omit", cache: "no-store", redirect: "error" };
    if (json !== undefined) {
      init.headers = headers({ "Content-Type": "application/json" });
      init.body = JSON.stringify(json);
    } else {
      init.headers = headers();
      if (form) init.body = form;
    }
    const res = await fetch(path, init);
    if (res.status === 401) {
      const err = await errorOf(res);
      if (quiet401 || attempt >= 3) throw err;
      const had = key;
      const fresh = await promptForKey(had ? "That key was not accepted. Try another one." : err.message);
      if (!fresh) throw err;
      continue;
    }
    if (!res.ok) throw await errorOf(res);
    if (as === "blob") return res.blob();
    if (res.status === 204) return {};
    return res.json();
  }
}

/** A query string of the defined, non-empty values. */
export function qs(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === "") continue;
    if (Array.isArray(v)) v.forEach((x) => u.append(k, x));
    else u.append(k, String(v));
  }
  const s = u.toString();
  return s ? `?${s}` : "";
}

export const seg = (id) => encodeURIComponent(id);

/** A POST answered with server-sent events (``Accept: text/event-stream``): ``progress`` events
 *  go to ``onProgress``; the ``result`` event's document is returned; an ``error`` event throws.
 *  A server that answers plain JSON instead is fine too. */
export async function apiEvents(path, json, { onProgress = () => {}, result = "result", signal } = {}) {
  for (let attempt = 0; ; attempt += 1) {
    const res = await fetch(path, {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream, application/json" }),
      body: JSON.stringify(json),
      credentials: "omit",
      cache: "no-store",
      redirect: "error",
      signal,
    });
    let failure = null;
    if (res.status === 401) failure = await errorOf(res);
    else if (!res.ok) throw await errorOf(res);
    else if (!(res.headers.get("content-type") || "").includes("text/event-stream")) return res.json();
    else {
      let doc = null;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (value) buf += value.replace(/\r\n/g, "\n");
        let cut;
        while ((cut = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          let name = "message";
          const data = [];
          for (const line of block.split("\n")) {
            if (line.startsWith("event:")) name = line.slice(6).trim();
            else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
          }
          if (!data.length) continue;
          const body = JSON.parse(data.join("\n"));
          if (name === "progress") onProgress(body);
          else if (name === "error") {
            const e = body.error || {};
            failure = new ApiError(e.code === "UNAUTHENTICATED" ? 401 : 500, e.code, e.message);
          } else if (name === result) doc = body;
        }
        if (done) break;
      }
      if (doc) return doc;
      if (!failure) throw new ApiError(0, "UNAVAILABLE", "the answer ended early: try again");
      if (failure.status !== 401) throw failure;
    }
    if (attempt >= 3) throw failure;
    const fresh = await promptForKey(key ? "That key was not accepted. Try another one." : failure.message);
    if (!fresh) throw failure;
  }
}

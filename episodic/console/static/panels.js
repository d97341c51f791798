// Search (words or a picture), Ask, Article, and Watches/Alerts. Every result that points at a
// moment opens it: the player seeks to it and the timeline shows it.

import { api, apiEvents, qs } from "./api.js";
import { setMarks } from "./timeline.js";
import { $, bar, clear, el, fmtCount, fmtDuration, fmtRange, fmtTime, toast } from "./util.js";

let goTo = () => {};

/** ``open(streamId, segmentId, t)``: what clicking a moment does (set by app.js). */
export function initPanels(open) {
  goTo = open;
  $("search-form").addEventListener("submit", runSearch);
  $("search-clear").addEventListener("click", clearSearch);
  $("ask-form").addEventListener("submit", runAsk);
  $("article-form").addEventListener("submit", runArticle);
  $("recall-form").addEventListener("submit", runRecall);
  $("watch-form").addEventListener("submit", addWatch);
  $("watch-kind").addEventListener("change", showWatchFields);
  showWatchFields();
  for (const id of ["ask-question", "article-topic", "recall-description"]) {
    $(id).addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) ev.target.form.requestSubmit();
    });
  }
}

function scopeOf(selectId) {
  const v = $(selectId).value;
  return v ? [v] : [];
}

function busy(form, on) {
  for (const b of form.querySelectorAll("button, input, textarea, select")) b.disabled = on;
  form.classList.toggle("busy", on);
}

/** A clickable card for a moment: thumbnail (when there is one), stream, time, and lines of text. */
function momentCard({ stream_id, segment_id, t_start, t_end, thumbnail_url, t }, { lines = [], score, scoreLabel = "score", chips = [], kind = "", when = "" } = {}) {
  const thumb = thumbnail_url ? el("span", { class: "thumb" }, el("img", { src: thumbnail_url, alt: "", loading: "lazy", decoding: "async", width: 160, height: 90 })) : null;
  const playable = Boolean(segment_id);
  const card = el(
    playable ? "button" : "div",
    {
      type: playable ? "button" : undefined,
      class: `moment ${kind}`.trim(),
      title: playable ? "Play this moment" : undefined,
      dataset: { streamId: stream_id || "", segmentId: segment_id || "", t0: t_start, t1: t_end },
    },
    thumb,
    el(
      "span",
      { class: "moment-body" },
      el(
        "span",
        { class: "moment-top" },
        stream_id ? el("span", { class: "chip", text: stream_id }) : null,
        el("span", { class: "moment-time", text: when || fmtRange(t_start, t_end, { tenths: t_end - t_start < 20 }) }),
        ...chips.map((c) => el("span", { class: "chip chip-soft", text: c })),
      ),
      ...lines.filter(Boolean).map((l) => el("span", { class: "moment-text", text: l })),
      Number.isFinite(score) ? bar(score, scoreLabel) : null,
    ),
  );
  if (playable) card.addEventListener("click", () => goTo(stream_id, segment_id, Number.isFinite(t) ? t : t_start));
  return card;
}

// -- search ----------------------------------------------------------------------------------
async function runSearch(ev) {
  ev.preventDefault();
  const form = ev.target;
  const query = $("search-query").value.trim();
  const file = $("search-image").files[0];
  const top_k = Math.max(1, Math.min(100, Number($("search-top-k").value) || 10));
  const stream_ids = scopeOf("search-scope");
  if (!query && !file) {
    toast("Type what to find, or pick a picture.", "info");
    return;
  }
  $("search-status").textContent = file ? "Looking for moments like this picture…" : "Searching…";
  busy(form, true);
  try {
    let body;
    if (file) {
      const data = new FormData();
      data.append("image", file, file.name);
      if (query) data.append("query", query);
      data.append("top_k", String(top_k));
      for (const s of stream_ids) data.append("stream_ids", s);
      body = await api("/v1/search/image", { method: "POST", form: data });
    } else {
      body = await api("/v1/search", { method: "POST", json: { query, stream_ids, top_k } });
    }
    showMoments(body.moments || [], file ? `moments like ${file.name}` : `“${query}”`);
  } catch (err) {
    $("search-status").textContent = `Search failed: ${err.message}`;
  } finally {
    busy(form, false);
  }
}

/** Moments as cards and as marks on the timeline. */
export function showMoments(moments, what) {
  const list = clear($("search-results"));
  $("search-status").textContent = moments.length ? `${fmtCount(moments.length, "moment")} for ${what}` : `Nothing found for ${what}.`;
  const frag = document.createDocumentFragment();
  for (const m of moments) frag.append(momentCard(m, { lines: [m.why], score: m.score }));
  list.append(frag);
  const count = $("search-count");
  count.textContent = String(moments.length);
  count.hidden = !moments.length;
  setMarks(moments);
}

/** Search for moments like ``segment`` (the player's "More like this"). */
export async function searchLike(segment) {
  document.dispatchEvent(new CustomEvent("episodic:tab", { detail: "search" }));
  $("search-status").textContent = "Looking for moments like this one…";
  try {
    const body = await api("/v1/search", { method: "POST", json: { like_segment_id: segment.id, stream_ids: scopeOf("search-scope"), top_k: 10 } });
    showMoments(body.moments || [], `moments like ${segment.stream_id} ${fmtTime(segment.t_start)}`);
  } catch (err) {
    $("search-status").textContent = `Search failed: ${err.message}`;
  }
}

function clearSearch() {
  $("search-query").value = "";
  $("search-image").value = "";
  clear($("search-results"));
  $("search-status").textContent = "";
  $("search-count").hidden = true;
  setMarks([]);
}

// -- ask -------------------------------------------------------------------------------------
async function runAsk(ev) {
  ev.preventDefault();
  const form = ev.target;
  const question = $("ask-question").value.trim();
  if (!question) {
    toast("Type a question.", "info");
    return;
  }
  const choices = $("ask-choices").value.split("\n").map((s) => s.trim()).filter(Boolean);
  const out = clear($("ask-answer"));
  $("ask-status").textContent = "Thinking… (the local model can take a while)";
  busy(form, true);
  const started = performance.now();
  try {
    const r = await api("/v1/ask", { method: "POST", json: { question, choices, stream_ids: scopeOf("ask-scope") } });
    $("ask-status").textContent = `Answered in ${((performance.now() - started) / 1000).toFixed(1)} s`;
    out.append(renderAnswer(r, choices));
  } catch (err) {
    $("ask-status").textContent = `No answer: ${err.message}`;
  } finally {
    busy(form, false);
  }
}

function renderAnswer(r, choices) {
  const chosen = Number.isInteger(r.choice_index) && choices[r.choice_index] !== undefined ? `Option ${r.choice_index + 1}: ${choices[r.choice_index]}` : null;
  const meta = el(
    "div",
    { class: "answer-meta" },
    el("span", { class: "meta-label", text: "Confidence" }),
    bar(r.confidence, "confidence"),
    r.pathway ? el("span", { class: "chip chip-soft", title: "How the answer was found", text: `pathway: ${r.pathway}` }) : null,
    r.query_type ? el("span", { class: "chip chip-soft", title: "What kind of question", text: `type: ${r.query_type}` }) : null,
  );
  const evidence = r.evidence || [];
  const list = el("div", { class: "results evidence" });
  for (const e of evidence) {
    list.append(momentCard(e, { lines: [e.text], chips: [e.modality].filter(Boolean), kind: "evidence", score: e.score, scoreLabel: "relevance" }));
  }
  return el(
    "section",
    { class: "answer-card" },
    el("p", { class: "answer-text", text: r.answer || "(no answer)" }),
    chosen ? el("p", { class: "answer-choice", text: chosen }) : null,
    meta,
    el("h3", { class: "sub", text: evidence.length ? `Evidence (${evidence.length})` : "No evidence" }),
    list,
  );
}

// -- articles --------------------------------------------------------------------------------
async function runArticle(ev) {
  ev.preventDefault();
  const form = ev.target;
  const topic = $("article-topic").value.trim();
  if (!topic) {
    toast("Say what the article should be about.", "info");
    return;
  }
  const out = clear($("article-out"));
  $("article-status").textContent = "Writing… (retrieval, evidence, writing: this can take a while)";
  busy(form, true);
  const started = performance.now();
  try {
    const progress = (p) => {
      const share = p.total ? ` ${p.done}/${p.total}` : "";
      $("article-status").textContent = `Writing… ${p.stage || ""}${share}${p.message ? `: ${p.message}` : ""}`;
    };
    const a = await apiEvents("/v1/articles", { request: topic, stream_ids: scopeOf("article-scope"), style: $("article-style").value }, { onProgress: progress, result: "article" });
    $("article-status").textContent = `Written in ${((performance.now() - started) / 1000).toFixed(1)} s`;
    out.append(renderArticle(a.article || a));
  } catch (err) {
    $("article-status").textContent = `No article: ${err.message}`;
  } finally {
    busy(form, false);
  }
}

function renderArticle(a) {
  const byN = new Map((a.citations || []).map((c) => [c.n, c]));
  const cite = (n) => {
    const c = byN.get(n);
    const b = el("button", { type: "button", class: "cite", text: `[${n}]`, title: c ? `${c.stream_id} ${fmtRange(c.t_start, c.t_end)}` : "missing source", dataset: { n } });
    if (c) b.addEventListener("click", () => goTo(c.stream_id, c.segment_id, c.t_start));
    else b.disabled = true;
    return b;
  };
  const frag = document.createDocumentFragment();
  frag.append(el("h2", { class: "article-title", text: a.title || a.request || "Article" }));
  if (a.thin_evidence) frag.append(el("p", { class: "note", text: "The memory holds little about this: the article gives only what there is." }));
  const bullets = a.style === "bullet";
  for (const sec of a.sections || []) {
    if (sec.heading) frag.append(el("h3", { text: sec.heading }));
    const holder = el(bullets ? "ul" : "p", { class: "article-text" });
    for (const s of sec.sentences || []) {
      const sentence = el(bullets ? "li" : "span", { class: "sentence" }, s.text, (s.citations || []).length ? " " : null, ...(s.citations || []).map(cite));
      holder.append(sentence);
      if (!bullets) holder.append(" ");
    }
    frag.append(holder);
  }
  const sources = a.citations || [];
  if (sources.length) {
    frag.append(el("h3", { text: "Sources" }));
    const list = el("ol", { class: "sources" });
    for (const c of sources) {
      const b = el("button", { type: "button", class: "source", dataset: { n: c.n } }, el("span", { class: "cite-n", text: `[${c.n}]` }), el("span", { class: "chip", text: c.stream_id }), el("span", { text: fmtRange(c.t_start, c.t_end, { tenths: true }) }));
      b.addEventListener("click", () => goTo(c.stream_id, c.segment_id, c.t_start));
      list.append(el("li", {}, b));
    }
    frag.append(list);
  }
  return frag;
}

// -- recall ----------------------------------------------------------------------------------
const FACETS = [
  ["global", "global_impression", "recall-global", "global"],
  ["key_moment", "key_moment", "recall-key-moment", "key moment"],
  ["temporal", "temporal", "recall-temporal", "temporal"],
  ["audio", "audio", "recall-audio", "audio"],
];

async function runRecall(ev) {
  ev.preventDefault();
  const form = ev.target;
  const body = { description: $("recall-description").value.trim(), stream_ids: scopeOf("recall-scope") };
  for (const [, field, id] of FACETS) body[field] = $(id).value.trim();
  if (!body.description && !FACETS.some(([, field]) => body[field])) {
    toast("Describe the recording, or give at least one clue.", "info");
    return;
  }
  body.top_k = Math.max(1, Math.min(100, Number($("recall-top-k").value) || 5));
  const out = clear($("recall-results"));
  $("recall-status").textContent = "Recalling…";
  busy(form, true);
  try {
    const r = await api("/v1/recall", { method: "POST", json: body });
    const results = r.results || [];
    $("recall-status").textContent = results.length
      ? `${fmtCount(results.length, "recording")} in ${Number(r.elapsed_s || 0).toFixed(2)} s`
      : "Nothing in the memory fits that description.";
    out.append(...renderRecall(r));
  } catch (err) {
    $("recall-status").textContent = `Recall failed: ${err.message}`;
  } finally {
    busy(form, false);
  }
}

function renderRecall(r) {
  const nodes = [];
  const searched = Object.entries(r.facets || {}).filter(([, v]) => v);
  if (searched.length) {
    const label = new Map(FACETS.map(([key, , , name]) => [key, name]));
    nodes.push(el("p", { class: "recall-facets muted" }, "Searched: ", ...searched.map(([k, v]) => el("span", { class: "chip chip-soft", title: label.get(k) || k, text: `${label.get(k) || k}: ${v}` }))));
  }
  for (const res of r.results || []) {
    const scores = Object.entries(res.facets || {}).map(([k, v]) => `${(FACETS.find((f) => f[0] === k) || [k, k, k, k])[3]} ${Math.round(Number(v) * 100)}%`);
    nodes.push(
      momentCard(res, {
        lines: [res.why],
        chips: scores,
        score: res.confidence,
        scoreLabel: "confidence",
        kind: "recalled",
        when: `at ${fmtTime(res.t, { tenths: true })} (${fmtRange(res.t_start, res.t_end)})`,
      }),
    );
  }
  if ((r.rejected || []).length) {
    nodes.push(el("details", { class: "rejected" }, el("summary", { text: `Ruled out (${r.rejected.length})` }), ...r.rejected.map((x) => el("p", { class: "muted", text: x }))));
  }
  return nodes;
}

// -- watches and alerts ----------------------------------------------------------------------
const alertsState = { on: false, after: 0, seen: 0, timer: 0 };

const ABSENT = new Set([404, 405, 501]);

/** Show the Alerts tab only when the API has watches. */
export async function initAlerts() {
  try {
    const body = await api("/v1/watches", { quiet401: true });
    alertsState.on = true;
    $("tab-alerts").hidden = false;
    renderWatches(body.watches || []);
    await pollAlerts();
    clearInterval(alertsState.timer);
    alertsState.timer = setInterval(pollAlerts, 10000);
  } catch (err) {
    if (ABSENT.has(err.status)) $("tab-alerts").hidden = true;
  }
}

export function resetAlerts() {
  clearInterval(alertsState.timer);
  alertsState.after = 0;
  alertsState.seen = 0;
  clear($("alert-list"));
  clear($("watch-list"));
  clear($("watch-secret")).hidden = true;
  watchError("");
  $("alerts-count").hidden = true;
}

function renderWatches(watches) {
  const box = clear($("watch-list"));
  if (!watches.length) {
    box.append(el("p", { class: "muted", text: "No watches yet: add one above." }));
    return;
  }
  for (const w of watches) {
    const scope = (w.stream_ids || []).length ? w.stream_ids.join(", ") : "every stream";
    const extra = [
      w.kind,
      w.then ? `then “${w.then}”` : "",
      w.by_time ? `by ${w.by_time}` : "",
      w.within_s ? `within ${fmtDuration(w.within_s)}` : "",
      w.kind === "first" && w.period ? `per ${w.period === "ever" ? "stream, ever" : w.period}` : "",
      w.webhook_url ? "webhook" : "",
    ].filter(Boolean).join(" · ");
    const remove = el("button", { type: "button", class: "btn btn-small btn-quiet watch-remove", text: "Remove", title: `Remove this watch (${w.id})`, dataset: { watchId: w.id } });
    remove.addEventListener("click", () => removeWatch(w, remove));
    box.append(
      el("div", { class: "watch", dataset: { watchId: w.id } },
        el("span", { class: "watch-body" }, el("span", { class: "watch-query", text: w.query }), el("span", { class: "muted", text: `${extra} · ${scope}` })),
        remove),
    );
  }
}

async function refreshWatches() {
  const body = await api("/v1/watches");
  renderWatches(body.watches || []);
}

function showWatchFields() {
  const kind = $("watch-kind").value;
  for (const node of $("watch-form").querySelectorAll("[data-kinds]")) node.hidden = !node.dataset.kinds.split(" ").includes(kind);
}

const DURATION = /^\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?|d|days?|w|weeks?)?\s*$/i;
const UNIT_S = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

/** "90", "90s", "10m", "1.5h", "7d", "1w" → seconds (as core/durations.py reads them); NaN otherwise. */
function parseDuration(text) {
  const m = DURATION.exec(text);
  return m ? Number(m[1]) * UNIT_S[(m[2] || "s")[0].toLowerCase()] : NaN;
}

function watchError(message) {
  const box = $("watch-error");
  box.textContent = message || "";
  box.hidden = !message;
}

async function addWatch(ev) {
  ev.preventDefault();
  const form = ev.target;
  const kind = $("watch-kind").value;
  const body = { query: $("watch-query").value.trim(), kind, stream_ids: scopeOf("watch-scope") };
  const uses = (id) => !$(id).closest("[data-kinds]").hidden;
  const within = $("watch-within").value.trim();
  if (uses("watch-within") && within) {
    body.within_s = parseDuration(within);
    if (!Number.isFinite(body.within_s)) return watchError(`“Within” must be a duration such as 90s, 10m, 2h or 7d, not “${within}”.`);
  }
  if (uses("watch-by")) body.by_time = $("watch-by").value.trim();
  if (uses("watch-then")) body.then = $("watch-then").value.trim();
  if (uses("watch-period")) body.period = $("watch-period").value;
  const hook = $("watch-webhook").value.trim();
  if (hook) body.webhook_url = hook;
  if (!body.query) return watchError("Say what to watch for.");
  watchError("");
  $("watch-secret").hidden = true;
  busy(form, true);
  try {
    const r = await api("/v1/watches", { method: "POST", json: body });
    for (const id of ["watch-query", "watch-within", "watch-by", "watch-then", "watch-webhook"]) $(id).value = "";
    if (r.webhook_secret) showSecret(r.watch, r.webhook_secret);
    toast(`Watching for “${r.watch?.query || body.query}”.`, "info");
    await refreshWatches();
  } catch (err) {
    watchError(err.status === 400 || err.status === 422 ? err.message : `Could not add the watch: ${err.message}`);
  } finally {
    busy(form, false);
  }
}

/** The webhook secret, shown once: the server never returns it again. */
function showSecret(watch, secret) {
  const box = clear($("watch-secret"));
  const done = el("button", { type: "button", class: "btn btn-small", text: "I have copied it" });
  done.addEventListener("click", () => {
    clear(box).hidden = true;
  });
  box.append(
    el("p", { text: `Webhook secret for “${watch?.query || ""}”: shown only now. Check X-Episodic-Signature with it.` }),
    el("code", { class: "secret-value", text: secret }),
    done,
  );
  box.hidden = false;
}

async function removeWatch(w, button) {
  if (!window.confirm(`Remove the watch “${w.query}”? Its alerts stop.`)) return;
  button.disabled = true;
  try {
    await api(`/v1/watches/${encodeURIComponent(w.id)}`, { method: "DELETE" });
    toast(`Removed the watch “${w.query}”.`, "info");
  } catch (err) {
    toast(`Could not remove the watch: ${err.message}`);
  }
  try {
    await refreshWatches();
  } catch {
    button.disabled = false;
  }
}

async function pollAlerts() {
  if (!alertsState.on || document.hidden) return;
  try {
    const body = await api(`/v1/alerts${qs({ after_seq: alertsState.after })}`, { quiet401: true });
    const alerts = body.alerts || [];
    if (!alerts.length) {
      if (!$("alert-list").childElementCount) $("alert-list").append(el("p", { class: "muted empty", text: "No alerts yet." }));
      return;
    }
    $("alert-list").querySelector(".empty")?.remove();
    const frag = document.createDocumentFragment();
    for (const a of alerts.slice().reverse()) {
      frag.append(
        momentCard(
          { stream_id: a.stream_id, segment_id: (a.segment_ids || [])[0], t_start: a.t_start, t_end: a.t_end },
          { lines: [a.message], chips: [a.kind, a.count > 1 ? `#${a.count}` : ""].filter(Boolean), score: a.confidence, scoreLabel: "confidence", kind: "alert" },
        ),
      );
      alertsState.after = Math.max(alertsState.after, a.seq || 0);
    }
    if (body.next_after_seq) alertsState.after = Math.max(alertsState.after, body.next_after_seq);
    $("alert-list").prepend(frag);
    alertsState.seen += alerts.length;
    const count = $("alerts-count");
    count.textContent = String(alertsState.seen);
    count.hidden = false;
  } catch (err) {
    if (ABSENT.has(err.status)) {
      alertsState.on = false;
      clearInterval(alertsState.timer);
    }
  }
}

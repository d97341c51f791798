// One stream's timeline: a zoomable time axis (ruler, event bars, gaps, search hits, the
// playhead) over the event cards. Cards are built once per event in a DocumentFragment and
// shown or hidden as the view moves; thumbnails load only when a card comes near the screen.

import { api, qs, seg } from "./api.js";
import { getSegment, playAt, segmentText } from "./player.js";
import { $, clamp, clear, el, fmtAgo, fmtCount, fmtDuration, fmtRange, fmtTime, toast } from "./util.js";

const PAGE_SIZE = 500; // the server's largest page
const ZOOMS = [7 * 86400, 86400, 6 * 3600, 3600, 1800, 600, 300, 60, 30, 10];
const TICKS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800];

const T = {
  stream: null,
  events: [],
  cards: new Map(), // event id -> card element
  total: 0, // stream end (s)
  span: 0, // seconds shown
  v0: 0, // first second shown
  marks: [], // search hits in this stream
  load: 0, // bumps on every stream switch: late pages of the previous stream are dropped
  playhead: null,
  activeId: "",
  glanceLoaded: "",
};

let thumbObserver = null;
const thumbQueue = [];
let thumbsInFlight = 0;

export function initTimeline() {
  $("zoom-in").addEventListener("click", () => zoomStep(+1));
  $("zoom-out").addEventListener("click", () => zoomStep(-1));
  $("zoom-span").addEventListener("change", (e) => setSpan(Number(e.target.value)));
  $("pan").addEventListener("input", (e) => setView(Number(e.target.value), T.span));
  $("track").addEventListener("click", onTrackClick);
  $("track").addEventListener("wheel", onWheel, { passive: false });
  $("glance").addEventListener("toggle", () => {
    if ($("glance").open) loadGlance();
  });
  window.addEventListener("resize", () => drawAxis());
  thumbObserver = new IntersectionObserver(onThumbsVisible, { rootMargin: "400px 0px" });
}

export function currentStreamId() {
  return T.stream ? T.stream.stream_id : "";
}

/** Show ``stream`` (a /v1/streams entry): load all its events, page by page. */
export async function showStream(stream) {
  const load = ++T.load;
  T.stream = stream;
  T.events = [];
  T.cards.clear();
  T.marks = T.marks.filter((m) => m.stream_id === stream.stream_id);
  T.total = Math.max(1, stream.t_end || 0);
  T.span = T.total;
  T.v0 = 0;
  T.activeId = "";
  T.glanceLoaded = "";
  for (const img of document.querySelectorAll("#cards img")) thumbObserver.unobserve(img);
  thumbQueue.length = 0;
  clear($("cards"));
  clear($("glance-list"));
  $("glance").open = false;
  $("glance").hidden = false;
  $("timeline-stream").textContent = stream.stream_id;
  $("cards").dataset.loaded = "false";
  $("cards").dataset.stream = stream.stream_id;
  describeStream(stream);
  fillZooms();
  drawAxis();
  $("timeline-status").textContent = "Loading events…";
  const started = performance.now();
  try {
    let token = "";
    do {
      const body = await api(`/v1/streams/${seg(stream.stream_id)}/events${qs({ page_size: PAGE_SIZE, page_token: token })}`);
      if (load !== T.load) return;
      addEvents(body.events || []);
      token = body.next_page_token || "";
    } while (token);
  } catch (err) {
    if (load !== T.load) return;
    $("timeline-status").textContent = `Could not load the events: ${err.message}`;
    return;
  }
  const lastEnd = T.events.reduce((m, e) => Math.max(m, e.t_end), 0);
  if (lastEnd > T.total) {
    T.total = lastEnd;
    T.span = T.total;
    fillZooms();
  }
  drawAxis();
  applyView();
  $("cards").dataset.loaded = "true";
  $("cards").dataset.count = String(T.events.length);
  requestAnimationFrame(() => {
    performance.mark("episodic:timeline-rendered");
    window.__episodicTimeline = { events: T.events.length, ms: performance.now() - started };
  });
}

function describeStream(s) {
  const bits = [`${fmtRange(0, s.t_end || 0)} (${fmtDuration(s.t_end || 0)})`, fmtCount(s.segments, "segment"), fmtCount(s.events, "event")];
  if (s.gaps && s.gaps.length) bits.push(fmtCount(s.gaps.length, "gap"));
  if (s.complete === false) bits.push(`still forming, updated ${fmtAgo(s.updated_at)}`);
  if (s.source) bits.push(s.source);
  $("timeline-meta").textContent = bits.join(" · ");
}

/** A newer /v1/streams entry for the stream shown: fetch what changed since its last final event. */
export async function refreshStream(stream) {
  if (!T.stream || stream.stream_id !== T.stream.stream_id) return;
  const before = T.stream;
  T.stream = stream;
  describeStream(stream);
  if (stream.events === before.events && stream.updated_at === before.updated_at && stream.t_end === before.t_end) return;
  if ($("cards").dataset.loaded !== "true") return;
  const load = T.load;
  const firstProvisional = T.events.find((e) => e.provisional);
  const last = T.events[T.events.length - 1];
  const from = firstProvisional ? firstProvisional.t_start : last ? last.t_start : 0;
  const fresh = [];
  try {
    let token = "";
    do {
      const body = await api(`/v1/streams/${seg(stream.stream_id)}/events${qs({ t_min: from, page_size: PAGE_SIZE, page_token: token })}`, { quiet401: true });
      if (load !== T.load) return;
      fresh.push(...(body.events || []));
      token = body.next_page_token || "";
    } while (token);
  } catch {
    return; // the next poll tries again
  }
  const wasAll = T.span >= T.total;
  const freshIds = new Set(fresh.map((e) => e.id));
  const keep = [];
  for (const e of T.events) {
    if (e.t_start >= from || freshIds.has(e.id)) {
      const card = T.cards.get(e.id);
      if (card) card.remove();
      T.cards.delete(e.id);
    } else keep.push(e);
  }
  T.events = keep;
  addEvents(fresh.sort((a, b) => a.t_start - b.t_start));
  T.total = Math.max(T.total, stream.t_end || 0, ...fresh.map((e) => e.t_end));
  if (wasAll) {
    T.span = T.total;
    T.v0 = 0;
  }
  fillZooms();
  drawAxis();
  applyView();
  $("cards").dataset.count = String(T.events.length);
}

function addEvents(events) {
  const frag = document.createDocumentFragment();
  for (const e of events) {
    T.events.push(e);
    const card = buildCard(e);
    T.cards.set(e.id, card);
    frag.append(card);
  }
  $("cards").append(frag);
  for (const e of events) {
    const img = T.cards.get(e.id).querySelector("img");
    if (img && !img.getAttribute("src")) thumbObserver.observe(img);
  }
  $("timeline-status").textContent = `${fmtCount(T.events.length, "event")} loaded…`;
  drawBars();
}

function buildCard(e) {
  const img = el("img", { alt: "", loading: "lazy", decoding: "async", width: 160, height: 90, dataset: { segmentId: e.segment_id } });
  if (e.thumbnail_url) img.src = e.thumbnail_url;
  img.addEventListener("error", () => img.closest(".thumb")?.classList.add("no-thumb"), { once: true });
  const play = el(
    "button",
    { type: "button", class: "card-play", title: "Play this moment" },
    el("span", { class: "thumb" }, img, el("span", { class: "thumb-time", text: fmtTime(e.t_start) })),
    el(
      "span",
      { class: "card-body" },
      el(
        "span",
        { class: "card-top" },
        el("span", { class: "card-time", text: fmtRange(e.t_start, e.t_end) }),
        e.provisional ? el("span", { class: "badge badge-live", text: "provisional" }) : null,
      ),
      el("span", { class: "card-summary", text: e.summary || "(no summary)" }),
    ),
  );
  play.addEventListener("click", () => {
    setActive(e.id);
    playAt(e.segment_id, e.t_start);
  });
  const more = el("details", { class: "card-more" }, el("summary", { text: "Speech and on-screen text" }), el("div", { class: "more-body" }));
  more.addEventListener("toggle", () => {
    if (more.open && !more.dataset.filled) fillMore(more, e);
  });
  return el(
    "article",
    { class: e.provisional ? "card provisional" : "card", dataset: { eventId: e.id, segmentId: e.segment_id, t0: e.t_start, t1: e.t_end } },
    play,
    more,
  );
}

async function fillMore(details, e) {
  const body = details.querySelector(".more-body");
  body.replaceChildren(el("p", { class: "muted", text: "Loading…" }));
  try {
    const segment = await getSegment(e.segment_id);
    details.dataset.filled = "1";
    body.replaceChildren(segmentText(segment));
  } catch (err) {
    body.replaceChildren(el("p", { class: "muted", text: `Could not load the segment: ${err.message}` }));
  }
}

// -- thumbnails ------------------------------------------------------------------------------
function onThumbsVisible(entries) {
  for (const entry of entries) {
    if (!entry.isIntersecting) continue;
    thumbObserver.unobserve(entry.target);
    thumbQueue.push(entry.target);
  }
  pumpThumbs();
}

function pumpThumbs() {
  while (thumbsInFlight < 4 && thumbQueue.length) {
    const img = thumbQueue.shift();
    if (!img.isConnected) continue;
    thumbsInFlight += 1;
    getSegment(img.dataset.segmentId)
      .then((s) => {
        if (s.thumbnail_url) img.src = s.thumbnail_url;
        else img.closest(".thumb")?.classList.add("no-thumb");
      })
      .catch(() => img.closest(".thumb")?.classList.add("no-thumb"))
      .finally(() => {
        thumbsInFlight -= 1;
        pumpThumbs();
      });
  }
}

// -- the view --------------------------------------------------------------------------------
function zoomChoices() {
  const out = [{ span: T.total, label: `All (${fmtDuration(T.total)})` }];
  for (const z of ZOOMS) if (z < T.total * 0.95) out.push({ span: z, label: fmtDuration(z) });
  return out;
}

function fillZooms() {
  const sel = clear($("zoom-span"));
  let matched = false;
  for (const z of zoomChoices()) {
    const opt = el("option", { value: z.span, text: z.label });
    if (Math.abs(z.span - T.span) < 1e-6) {
      opt.selected = true;
      matched = true;
    }
    sel.append(opt);
  }
  if (!matched) sel.append(el("option", { value: T.span, text: fmtDuration(T.span), selected: true }));
}

function zoomStep(dir) {
  const spans = zoomChoices().map((z) => z.span); // largest first
  const next = dir > 0 ? spans.find((s) => s < T.span - 1e-6) : spans.reverse().find((s) => s > T.span + 1e-6);
  if (next) setSpan(next);
}

function setSpan(span, centre) {
  const mid = Number.isFinite(centre) ? centre : T.v0 + T.span / 2;
  setView(mid - span / 2, span);
}

/** Show [v0, v0 + span] (clamped to the stream). */
export function setView(v0, span) {
  T.span = clamp(span, Math.min(1, T.total), T.total);
  T.v0 = clamp(v0, 0, Math.max(0, T.total - T.span));
  fillZooms();
  drawAxis();
  applyView();
}

function applyView() {
  const a = T.v0;
  const b = T.v0 + T.span;
  const all = T.span >= T.total - 1e-6;
  let shown = 0;
  for (const e of T.events) {
    const card = T.cards.get(e.id);
    const on = all || (e.t_end > a && e.t_start < b);
    if (card.hidden === on) card.hidden = !on;
    if (on) shown += 1;
  }
  const pan = $("pan");
  pan.max = String(Math.max(0, T.total - T.span));
  pan.step = "any";
  pan.value = String(T.v0);
  pan.disabled = all;
  $("track-range").textContent = all ? `Whole stream: ${fmtRange(0, T.total)}` : `Showing ${fmtRange(a, b)} of ${fmtRange(0, T.total)}`;
  $("timeline-status").textContent = T.events.length
    ? `${fmtCount(shown, "event")} shown of ${T.events.length.toLocaleString()}`
    : $("cards").dataset.loaded === "true" || !T.stream ? "No events in this stream yet." : "Loading events…";
}

function tickStep(widthPx) {
  const want = Math.max(2, Math.floor(widthPx / 90));
  for (const s of TICKS) if (T.span / s <= want) return s;
  return TICKS[TICKS.length - 1];
}

function xOf(t) {
  return ((t - T.v0) / T.span) * 100;
}

function drawAxis() {
  const ruler = clear($("ruler"));
  if (!T.stream) return;
  const width = ruler.clientWidth || 600;
  const step = tickStep(width);
  const long = T.total >= 3600;
  const frag = document.createDocumentFragment();
  for (let t = Math.ceil(T.v0 / step) * step; t <= T.v0 + T.span + 1e-6; t += step) {
    const tick = el("span", { class: "tick", text: fmtTime(t, { long }) });
    tick.style.left = `${xOf(t)}%`;
    frag.append(tick);
  }
  ruler.append(frag);
  drawBars();
}

function drawBars() {
  const track = clear($("track"));
  if (!T.stream) return;
  const a = T.v0;
  const b = T.v0 + T.span;
  const frag = document.createDocumentFragment();
  for (const g of T.stream.gaps || []) {
    if (g.t_end <= a || g.t_start >= b) continue;
    const gap = el("span", { class: "gap", title: `No recording ${fmtRange(g.t_start, g.t_end)}` });
    place(gap, g.t_start, g.t_end);
    frag.append(gap);
  }
  for (const e of T.events) {
    if (e.t_end <= a || e.t_start >= b) continue;
    const bar = el("span", { class: e.provisional ? "ev provisional" : "ev", dataset: { eventId: e.id } });
    if (e.id === T.activeId) bar.classList.add("active");
    place(bar, e.t_start, e.t_end);
    frag.append(bar);
  }
  for (const m of T.marks) {
    if (m.t_end <= a || m.t_start >= b) continue;
    const mark = el("span", { class: "hit", title: `Search hit ${fmtRange(m.t_start, m.t_end)}`, dataset: { segmentId: m.segment_id, t0: m.t_start } });
    mark.style.left = `${xOf((m.t_start + m.t_end) / 2)}%`;
    frag.append(mark);
  }
  const head = el("span", { class: "playhead", hidden: T.playhead === null || T.playhead < a || T.playhead > b });
  if (T.playhead !== null) head.style.left = `${xOf(T.playhead)}%`;
  frag.append(head);
  track.append(frag);
}

function place(node, t0, t1) {
  const left = clamp(xOf(t0), 0, 100);
  const right = clamp(xOf(t1), 0, 100);
  node.style.left = `${left}%`;
  node.style.width = `max(2px, ${(right - left).toFixed(3)}%)`;
}

function onTrackClick(ev) {
  const target = ev.target;
  if (target.dataset.eventId) {
    const e = T.events.find((x) => x.id === target.dataset.eventId);
    if (e) {
      setActive(e.id, true);
      playAt(e.segment_id, e.t_start);
    }
    return;
  }
  if (target.classList.contains("hit")) {
    playAt(target.dataset.segmentId, Number(target.dataset.t0));
    return;
  }
  const rect = $("track").getBoundingClientRect();
  const t = T.v0 + ((ev.clientX - rect.left) / rect.width) * T.span;
  if (T.span < T.total) setView(t - T.span / 2, T.span);
}

function onWheel(ev) {
  if (!ev.ctrlKey && Math.abs(ev.deltaY) < Math.abs(ev.deltaX)) {
    ev.preventDefault();
    setView(T.v0 + (ev.deltaX / 600) * T.span, T.span);
    return;
  }
  if (!ev.ctrlKey) return; // plain scrolling scrolls the page
  ev.preventDefault();
  const rect = $("track").getBoundingClientRect();
  const at = T.v0 + ((ev.clientX - rect.left) / rect.width) * T.span;
  const span = clamp(T.span * (ev.deltaY > 0 ? 1.25 : 0.8), Math.min(10, T.total), T.total);
  const frac = (at - T.v0) / T.span;
  setView(at - frac * span, span);
}

/** Mark ``eventId`` as the one playing (and scroll its card into view). */
export function setActive(eventId, scroll = false) {
  const before = T.cards.get(T.activeId);
  if (before) before.classList.remove("active");
  T.activeId = eventId || "";
  const card = T.cards.get(T.activeId);
  if (card) {
    card.classList.add("active");
    if (scroll && !card.hidden && !$("panel-timeline").hidden) card.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }
  drawBars();
}

/** Bring stream time ``t`` into view and mark the event of ``segmentId``. */
export function reveal(segmentId, t) {
  if (!T.stream) return;
  if (t < T.v0 || t > T.v0 + T.span) setView(t - T.span / 2, T.span);
  const e = T.events.find((x) => x.segment_id === segmentId) || T.events.find((x) => x.t_start <= t && t < x.t_end);
  if (e) setActive(e.id, true);
}

/** The playhead (stream time) while the player plays this stream. */
export function setPlayhead(streamId, t) {
  if (!T.stream || streamId !== T.stream.stream_id) return;
  T.playhead = t;
  const head = $("track").querySelector(".playhead");
  if (!head) return;
  const on = t >= T.v0 && t <= T.v0 + T.span;
  head.hidden = !on;
  if (on) head.style.left = `${xOf(t)}%`;
}

/** Search hits to mark on the axis and on the cards (``moments`` of any stream). */
export function setMarks(moments) {
  T.marks = moments.slice();
  const hitSegments = new Set(moments.filter((m) => T.stream && m.stream_id === T.stream.stream_id).map((m) => m.segment_id));
  for (const card of T.cards.values()) card.classList.toggle("hit", hitSegments.has(card.dataset.segmentId));
  drawBars();
}

// -- the day at a glance ---------------------------------------------------------------------
async function loadGlance() {
  if (!T.stream || T.glanceLoaded === T.stream.stream_id) return;
  const sid = T.stream.stream_id;
  const list = clear($("glance-list"));
  list.append(el("p", { class: "muted", text: "Loading…" }));
  try {
    const body = await api(`/v1/streams/${seg(sid)}/summaries${qs({ window: "10m" })}`);
    if (!T.stream || T.stream.stream_id !== sid) return;
    T.glanceLoaded = sid;
    clear(list);
    const rows = body.summaries || [];
    if (!rows.length) list.append(el("p", { class: "muted", text: "No summaries for this stream yet." }));
    const frag = document.createDocumentFragment();
    for (const w of rows) {
      const when = w.wall_start ? `${fmtRange(w.t_start, w.t_end)} · ${String(w.wall_start).replace("T", " ").slice(0, 16)}` : fmtRange(w.t_start, w.t_end);
      const row = el(
        "button",
        { type: "button", class: "glance-row", title: "Zoom to this window" },
        el("span", { class: "glance-time", text: when }),
        el("span", { class: "glance-text", text: w.text || "" }),
      );
      row.addEventListener("click", () => setView(w.t_start, Math.max(60, w.t_end - w.t_start)));
      frag.append(row);
    }
    list.append(frag);
  } catch (err) {
    if (err.status === 404 || err.status === 405 || err.status === 501) {
      $("glance").hidden = true;
      return;
    }
    clear(list).append(el("p", { class: "muted", text: `Could not load summaries: ${err.message}` }));
    toast(err.message);
  }
}

// The video player and the segment beside it: which snippet holds a moment, seeking to it, the
// segment's speech (each piece seeks), on-screen text and what was seen.

import { api, seg } from "./api.js";
import { $, clear, el, fmtRange, fmtTime, toast } from "./util.js";

const SEGMENT_TTL_MS = 4 * 60 * 1000; // signed snippet URLs expire: fetch again after a while
const cache = new Map(); // segment id -> {at, promise}

export function getSegment(id) {
  const hit = cache.get(id);
  if (hit && Date.now() - hit.at < SEGMENT_TTL_MS) return hit.promise;
  const promise = api(`/v1/segments/${seg(id)}`).then((body) => body.segment || body);
  promise.catch(() => cache.delete(id));
  cache.set(id, { at: Date.now(), promise });
  return promise;
}

export function forgetSegments() {
  cache.clear();
}

const listeners = new Set();
/** fn(streamId, streamTime) while the video plays. */
export function onPlayhead(fn) {
  listeners.add(fn);
}

let current = null; // {segment, snippet}
let likeHandler = null;

export function onLike(fn) {
  likeHandler = fn;
}

function video() {
  return $("player");
}

export function initPlayer() {
  const v = video();
  v.addEventListener("timeupdate", () => {
    if (!current) return;
    const t = current.snippet.t_start + v.currentTime;
    $("np-time").textContent = `${fmtTime(t, { tenths: true })} in ${fmtRange(current.segment.t_start, current.segment.t_end)}`;
    v.dataset.streamTime = t.toFixed(2);
    highlightPiece(t);
    for (const fn of listeners) fn(current.segment.stream_id, t);
  });
  v.addEventListener("error", () => {
    if (v.getAttribute("src")) toast("This snippet could not be played (expired link or unsupported codec).");
  });
  $("np-like").addEventListener("click", () => {
    if (current && likeHandler) likeHandler(current.segment);
  });
}

/** The snippet that holds stream time ``t`` (video first), else the nearest one. */
export function snippetFor(segment, t) {
  const snippets = (segment.snippets || []).filter((s) => s.url || s.uri);
  if (!snippets.length) return null;
  const playable = snippets.filter((s) => s.url);
  const pool = playable.length ? playable : snippets;
  const holding = pool.filter((s) => s.t_start - 1e-3 <= t && t < s.t_end + 1e-3);
  const byKind = (list) => list.find((s) => String(s.content_type || "").startsWith("video/")) || list[0];
  if (holding.length) return byKind(holding);
  let best = pool[0];
  for (const s of pool) {
    const d = t < s.t_start ? s.t_start - t : t - s.t_end;
    const bd = t < best.t_start ? best.t_start - t : t - best.t_end;
    if (d < bd) best = s;
  }
  return best;
}

/** Open ``segmentId`` in the player at stream time ``t`` (defaults to its start) and play it. */
export async function playAt(segmentId, t, { autoplay = true } = {}) {
  let segment;
  try {
    segment = await getSegment(segmentId);
  } catch (err) {
    toast(`Could not open ${segmentId}: ${err.message}`);
    return;
  }
  const at = Number.isFinite(t) ? t : segment.t_start;
  showSegment(segment, at);
  const snippet = snippetFor(segment, at);
  const v = video();
  $("player-empty").hidden = Boolean(snippet && snippet.url);
  if (!snippet || !snippet.url) {
    current = null;
    v.removeAttribute("src");
    v.load();
    $("player-empty").hidden = false;
    clear($("player-empty")).append(el("p", { text: "This segment has no playable snippet." }));
    return;
  }
  current = { segment, snippet };
  const offset = Math.max(0, at - snippet.t_start);
  $("now-playing").hidden = false;
  $("np-stream").textContent = segment.stream_id;
  $("np-time").textContent = `${fmtTime(at, { tenths: true })} in ${fmtRange(segment.t_start, segment.t_end)}`;
  v.dataset.segmentId = segment.id;
  v.dataset.streamTime = at.toFixed(2);
  v.dataset.seekTo = offset.toFixed(3);
  const url = new URL(snippet.url, location.href).href;
  const seek = () => {
    try {
      v.currentTime = offset;
    } catch {
      /* not seekable yet */
    }
  };
  if (v.src !== url) {
    v.src = url;
    v.addEventListener("loadedmetadata", seek, { once: true });
  }
  seek(); // before the metadata this sets the start position; after it, seeks
  if (autoplay) v.play().catch(() => {});
  for (const fn of listeners) fn(segment.stream_id, at);
}

function highlightPiece(t) {
  for (const b of document.querySelectorAll("#segment-detail .piece")) {
    const on = Number(b.dataset.t0) <= t && t < Number(b.dataset.t1);
    b.classList.toggle("on", on);
  }
}

function section(title, ...content) {
  return el("section", { class: "sd-section" }, el("h3", { text: title }), ...content);
}

/** The segment's speech, on-screen text and what was seen, beside the player. */
export function showSegment(segment, at) {
  const box = clear($("segment-detail"));
  box.append(
    el(
      "div",
      { class: "sd-head" },
      el("span", { class: "chip", text: segment.stream_id }),
      el("span", { class: "sd-time", text: fmtRange(segment.t_start, segment.t_end, { tenths: true }) }),
      el("code", { class: "sd-id", text: segment.id }),
    ),
  );
  box.append(segmentText(segment, { seekable: true, at }));
}

/** Speech pieces, on-screen text and the visual description of a segment, as text. With
 *  ``seekable``, each speech piece is a button that seeks the player. */
export function segmentText(segment, { seekable = false, at } = {}) {
  const frag = document.createDocumentFragment();
  const pieces = segment.transcript_pieces || [];
  if (pieces.length) {
    const list = el("ol", { class: "pieces" });
    for (const p of pieces) {
      const body = [el("span", { class: "piece-time", text: fmtTime(p.t_start, { tenths: true }) }), el("span", { class: "piece-text", text: p.text })];
      const item = seekable
        ? el("button", { type: "button", class: "piece", dataset: { t0: p.t_start, t1: p.t_end }, onclick: () => playAt(segment.id, p.t_start) }, ...body)
        : el("span", { class: "piece", dataset: { t0: p.t_start, t1: p.t_end } }, ...body);
      if (Number.isFinite(at) && p.t_start <= at && at < p.t_end) item.classList.add("on");
      list.append(el("li", {}, item));
    }
    frag.append(section("Speech", list));
  } else if (segment.transcript) {
    frag.append(section("Speech", el("p", { class: "said", text: segment.transcript })));
  } else {
    frag.append(section("Speech", el("p", { class: "muted", text: "Nothing was said." })));
  }
  if (segment.ocr_text) frag.append(section("On screen", el("p", { class: "ocr", text: segment.ocr_text })));
  if (segment.visual_text) frag.append(section("Seen", el("p", { class: "seen", text: segment.visual_text })));
  return frag;
}

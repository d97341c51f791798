// The episodic console: streams in the header, a timeline per stream, the player, search, ask,
// articles, and watches/alerts, over the REST API (/v1/...). No framework, no build step.

import { api, hasKey, onKeyChange, qs, setKey, setKeyPrompt } from "./api.js";
import { initAlerts, initPanels, resetAlerts, searchLike, showMoments } from "./panels.js";
import { forgetSegments, initPlayer, onLike, onPlayhead, playAt } from "./player.js";
import { currentStreamId, initTimeline, refreshStream, reveal, setPlayhead, showStream } from "./timeline.js";
import { $, clear, el, fmtAgo, fmtBytes, fmtCount, fmtDuration } from "./util.js";

const POLL_MS = 5000;
const STORAGE_EVERY = 6; // polls between storage figures (they cost the server a count)
const LIVE_WITHIN_S = 120; // a stream updated this recently and not complete is live

const app = { streams: [], polls: 0, timer: 0, loading: false };

// -- the API key -----------------------------------------------------------------------------
function askForKey(reason) {
  return new Promise((resolve) => {
    const dlg = $("key-dialog");
    $("key-reason").textContent = reason || "This server answers only callers with an API key.";
    $("key-input").value = "";
    $("key-forget").hidden = !hasKey();
    dlg.returnValue = "";
    dlg.addEventListener(
      "close",
      () => {
        const value = $("key-input").value.trim();
        $("key-input").value = "";
        if (dlg.returnValue === "use" && value) {
          setKey(value);
          resolve(value);
        } else {
          if (dlg.returnValue === "forget") setKey("");
          resolve(null);
        }
      },
      { once: true },
    );
    if (!dlg.open) dlg.showModal();
    $("key-input").focus();
  });
}

function updateKeyButton() {
  const b = $("key-button");
  b.textContent = hasKey() ? "Key ✓" : "Key";
  b.title = hasKey() ? "An API key is in use (this tab only). Change or forget it." : "Enter an API key";
}

// -- streams ---------------------------------------------------------------------------------
function liveState(s, now = Date.now() / 1000) {
  if (s.complete === false && s.updated_at && now - s.updated_at < LIVE_WITHIN_S) return "live";
  if (s.complete === false) return "incomplete";
  return "";
}

function streamChip(s, selected) {
  const state = liveState(s);
  const meta = [fmtDuration(s.t_end || 0), fmtCount(s.segments, "segment")];
  if (s.storage && Number.isFinite(s.storage.snippet_bytes)) meta.push(fmtBytes(s.storage.snippet_bytes));
  const chip = el(
    "button",
    {
      type: "button",
      class: `stream-chip${state ? ` is-${state}` : ""}`,
      "aria-pressed": selected ? "true" : "false",
      title: `${s.stream_id}: updated ${fmtAgo(s.updated_at)}${s.source ? ` · ${s.source}` : ""}`,
      dataset: { streamId: s.stream_id },
    },
    el("span", { class: "sc-name" }, el("span", { class: "sc-id", text: s.stream_id }), state ? el("span", { class: `badge badge-${state}`, text: state }) : null),
    el("span", { class: "sc-meta", text: meta.join(" · ") }),
  );
  chip.addEventListener("click", () => selectStream(s.stream_id));
  return chip;
}

function renderStreams() {
  const nav = clear($("streams"));
  const sid = currentStreamId();
  if (!app.streams.length) {
    nav.append(el("p", { class: "muted streams-empty", text: "No streams yet: episodic ingest a.mp4" }));
    return;
  }
  const frag = document.createDocumentFragment();
  for (const s of app.streams) frag.append(streamChip(s, s.stream_id === sid));
  nav.append(frag);
  $("poll-state").hidden = !app.streams.some((s) => liveState(s) === "live");
}

function renderScopes() {
  for (const sel of document.querySelectorAll("select.scope")) {
    const keep = sel.value;
    clear(sel).append(el("option", { value: "", text: "All streams" }));
    for (const s of app.streams) sel.append(el("option", { value: s.stream_id, text: s.stream_id }));
    sel.value = app.streams.some((s) => s.stream_id === keep) ? keep : "";
  }
}

async function fetchStreams({ storage = true, quiet = false } = {}) {
  const body = await api(`/v1/streams${qs({ with_storage: storage ? "true" : "" })}`, { quiet401: quiet });
  const fresh = body.streams || [];
  if (!storage) {
    const old = new Map(app.streams.map((s) => [s.stream_id, s]));
    for (const s of fresh) if (!s.storage && old.get(s.stream_id)?.storage) s.storage = old.get(s.stream_id).storage;
  }
  return fresh;
}

async function loadStreams() {
  app.loading = true;
  try {
    app.streams = await fetchStreams({ storage: false }); // storage figures cost a count: they follow
  } catch (err) {
    clear($("streams")).append(
      el("p", { class: "muted streams-empty", text: err.status === 401 ? "An API key is needed to see the streams." : `Could not list the streams: ${err.message}` }),
      err.status === 401 ? el("button", { type: "button", class: "btn btn-small", text: "Enter key", onclick: () => askForKey().then((k) => k && start()) }) : null,
    );
    return false;
  } finally {
    app.loading = false;
  }
  renderScopes();
  const wanted = hashStream();
  const pick = app.streams.find((s) => s.stream_id === wanted) || app.streams[0];
  renderStreams();
  fetchStreams({ storage: true, quiet: true })
    .then((withStorage) => {
      app.streams = withStorage;
      renderStreams();
    })
    .catch(() => {});
  if (pick) selectStream(pick.stream_id);
  else {
    $("timeline-stream").textContent = "No streams yet";
    $("timeline-status").textContent = "Ingest a recording (episodic ingest a.mp4) or start a worker; it shows up here.";
  }
  return true;
}

function hashStream() {
  const m = /(?:^#|&)stream=([^&]*)/.exec(location.hash);
  try {
    return m ? decodeURIComponent(m[1]) : "";
  } catch {
    return "";
  }
}

async function selectStream(sid) {
  const s = app.streams.find((x) => x.stream_id === sid);
  if (!s) return;
  if (hashStream() !== sid) history.replaceState(null, "", `#stream=${encodeURIComponent(sid)}`);
  for (const chip of document.querySelectorAll(".stream-chip")) chip.setAttribute("aria-pressed", String(chip.dataset.streamId === sid));
  if (currentStreamId() !== sid) await showStream(s);
}

async function poll() {
  if (document.hidden || app.loading) return;
  app.polls += 1;
  let fresh;
  try {
    fresh = await fetchStreams({ storage: app.polls % STORAGE_EVERY === 0, quiet: true });
  } catch {
    return;
  }
  const before = JSON.stringify(app.streams.map((s) => [s.stream_id, s.events, s.updated_at, s.complete, s.t_end]));
  const after = JSON.stringify(fresh.map((s) => [s.stream_id, s.events, s.updated_at, s.complete, s.t_end]));
  const storageChanged = fresh.some((s) => s.storage) && JSON.stringify(fresh.map((s) => s.storage)) !== JSON.stringify(app.streams.map((s) => s.storage));
  app.streams = fresh;
  if (before !== after || storageChanged) {
    renderStreams();
    renderScopes();
  } else {
    for (const chip of document.querySelectorAll(".stream-chip")) {
      const s = app.streams.find((x) => x.stream_id === chip.dataset.streamId);
      if (s) chip.title = `${s.stream_id}: updated ${fmtAgo(s.updated_at)}${s.source ? ` · ${s.source}` : ""}`;
    }
  }
  const cur = app.streams.find((s) => s.stream_id === currentStreamId());
  if (cur) refreshStream(cur);
  else if (currentStreamId() && app.streams.length) selectStream(app.streams[0].stream_id);
}

// -- tabs ------------------------------------------------------------------------------------
function showTab(name) {
  for (const tab of document.querySelectorAll(".tab")) {
    const on = tab.id === `tab-${name}`;
    tab.setAttribute("aria-selected", String(on));
    tab.tabIndex = on ? 0 : -1;
    $(tab.getAttribute("aria-controls")).hidden = !on;
  }
}

function initTabs() {
  const tabs = [...document.querySelectorAll(".tab")];
  for (const tab of tabs) {
    tab.addEventListener("click", () => showTab(tab.id.slice(4)));
    tab.addEventListener("keydown", (ev) => {
      if (ev.key !== "ArrowRight" && ev.key !== "ArrowLeft") return;
      const visible = tabs.filter((t) => !t.hidden);
      const i = visible.indexOf(tab) + (ev.key === "ArrowRight" ? 1 : -1);
      const next = visible[(i + visible.length) % visible.length];
      next.focus();
      showTab(next.id.slice(4));
    });
  }
  document.addEventListener("episodic:tab", (ev) => showTab(ev.detail));
}

// -- opening a moment ------------------------------------------------------------------------
/** Play ``segmentId`` at ``t`` and show it on its stream's timeline. */
async function openMoment(streamId, segmentId, t) {
  const playing = playAt(segmentId, t);
  if (streamId && streamId !== currentStreamId() && app.streams.some((s) => s.stream_id === streamId)) {
    await selectStream(streamId);
  }
  reveal(segmentId, t);
  await playing;
}

// -- start -----------------------------------------------------------------------------------
async function start() {
  clearInterval(app.timer);
  forgetSegments();
  resetAlerts();
  showMoments([], "");
  $("search-status").textContent = "";
  updateKeyButton();
  if (await loadStreams()) {
    app.timer = setInterval(poll, POLL_MS);
    initAlerts();
  }
}

function init() {
  setKeyPrompt(askForKey);
  initTabs();
  initPlayer();
  initTimeline();
  initPanels(openMoment);
  onPlayhead(setPlayhead);
  onLike(searchLike);
  onKeyChange(updateKeyButton);
  $("key-button").addEventListener("click", async () => {
    const before = $("key-dialog");
    await askForKey(hasKey() ? "Change or forget the API key used by this tab." : "Enter an API key.");
    if (before.returnValue === "use" || before.returnValue === "forget") start(); // another key may see other streams
  });
  window.addEventListener("hashchange", () => {
    const sid = hashStream();
    if (sid && sid !== currentStreamId()) selectStream(sid);
  });
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) poll();
  });
  start();
}

init();

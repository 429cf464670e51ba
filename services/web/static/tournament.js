/* A running tournament's page follows the tournament's public SSE stream: each event re-fetches
   the page's changing parts (`?part=live`: meta line, standings, rounds) at most once a second
   and swaps in only what changed (scroll position, opened rounds and unchanged elements stay).
   The stream has no event per card, so while any table is unfinished the parts are re-fetched
   every 5 s (live lines, a table starting); if the stream drops, every 15 s until it is back
   (it resumes from the last event id). Once the tournament is finished it stops.
   Card by card: the page also follows the public game stream of up to 4 live tables shown in
   open rounds; each of their events schedules the same re-fetch (still at most once a second),
   so a live line, with the trick in play, moves as the cards fall. */
(function () {
  "use strict";
  var root = document.getElementById("t-live");
  if (!root) { return; }
  var tid = root.dataset.tournament;
  var PART = "/tournaments/" + encodeURIComponent(tid) + "?part=live&lang=" +
             encodeURIComponent(document.documentElement.lang || "");
  var EVENTS = ["player_registered", "player_withdrew", "round_paired", "game_recorded",
                "round_closed", "tournament_finished"];
  var GAP_MS = 1000, LIVE_MS = 5000, FALLBACK_MS = 15000, RETRY_MAX_MS = 60000;
  var lastId = Number(root.dataset.version) || 0;
  var es = null, streamUp = false, retryMs = 2000;
  var busy = false, again = false, last = 0, soon = null, poll = null, pollDue = 0, parked = false;
  var touched = {}; /* rounds the reader opened or closed: their state is theirs */
  var TABLE_STREAMS = 4, tables = {}; /* game id -> EventSource of a live table followed */
  var CARD_EVENTS = ["deal_started", "contract_declared", "card_played", "trick_taken",
                     "deal_ended", "game_ended"];

  /* Follow the live tables in open rounds (at most TABLE_STREAMS); drop the others. */
  function followTables() {
    if (!window.EventSource) { return; }
    var want = {};
    if (!finished()) {
      var rows = document.querySelectorAll("#t-rounds details[open] tr.status-live[data-game]");
      Array.prototype.slice.call(rows, 0, TABLE_STREAMS).forEach(function (r) {
        want[r.dataset.game] = r.dataset.version || "0";
      });
    }
    Object.keys(tables).forEach(function (g) {
      if (!want[g]) { tables[g].close(); delete tables[g]; }
    });
    Object.keys(want).forEach(function (g) {
      if (tables[g]) { return; }
      /* from the version the row was drawn at: the table's past is already on the page */
      var src = new EventSource("/api/v1/games/" + encodeURIComponent(g) + "/events?after=" + want[g]);
      CARD_EVENTS.forEach(function (type) { src.addEventListener(type, function () { schedule(); }); });
      tables[g] = src;
    });
    root.dataset.followedTables = String(Object.keys(tables).length);
  }

  function finished() { return root.dataset.finished === "1"; }

  /* Refresh now, or as soon as one second has passed since the last one. */
  function schedule() {
    if (busy) { again = true; return; }
    if (soon) { return; }
    soon = setTimeout(run, Math.max(0, last + GAP_MS - Date.now()));
  }

  function run() {
    soon = null; busy = true; last = Date.now();
    fetch(PART, { cache: "no-store", headers: { accept: "text/html" } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) { if (html) { apply(html); } })
      .catch(function () {})
      .then(function () {
        busy = false;
        if (finished()) { stop(); return; }
        if (again) { again = false; schedule(); }
        plan();
      });
  }

  function swap(old, fresh) {
    if (old && fresh && old.innerHTML !== fresh.innerHTML) { old.innerHTML = fresh.innerHTML; }
  }

  function apply(html) {
    var tpl = document.createElement("template");
    tpl.innerHTML = html;
    var fresh = tpl.content.getElementById("t-live");
    if (!fresh) { return; }
    var x = window.scrollX, y = window.scrollY;
    swap(document.getElementById("t-meta"), fresh.querySelector("#t-meta"));
    swap(document.getElementById("standings"), fresh.querySelector("#standings"));
    var box = document.getElementById("t-rounds");
    var rounds = Array.prototype.slice.call(fresh.querySelector("#t-rounds").children);
    rounds.forEach(function (n, i) {
      var old = document.getElementById(n.id);
      if (old) {
        swap(old, n);
        if (!touched[n.id]) { old.open = n.open; }
        n = old;
      }
      if (box.children[i] !== n) { box.insertBefore(n, box.children[i] || null); }
    });
    while (box.children.length > rounds.length) { box.removeChild(box.lastElementChild); }
    ["version", "finished", "playing"].forEach(function (k) { root.dataset[k] = fresh.dataset[k]; });
    /* The parts shown are as of their version: the events up to it are taken in, whether or
       not the stream has brought them yet (it is closed once the parts say finished). */
    var v = Number(fresh.dataset.version) || 0;
    if (v > lastId) { lastId = v; root.dataset.seen = String(v); }
    window.scrollTo(x, y);
    followTables();
  }

  /* The next timed refresh: 5 s while a table is unfinished, 15 s while the stream is down. */
  function plan() {
    var ms = finished() ? 0 : root.dataset.playing !== "0" ? LIVE_MS : (streamUp ? 0 : FALLBACK_MS);
    var due = Date.now() + ms;
    if (ms && poll && pollDue <= due) { return; } /* failed reconnects must not put it off */
    clearTimeout(poll); poll = null;
    if (ms) { pollDue = due; poll = setTimeout(tick, ms); }
  }

  function tick() {
    poll = null;
    if (document.hidden) { parked = true; return; } /* a background tab waits to be seen */
    schedule();
  }

  function connect() {
    if (!window.EventSource || finished()) { return; }
    es = new EventSource("/api/v1/tournaments/" + encodeURIComponent(tid) + "/events?after=" + lastId);
    es.onopen = function () { streamUp = true; retryMs = 2000; plan(); };
    EVENTS.forEach(function (type) {
      es.addEventListener(type, function (e) {
        var id = Number(e.lastEventId);
        if (id > lastId) { lastId = id; root.dataset.seen = String(id); }
        if (type === "tournament_finished") { closeStream(); }
        schedule();
      });
    });
    /* Reconnect by hand, from the last event seen (the URL's `after` would win over the
       browser's own Last-Event-ID), backing off while the service is away. */
    es.onerror = function () {
      closeStream();
      plan();
      if (!finished()) {
        setTimeout(connect, retryMs);
        retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
      }
    };
  }

  function closeStream() {
    if (es) { es.close(); es = null; }
    streamUp = false;
  }

  function stop() {
    closeStream();
    Object.keys(tables).forEach(function (g) { tables[g].close(); delete tables[g]; });
    clearTimeout(poll); poll = null;
  }

  document.getElementById("t-rounds").addEventListener("click", function (e) {
    var s = e.target.closest && e.target.closest("summary");
    if (s && s.parentNode && s.parentNode.id) { touched[s.parentNode.id] = true; }
  });
  document.addEventListener("visibilitychange", function () {
    if (!document.hidden && parked) { parked = false; schedule(); }
  });
  connect();
  plan();
  followTables();
})();

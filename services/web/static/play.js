/* Play in the browser: the token stays in sessionStorage and goes to the JSON API as Bearer.
   Only this seat's view is ever fetched (GET /seats/{seat}); the seat's NDJSON stream wakes a
   refresh, with a slow poll as a safety net; a dropped stream is reopened (backing off from 1 s
   to 30 s, "reconnecting" shown meanwhile) and the seat's view re-read at once when it is back.
   Your turn: a banner in your seat, ▶ in the tab's title and, if the "Sound" box is ticked
   (remembered in localStorage, off by default), a short tone. When the game ends the result
   panel (`/play/{id}?part=result`) replaces the table's middle. */
(function () {
  "use strict";
  var K = window.King, T = K.t;
  var page = JSON.parse(document.getElementById("play-data").textContent);
  var gid = encodeURIComponent(page.game_id);
  var KEY = "king_token";
  var token = K.initialToken(KEY);
  var seat = null, me = null, state = null, deadline = null, acting = null;
  var streamGen = 0, pending = null, retryMs = 1000, wasMyTurn = false;
  var resultShown = page.status === "over"; /* the server rendered it */
  var SOUND = "king_sound", baseTitle = document.title;

  function api(path, opts) { return K.api(token, path, opts); }
  function showError(p) {
    var box = document.getElementById("error");
    box.textContent = "";
    if (!p) { return; }
    if (typeof p === "string") { box.textContent = p; return; }
    var msg = T.refused + ": " + (p.message || p.detail || p.title || String(p));
    if (p.code) { msg += " [" + p.code + (p.rule ? ", " + p.rule : "") + "]"; }
    if (p.strike) {
      msg += " — " + T.strike + " " + p.strike.count;
      if (p.strike.default_action && p.strike.default_action.card) { msg += " (" + K.text(p.strike.default_action.card) + ")"; }
    }
    box.textContent = msg;
  }
  function signin(show) {
    document.getElementById("signin").hidden = !show;
    document.getElementById("game").hidden = show;
  }
  function start() {
    if (!token) { signin(true); return; }
    api("/me").then(function (r) {
      if (!r.ok) {
        sessionStorage.removeItem(KEY); token = null; signin(true);
        document.getElementById("signin-error").textContent = T.refused + ": " + ((r.body && (r.body.detail || r.body.title)) || r.status);
        return;
      }
      me = r.body;
      /* this player's pending invitations (this table's among them): an answer refreshes */
      if (window.KingInvitations) { window.KingInvitations.mount(token, function () { refresh(); }); }
      return api("/games/" + gid).then(function (g) {
        signin(false);
        var seats = (g.body.view && g.body.view.players) || (g.body.game && g.body.game.seats) || [];
        seat = seats.indexOf(me.id);
        document.getElementById("whoami").textContent = T.signed_in_as + ": " + me.id + (seat >= 0 ? " · " + T.seat + " " + seat : "");
        if (seat < 0) { document.getElementById("status").textContent = T.no_seat; return; }
        refresh();
        follow();
        setInterval(refresh, 5000);
        setInterval(tick, 250);
      });
    });
  }
  function refresh() {
    if (seat === null || seat < 0) { return; }
    api("/games/" + gid + "/seats/" + seat).then(function (r) {
      /* A late answer older than the view shown carries an old deadline too: drop both. */
      if (!r.ok || (state && r.body.version < state.version)) { return; }
      deadline = r.body.deadline ? Date.parse(r.body.deadline) : null;
      render(r.body.view, r.body.version);
    });
  }
  function schedule() { if (!pending) { pending = setTimeout(function () { pending = null; refresh(); }, 80); } }
  function linkState(up) {
    document.getElementById("link-state").textContent = up ? "" : "· " + T.reconnecting;
    document.body.dataset.stream = up ? "up" : "down";
  }
  function follow() {
    var gen = ++streamGen;
    var after = state ? state.version : 0;
    fetch("/api/v1/games/" + gid + "/seats/" + seat + "/events?format=ndjson&after=" + after,
          { headers: Object.assign(K.auth(token), { accept: "application/x-ndjson" }) })
      .then(function (r) {
        if (!r.ok || !r.body) { throw new Error("stream " + r.status); }
        if (retryMs > 1000 || document.body.dataset.stream === "down") { refresh(); }
        retryMs = 1000;
        linkState(true);
        var reader = r.body.getReader(), dec = new TextDecoder(), buf = "";
        function pump() {
          return reader.read().then(function (x) {
            if (x.done) { return; }
            buf += dec.decode(x.value, { stream: true });
            var lines = buf.split("\n");
            buf = lines.pop();
            if (lines.some(function (l) { return l.trim(); })) { schedule(); }
            return pump();
          });
        }
        return pump();
      })
      .catch(function () {})
      .then(function () {
        if (gen !== streamGen || (state && state.phase === "over")) { return; }
        linkState(false);
        setTimeout(function () { if (gen === streamGen) { follow(); } }, retryMs);
        retryMs = Math.min(30000, retryMs * 2);
      });
  }
  window.addEventListener("online", function () { if (seat !== null && seat >= 0) { retryMs = 1000; follow(); } });
  function beep() {
    var AC = window.AudioContext || window.webkitAudioContext;
    if (!AC || localStorage.getItem(SOUND) !== "1") { return; }
    try {
      var ac = new AC(), o = ac.createOscillator(), g = ac.createGain();
      o.frequency.value = 660; g.gain.value = 0.08;
      o.connect(g); g.connect(ac.destination);
      o.start(); o.stop(ac.currentTime + 0.18);
      o.onended = function () { ac.close(); };
    } catch (e) { /* no sound: the banner and the title still say it */ }
  }
  function showResult() {
    if (resultShown) { return; }
    resultShown = true;
    fetch("/play/" + gid + "?part=result&lang=" + encodeURIComponent(K.I.lang))
      .then(function (r) { return r.ok ? r.text() : ""; })
      .then(function (html) {
        if (!html) { resultShown = false; return; }
        var box = document.getElementById("result-box");
        box.innerHTML = html;
        box.scrollIntoView({ block: "nearest" });
      })
      .catch(function () { resultShown = false; });
  }
  function tick() {
    var box = document.getElementById("clock");
    if (!deadline || !state || state.to_move !== seat) { box.textContent = ""; return; }
    var left = Math.max(0, (deadline - Date.now()) / 1000);
    box.textContent = T.time_left + ": " + left.toFixed(1) + " " + T.seconds;
    box.classList.toggle("low", left < 5);
  }
  /* A fresh Idempotency-Key: 128 random bits as hex (crypto.getRandomValues works on plain
     http too, unlike crypto.randomUUID). */
  function newKey() {
    var b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return Array.prototype.map.call(b, function (x) { return (x + 256).toString(16).slice(1); }).join("");
  }
  var RETRY_MS = [500, 1000, 2000, 4000];
  function act(action) {
    /* One action per decision: a second click at the same version is dropped. Not one action
       at a time: the stream can show the seat's next turn before this action's own reply
       comes back (a slow reply, quick bots), and a click on that turn must not be lost. */
    var at = state ? state.version : null;
    if (acting !== null && acting === at) { return; }
    acting = at;
    action.seat = seat;
    if (at !== null) { action.version = at; }
    function done() { if (acting === at) { acting = null; } }
    /* A request lost on the way (a dropped connection, a server restarting) is sent again
       with the same Idempotency-Key, so the service decides the action once whatever the
       tries; so is one whose first try is still being decided. After the last try the
       page says so and shows the game as it is. */
    var key = newKey(), tries = 0;
    function again() {
      if (tries >= RETRY_MS.length) {
        done();
        showError(T.not_sent);
        refresh();
        return;
      }
      setTimeout(send, RETRY_MS[tries++]);
    }
    function send() {
      api("/games/" + gid + "/actions", {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify(action)
      }).then(function (r) {
        if (r.status === 409 && r.body && r.body.code === "idempotency_key_in_progress") { again(); return; }
        done();
        if (r.ok) { showError(null); render(r.body.view, r.body.version); refresh(); }
        else { showError(r.body); refresh(); }
      }, again);
    }
    send();
  }
  function trickEl(tr) {
    var wrap = K.el("div", "mini-trick");
    tr.cards.forEach(function (c, j) {
      var s = (tr.leader + j) % 4;
      var item = K.el("span", "mini" + (tr.winner === s ? " winner" : ""));
      item.appendChild(K.el("span", "who", state.players[s] + " "));
      item.appendChild(K.card(c));
      wrap.appendChild(item);
    });
    return wrap;
  }
  function render(view, version) {
    /* Several reads can be in flight (the stream's wake-ups, the poll, an action's own reply),
       and their answers can come back out of order: an older view must not replace a newer
       one, or the page would offer a move already made. Nor is the version shown built
       again (the poll and every stream wake-up read it anew): a view is the same at the same
       version, and rebuilding the hand under a press put its release on another button,
       which the browser does not count as a click: the move was lost without a word. */
    if (state && version <= state.version) {
      if (state.phase === "over") { showResult(); } /* (again, if its first fetch failed) */
      return;
    }
    view.version = version;
    state = view;
    var myTurn = view.to_move === seat;
    if (!myTurn) { deadline = null; }
    var legalPlays = {}, declares = [], redeal = false;
    (view.legal || []).forEach(function (a) {
      if (a.type === "play") { legalPlays[a.card] = true; }
      else if (a.type === "declare") { declares.push(a.contract); }
      else if (a.type === "redeal") { redeal = true; }
    });
    document.body.dataset.version = String(version);
    document.body.dataset.phase = view.phase;
    document.body.dataset.myTurn = myTurn ? "1" : "0";
    /* A finished game's view counts one deal past the last: say the game is over instead. */
    document.getElementById("deal-no").textContent = view.phase === "over" ? "—" :
      String(page.deal_count ? Math.min(view.deal, page.deal_count) : view.deal) +
      (page.deal_count ? " / " + page.deal_count : "");
    document.getElementById("contract").textContent = view.contract ? K.contractName(view.contract) : "…";
    document.getElementById("declarer").textContent = view.declarer !== null ? view.players[view.declarer] : "";
    var st = document.getElementById("status");
    var cue = document.getElementById("turn-cue");
    cue.hidden = !myTurn || view.phase === "over";
    cue.textContent = "▶ " + T.your_turn + (view.phase === "declaring" ? " — " + T.declare : "");
    document.getElementById("game").classList.toggle("my-turn", myTurn && view.phase !== "over");
    document.title = (myTurn && view.phase !== "over" ? "▶ " : "") + baseTitle;
    if (myTurn && !wasMyTurn && view.phase !== "over") { beep(); }
    wasMyTurn = myTurn;
    /* Over: no hand left to hold (the pinned panel on a phone would be an empty box). */
    document.getElementById("myhand").hidden = view.phase === "over";
    if (view.phase === "over") { st.textContent = T.game_over; showResult(); }
    else if (myTurn) { st.textContent = "▶ " + T.your_turn + (view.phase === "declaring" ? " — " + T.declare : ""); }
    else if (view.to_move !== null) { st.textContent = T.waiting_for + ": " + view.players[view.to_move]; }
    else { st.textContent = ""; }
    /* seats: place me at the bottom */
    for (var i = 0; i < 4; i++) {
      var s = (seat + i) % 4;
      var box = document.getElementById("seat-" + i);
      box.querySelector(".name").textContent = view.players[s] + (s === seat ? " (" + T.you + ")" : "");
      box.querySelector(".role").textContent = view.declarer === s ? "(" + T.declarer + ")" : "";
      box.querySelector(".tw").textContent = T.tricks_won + ": " + (view.tricks_won[s] || 0);
      box.classList.toggle("to-move", view.to_move === s);
    }
    var tricks = view.tricks || [];
    var cur = tricks.length && tricks[tricks.length - 1].winner === null ? tricks[tricks.length - 1] : null;
    for (var j = 0; j < 4; j++) { document.getElementById("slot-" + j).textContent = ""; }
    if (cur) {
      cur.cards.forEach(function (c, n) {
        var s2 = (cur.leader + n) % 4;
        document.getElementById("slot-" + ((s2 - seat + 4) % 4)).appendChild(K.card(c, { cls: "played" }));
      });
    }
    var done = tricks.filter(function (x) { return x.winner !== null; });
    var lt = document.getElementById("last-trick");
    lt.textContent = "";
    if (done.length) {
      lt.appendChild(K.el("h3", null, T.last_trick + " (" + done.length + ")"));
      lt.appendChild(trickEl(done[done.length - 1]));
    }
    var body = document.querySelector("#scores tbody");
    body.textContent = "";
    for (var q = 0; q < 4; q++) {
      var tr = document.createElement("tr");
      [view.players[q], String(view.tricks_won[q] || 0), String(view.deal_scores[q] || 0), String(view.totals[q])]
        .forEach(function (v) { tr.appendChild(K.el("td", null, v)); });
      body.appendChild(tr);
    }
    var dec = document.getElementById("declare");
    dec.textContent = "";
    if (myTurn && view.phase === "declaring") {
      declares.forEach(function (c) {
        var b = K.el("button", "contract-btn", K.contractName(c));
        b.type = "button"; b.dataset.contract = c;
        b.onclick = function () { act({ type: "declare", contract: c }); };
        dec.appendChild(b);
      });
      if (redeal) {
        var rb = K.el("button", "contract-btn redeal", T.ask_redeal);
        rb.type = "button"; rb.dataset.redeal = "1";
        rb.onclick = function () { act({ type: "redeal" }); };
        dec.appendChild(rb);
      }
    }
    var hand = document.getElementById("hand");
    var focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.card : null;
    hand.textContent = "";
    K.sortHand(view.hand || []).forEach(function (c) {
      var legal = myTurn && view.phase === "playing" && !!legalPlays[c];
      var b = K.card(c, { button: true, cls: legal ? "legal" : "", suffix: legal ? ", " + T.playable : "" });
      b.disabled = !legal;
      b.onclick = function () { act({ type: "play", card: c }); };
      hand.appendChild(b);
      if (focused === c && legal) { b.focus(); }
    });
    if (myTurn && view.phase === "playing" && !hand.contains(document.activeElement)) {
      var first = hand.querySelector("button.legal");
      if (first && document.activeElement === document.body) { first.focus(); }
    }
  }
  document.getElementById("signin").onsubmit = function (e) {
    e.preventDefault();
    token = document.getElementById("token").value.trim();
    sessionStorage.setItem(KEY, token);
    showError(null);
    start();
  };
  var snd = document.getElementById("sound");
  snd.checked = localStorage.getItem(SOUND) === "1";
  snd.onchange = function () { localStorage.setItem(SOUND, snd.checked ? "1" : "0"); if (snd.checked) { beep(); } };
  document.getElementById("signout").onclick = function () {
    if (token === K.SESSION) { document.querySelector("form.logout").submit(); return; }
    sessionStorage.removeItem(KEY); token = null; streamGen++; location.reload();
  };
  start();
})();

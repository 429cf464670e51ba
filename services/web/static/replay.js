/* Game replay: steps through the public record card by card (data embedded by the server:
   trick winners and running scores come from the server, the rules are never re-done here).

   Beside the table: the deal's tricks as a list (a trick reached shows its cards and winner, a
   later one only its number: nothing ahead is given away), a point of view (everyone's hands
   as the public record has them, or one seat's: its own hand, the others face down with the
   suits they have shown they lack), autoplay at a chosen speed, and the totals chart drawn up
   to the card shown (a click on it jumps there).

   Hook for other scripts (e.g. an analysis layer): after every change of position this page
   dispatches `king:replay-position` on `document`, detail = { deal (1-based entry), card,
   dealData, data, pov (seat or null), live }, and `window.KingReplay` gives
   { data(), position(), setPosition(deal, card), pov() }. An element `#replay-extras` in the
   side panel is free for such a script to fill. */
(function () {
  "use strict";
  var K = window.King, T = K.t;
  var data = JSON.parse(document.getElementById("replay-data").textContent);
  var di = 0, k = 0, following = false, pov = null, timer = null;
  var SPEEDS = [0.5, 1, 2, 4], CARD_MS = 1200;
  var COLORS = ["#1f6feb", "#d1242f", "#1a7f37", "#9a6700"];
  var DASH = ["", "6 3", "2 3", "8 3 2 3"];
  var POS = ["south", "west", "north", "east"];

  function plays(d) {
    var out = [];
    (d.tricks || []).forEach(function (tr, t) {
      tr.cards.forEach(function (c, j) {
        out.push({ seat: (tr.leader + j) % 4, card: c, trick: t });
      });
    });
    return out;
  }
  function deal() { return data.deals[di]; }
  function completedTricks(d, n) {
    var done = 0;
    (d.tricks || []).forEach(function (tr, t) {
      if (tr.winner !== null && tr.winner !== undefined && 4 * t + 4 <= n) { done = t + 1; }
    });
    return done;
  }
  function totalsBefore(i) {
    return i > 0 ? data.deals[i - 1].totals_after : [0, 0, 0, 0];
  }
  function setPos(d, c, follow) {
    if (!data.deals.length) { return; }
    di = Math.max(0, Math.min(data.deals.length - 1, d));
    k = Math.max(0, Math.min(plays(deal()).length, c));
    following = !!follow;
    render();
  }
  function atEnd() {
    return di === data.deals.length - 1 && k === plays(deal()).length;
  }
  function nextCard() {
    if (k < plays(deal()).length) { setPos(di, k + 1); } else if (di < data.deals.length - 1) { setPos(di + 1, 0); }
    if (atEnd() && data.status === "live") { following = true; render(); }
  }
  function prevCard() {
    if (k > 0) { setPos(di, k - 1); } else if (di > 0) { setPos(di - 1, plays(data.deals[di - 1]).length); }
  }
  function nextTrick() {
    var n = plays(deal()).length;
    if (k < n) { setPos(di, Math.min(n, (Math.floor(k / 4) + 1) * 4)); } else if (di < data.deals.length - 1) { setPos(di + 1, 0); }
  }
  function prevTrick() {
    if (k > 0) { setPos(di, (Math.ceil(k / 4) - 1) * 4); } else if (di > 0) { setPos(di - 1, plays(data.deals[di - 1]).length); }
  }

  /* The suits each seat has shown it lacks by the k-th card (it did not follow the led suit). */
  function voids(d, ps) {
    var out = [{}, {}, {}, {}];
    ps.slice(0, k).forEach(function (p, n) {
      var led = ps[n - (n % 4)].card[1];
      if (p.card[1] !== led) { out[p.seat][led] = true; }
    });
    return out;
  }

  function renderSeats(d, ps) {
    var played = {};
    ps.slice(0, k).forEach(function (p) { played[p.card] = true; });
    var count = [0, 0, 0, 0];
    ps.slice(0, k).forEach(function (p) { count[p.seat] += 1; });
    var done = completedTricks(d, k);
    var won = [0, 0, 0, 0];
    (d.tricks || []).slice(0, done).forEach(function (tr) { won[tr.winner] += 1; });
    var lacks = voids(d, ps);
    for (var s = 0; s < 4; s++) {
      var box = document.getElementById("seat-" + s);
      box.querySelector(".name").textContent = data.players[s];
      var role = [];
      if (d.declarer === s) { role.push(T.declarer); }
      if (d.live && d.to_move === s && atEnd()) { role.push("▶ " + T.to_move); }
      if (pov === s) { role.push(T.point_of_view); }
      box.querySelector(".role").textContent = role.length ? "(" + role.join(", ") + ")" : "";
      box.querySelector(".tw").textContent = d.redeal ? "" : T.tricks_won + ": " + won[s];
      box.classList.toggle("to-move", !!(d.live && d.to_move === s && atEnd()));
      box.classList.toggle("pov", pov === s);
      var hand = box.querySelector(".hand");
      hand.textContent = "";
      var open = d.hands && (pov === null || pov === s);
      if (open) {
        K.sortHand(d.hands[s]).forEach(function (c) {
          if (!played[c]) { hand.appendChild(K.card(c)); }
        });
      } else {
        hand.appendChild(K.el("span", "muted small", d.hands ? T.face_down : T.hidden_hand));
        hand.appendChild(K.back(13 - count[s]));
        var gone = Object.keys(lacks[s]);
        if (pov !== null && gone.length) {
          hand.appendChild(K.el("span", "lacks small", T.lacks + ": " + gone.map(function (x) { return K.suit(x); }).join(" ")));
        }
      }
    }
    return { won: won, done: done };
  }

  function renderTrick(d, ps) {
    for (var s = 0; s < 4; s++) { document.getElementById("slot-" + s).textContent = ""; }
    var note = document.getElementById("trick-note");
    note.textContent = "";
    document.querySelectorAll(".seat").forEach(function (b) { b.classList.remove("took"); });
    if (d.redeal) { note.textContent = T.redeal_note; return; }
    if (k === 0) { return; }
    var t = Math.floor((k - 1) / 4);
    var shown = ps.slice(4 * t, k);
    shown.forEach(function (p) {
      document.getElementById("slot-" + p.seat).appendChild(K.card(p.card, { cls: "played" }));
    });
    var tr = d.tricks[t];
    if (shown.length === 4 && tr.winner !== null && tr.winner !== undefined) {
      document.getElementById("slot-" + tr.winner).firstChild.classList.add("winner");
      document.getElementById("seat-" + tr.winner).classList.add("took");
      note.textContent = data.players[tr.winner] + " " + T.won_trick;
    }
  }

  function renderScores(d, info) {
    var sa = d.scores_after || [[0, 0, 0, 0]];
    var sc = sa[Math.min(info.done, sa.length - 1)];
    var before = totalsBefore(di);
    var body = document.querySelector("#scores tbody");
    body.textContent = "";
    for (var s = 0; s < 4; s++) {
      var tr = document.createElement("tr");
      [data.players[s], String(info.won[s]), String(sc[s]), String(before[s] + sc[s])].forEach(function (v) {
        tr.appendChild(K.el("td", null, v));
      });
      body.appendChild(tr);
    }
  }

  /* Each seat's total after the k-th card of deal entry i: the ended deals' totals plus this
     deal's score as of its completed tricks. */
  function totalsAt(i, c) {
    var d = data.deals[i], before = totalsBefore(i);
    if (d.redeal) { return before; }
    var sa = d.scores_after || [[0, 0, 0, 0]];
    var sc = sa[Math.min(completedTricks(d, c), sa.length - 1)];
    return before.map(function (v, s) { return v + sc[s]; });
  }

  /* The running totals, drawn only up to the card shown: nothing after it is given away. One
     step on the x axis per deal entry; a click jumps to the deal and card under the pointer. */
  function renderChart() {
    var svg = document.getElementById("chart");
    var ns = "http://www.w3.org/2000/svg";
    svg.textContent = "";
    var series = [], xs = [];
    function add(x, t) { xs.push(x); series.push(t); }
    add(0, [0, 0, 0, 0]);
    for (var i = 0; i < di; i++) {
      var n = plays(data.deals[i]).length;
      for (var c = 4; c <= n; c += 4) { add(i + c / Math.max(1, n), totalsAt(i, c)); }
      if (n === 0) { add(i + 1, totalsAt(i, 0)); }
    }
    var cur = plays(deal()).length;
    for (var c2 = 4; c2 <= k; c2 += 4) { add(di + c2 / Math.max(1, cur), totalsAt(di, c2)); }
    var here = di + (cur ? k / cur : 0), now = totalsAt(di, k);
    add(here, now);
    var lo = 0, hi = 0;
    series.forEach(function (p) { p.forEach(function (v) { lo = Math.min(lo, v); hi = Math.max(hi, v); }); });
    if (hi === lo) { hi = lo + 1; }
    var W = 320, H = 160, L = 34, R = 6, TOP = 6, B = 16;
    var span = Math.max(1, data.deals.length);
    function x(v) { return L + (W - L - R) * v / span; }
    function y(v) { return TOP + (H - TOP - B) * (hi - v) / (hi - lo); }
    function line(x1, y1, x2, y2, cls) {
      var l = document.createElementNS(ns, "line");
      l.setAttribute("x1", x1); l.setAttribute("y1", y1); l.setAttribute("x2", x2); l.setAttribute("y2", y2);
      l.setAttribute("class", cls); svg.appendChild(l);
    }
    function label(xx, yy, txt, anchor) {
      var e = document.createElementNS(ns, "text");
      e.setAttribute("x", xx); e.setAttribute("y", yy); e.setAttribute("text-anchor", anchor || "end");
      e.setAttribute("class", "axis-label"); e.textContent = txt; svg.appendChild(e);
    }
    var bg = document.createElementNS(ns, "rect");
    bg.setAttribute("x", L); bg.setAttribute("y", TOP); bg.setAttribute("width", W - L - R);
    bg.setAttribute("height", H - TOP - B); bg.setAttribute("class", "hit"); svg.appendChild(bg);
    line(L, y(0), W - R, y(0), "zero");
    if (hi !== 0) { label(L - 3, y(hi) + 4, String(hi)); }
    if (lo !== 0) { label(L - 3, y(lo), String(lo)); }
    label(L - 3, y(0) + 4, "0");
    label(L, H - 3, T.deal + " 1", "start");
    var lastDeal = data.deals.length ? data.deals[data.deals.length - 1].deal : 1;
    if (lastDeal > 1) { label(W - R, H - 3, T.deal + " " + lastDeal, "end"); }
    line(x(here), TOP, x(here), H - B, "cursor");
    for (var s = 0; s < 4; s++) {
      var pl = document.createElementNS(ns, "polyline");
      pl.setAttribute("points", series.map(function (p, j) { return x(xs[j]).toFixed(1) + "," + y(p[s]).toFixed(1); }).join(" "));
      pl.setAttribute("fill", "none");
      pl.setAttribute("stroke", COLORS[s]);
      pl.setAttribute("stroke-width", "2");
      pl.dataset.seat = String(s);
      if (DASH[s]) { pl.setAttribute("stroke-dasharray", DASH[s]); }
      svg.appendChild(pl);
    }
    svg.dataset.upTo = here.toFixed(3);
    svg.onclick = function (e) {
      var box = svg.getBoundingClientRect();
      var v = ((e.clientX - box.left) * W / box.width - L) / (W - L - R) * span;
      v = Math.max(0, Math.min(span - 1e-9, v));
      var i = Math.floor(v), n = plays(data.deals[i]).length;
      stop();
      setPos(i, Math.round((v - i) * n / 4) * 4);
    };
    var legend = document.getElementById("legend");
    legend.textContent = "";
    for (var q = 0; q < 4; q++) {
      var li = K.el("li");
      var sw = document.createElementNS(ns, "svg");
      sw.setAttribute("width", "28"); sw.setAttribute("height", "8"); sw.setAttribute("aria-hidden", "true");
      var ln = document.createElementNS(ns, "line");
      ln.setAttribute("x1", "0"); ln.setAttribute("y1", "4"); ln.setAttribute("x2", "28"); ln.setAttribute("y2", "4");
      ln.setAttribute("stroke", COLORS[q]); ln.setAttribute("stroke-width", "2");
      if (DASH[q]) { ln.setAttribute("stroke-dasharray", DASH[q]); }
      sw.appendChild(ln); li.appendChild(sw);
      li.appendChild(document.createTextNode(" " + data.players[q] + ": " + now[q]));
      legend.appendChild(li);
    }
  }

  /* The deal's tricks: reached ones with their cards and winner, later ones by number only. */
  function renderTrickList(d, ps) {
    var list = document.getElementById("trick-list");
    list.textContent = "";
    var reached = k === 0 ? -1 : Math.floor((k - 1) / 4);
    /* a deal can end early (Rıfkı, the last heart, a King): its own trick count, as "Trick n / N" */
    var total = d.redeal ? 0 : (d.tricks || []).length;
    for (var t = 0; t < total; t++) {
      var li = K.el("li");
      var b = K.el("button", "trick-btn");
      b.type = "button";
      b.dataset.trick = String(t + 1);
      var tr = (d.tricks || [])[t];
      b.appendChild(K.el("span", "tno", String(t + 1)));
      if (t <= reached && tr) {
        var shown = ps.slice(4 * t, Math.min(k, 4 * t + 4));
        shown.forEach(function (p) {
          b.appendChild(K.card(p.card, { cls: "mini-card" + (shown.length === 4 && tr.winner === p.seat ? " winner" : "") }));
        });
        if (shown.length === 4 && tr.winner !== null && tr.winner !== undefined) {
          b.appendChild(K.el("span", "twin", "→ " + data.players[tr.winner]));
        }
      }
      b.setAttribute("aria-label", T.trick + " " + (t + 1));
      if (t === reached) { b.setAttribute("aria-current", "step"); }
      (function (t2) {
        b.onclick = function () { stop(); setPos(di, Math.min(plays(deal()).length, 4 * t2 + 4)); };
      })(t);
      li.appendChild(b);
      list.appendChild(li);
    }
  }

  /* A finished game's deal table: the scores of deals not yet played out at the position
     shown, the totals and the result stay hidden (no spoiler) until the end is reached or
     the reader asks for them all. */
  var revealAll = false;
  function hideAhead(ps) {
    if (data.status !== "over") { return; }
    var done = k >= ps.length ? di + 1 : di; /* deal entries fully shown */
    document.querySelectorAll("#deal-table tbody tr[data-row]").forEach(function (row) {
      row.classList.toggle("ahead", !revealAll && parseInt(row.dataset.row, 10) > done);
    });
    var end = revealAll || atEnd();
    var foot = document.getElementById("deal-totals"), res = document.getElementById("final-result");
    if (foot) { foot.classList.toggle("ahead", !end); }
    if (res) { res.hidden = !end; }
  }

  /* --- autoplay ------------------------------------------------------------------------ */
  function speed() { return parseFloat(document.getElementById("speed").value) || 1; }
  function stop() {
    if (timer) { clearInterval(timer); timer = null; }
    var b = document.getElementById("btn-play");
    b.setAttribute("aria-pressed", "false");
    b.textContent = "▶ " + T.autoplay;
  }
  function startPlay() {
    stop();
    if (atEnd()) { return; }
    var b = document.getElementById("btn-play");
    b.setAttribute("aria-pressed", "true");
    b.textContent = "⏸ " + T.pause;
    timer = setInterval(function () {
      if (atEnd()) { stop(); return; }
      nextCard();
    }, CARD_MS / speed());
  }
  function togglePlay() { if (timer) { stop(); } else { startPlay(); } }

  function fillSelect() {
    var sel = document.getElementById("deal-select");
    sel.textContent = "";
    data.deals.forEach(function (d, i) {
      var o = document.createElement("option");
      o.value = String(i);
      var name = d.redeal ? T.redeal : (d.contract ? K.contractName(d.contract) : "…");
      o.textContent = d.deal + (d.attempt ? "." + d.attempt : "") + " · " + name + (d.live ? " · " + T.live : "");
      sel.appendChild(o);
    });
  }

  function link() {
    return location.origin + location.pathname + "?deal=" + (di + 1) + "&card=" + k + (pov === null ? "" : "&seat=" + pov);
  }

  function render() {
    var d = deal();
    if (!d) { return; }
    var ps = plays(d);
    var info = renderSeats(d, ps);
    renderTrick(d, ps);
    renderScores(d, info);
    document.getElementById("deal-select").value = String(di);
    document.getElementById("contract").textContent = d.redeal ? T.redeal : (d.contract ? K.contractName(d.contract) : "…");
    document.getElementById("declarer").textContent = d.declarer !== null && d.declarer !== undefined ? data.players[d.declarer] : "";
    var tn = k === 0 ? 0 : Math.floor((k - 1) / 4) + 1;
    document.getElementById("trick-no").textContent = tn + " / " + ((d.tricks || []).length);
    document.getElementById("position").textContent =
      T.deal + " " + d.deal + (d.attempt ? "." + d.attempt : "") + "/" + data.deal_count + " · " + T.card + " " + k + "/" + ps.length;
    document.getElementById("btn-prev").disabled = di === 0 && k === 0;
    document.getElementById("btn-first").disabled = k === 0;
    document.getElementById("btn-prev-trick").disabled = di === 0 && k === 0;
    var last = di === data.deals.length - 1 && k === ps.length;
    document.getElementById("btn-next").disabled = last;
    document.getElementById("btn-next-trick").disabled = last;
    document.getElementById("btn-last").disabled = k === ps.length;
    var fb = document.getElementById("btn-follow");
    if (fb) {
      fb.setAttribute("aria-pressed", following ? "true" : "false");
      fb.textContent = "● " + (following ? T.following : T.follow_live);
    }
    var url = "?deal=" + (di + 1) + "&card=" + k + (pov === null ? "" : "&seat=" + pov);
    history.replaceState(null, "", url);
    document.getElementById("share-link").value = link();
    document.querySelectorAll("a[data-lang]").forEach(function (a) {
      a.href = location.pathname + url + "&lang=" + a.dataset.lang;
    });
    renderChart();
    renderTrickList(d, ps);
    hideAhead(ps);
    document.body.dataset.deal = String(di + 1);
    document.body.dataset.card = String(k);
    document.body.dataset.pov = pov === null ? "" : String(pov);
    var felt = document.getElementById("table");
    for (var q = 1; q < 4; q++) { felt.classList.toggle("pov-" + q, pov === q); }
    document.dispatchEvent(new CustomEvent("king:replay-position", {
      detail: { deal: di + 1, card: k, dealData: d, data: data, pov: pov, live: data.status === "live" }
    }));
  }

  function initial() {
    var q = new URLSearchParams(location.search);
    var seatQ = q.get("seat");
    if (seatQ !== null && /^[0-3]$/.test(seatQ)) { pov = parseInt(seatQ, 10); }
    fillPov();
    var m = /^#d(\d+)(?:c(\d+))?$/.exec(location.hash || "");
    var d = q.get("deal") || (m && m[1]), c = q.get("card") || (m && m[2]);
    if (d !== null && d !== undefined && d !== "") {
      var dd = parseInt(d, 10) - 1;
      var cc = c ? parseInt(c, 10) : 0;
      setPos(isNaN(dd) ? 0 : dd, isNaN(cc) ? 0 : cc, false);
    } else if (data.status === "live" && data.deals.length) {
      var lastDeal = data.deals.length - 1;
      setPos(lastDeal, plays(data.deals[lastDeal]).length, true);
    } else {
      setPos(0, 0, false);
    }
  }

  /* --- live: the public SSE stream wakes a refresh of the page's data ---------------- */
  var pending = null;
  function refresh() {
    pending = null;
    fetch(location.pathname.replace(/\/$/, "") + "/replay.json", { headers: { accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (fresh) {
        if (!fresh || !fresh.deals) { return; }
        var wasFollowing = following;
        data = fresh;
        fillSelect();
        if (wasFollowing) {
          var lastDeal = data.deals.length - 1;
          setPos(lastDeal, plays(data.deals[lastDeal]).length, true);
        } else {
          setPos(di, k, false);
        }
        var badge = document.getElementById("status-badge");
        if (badge) { badge.textContent = T["status_" + data.status]; badge.className = "badge status-" + data.status; }
        if (data.status === "over") { showAudit(); }
      });
  }
  function schedule() { if (!pending) { pending = setTimeout(refresh, 120); } }
  function showAudit() {
    fetch("/api/v1/games/" + encodeURIComponent(data.game_id) + "/audit")
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (a) {
        if (!a) { return; }
        var box = document.getElementById("audit-result");
        box.textContent = "";
        box.appendChild(K.el("p", a.ok ? "ok" : "bad", auditText(a)));
      });
  }
  /* The same words as the server-rendered result (game.html): the failing check's reason and
     the first bad event version; the hash chain's verdict first, since the replay reads it. */
  function auditText(a) {
    if (a.ok) { return "✔ " + T.audit_ok + " (" + a.events + " " + T.events + ")"; }
    var bad = (a.chain && !a.chain.ok) ? a.chain : (a.replay || {});
    return "✘ " + T.audit_bad + ": " + bad.reason + (bad.first_bad_version ? " (v" + bad.first_bad_version + ")" : "");
  }
  function live() {
    if (data.status !== "live" || !window.EventSource) { return; }
    var es = new EventSource("/api/v1/games/" + encodeURIComponent(data.game_id) + "/events?after=" + data.version);
    ["deal_started", "contract_declared", "redeal_asked", "card_played", "trick_taken", "deal_ended",
     "game_ended", "strike_recorded", "seat_abandoned", "seat_substituted"].forEach(function (type) {
      es.addEventListener(type, schedule);
    });
    es.addEventListener("seed_revealed", function () { es.close(); schedule(); });
  }

  /* --- controls ------------------------------------------------------------------------- */
  document.getElementById("btn-first").onclick = function () { setPos(di, 0); };
  document.getElementById("btn-last").onclick = function () { setPos(di, plays(deal()).length); };
  document.getElementById("btn-prev").onclick = prevCard;
  document.getElementById("btn-next").onclick = nextCard;
  document.getElementById("btn-prev-trick").onclick = prevTrick;
  document.getElementById("btn-next-trick").onclick = nextTrick;
  document.getElementById("deal-select").onchange = function (e) { setPos(parseInt(e.target.value, 10), 0); };
  var fb = document.getElementById("btn-follow");
  if (fb) {
    fb.onclick = function () {
      var lastDeal = data.deals.length - 1;
      setPos(lastDeal, plays(data.deals[lastDeal]).length, !following);
    };
  }
  function fillPov() {
    var sel = document.getElementById("pov-select");
    sel.textContent = "";
    var all = K.el("option", null, T.everyone); all.value = ""; sel.appendChild(all);
    data.players.forEach(function (p, s) {
      var o = K.el("option", null, T.seat + " " + s + ": " + p); o.value = String(s); sel.appendChild(o);
    });
    sel.value = pov === null ? "" : String(pov);
  }
  document.getElementById("pov-select").onchange = function (e) {
    pov = e.target.value === "" ? null : parseInt(e.target.value, 10);
    render();
  };
  document.getElementById("btn-play").onclick = togglePlay;
  var spoil = document.getElementById("btn-spoilers");
  if (spoil) {
    spoil.onclick = function () {
      revealAll = !revealAll;
      spoil.setAttribute("aria-pressed", revealAll ? "true" : "false");
      render();
    };
  }
  document.getElementById("speed").onchange = function () { if (timer) { startPlay(); } };
  document.getElementById("btn-copy").onclick = function () {
    var inp = document.getElementById("share-link");
    inp.select();
    if (navigator.clipboard) { navigator.clipboard.writeText(inp.value).catch(function () {}); }
    document.getElementById("copied").textContent = T.copied;
  };
  document.querySelectorAll("#deal-table a[data-deal]").forEach(function (a) {
    a.onclick = function (e) { e.preventDefault(); setPos(parseInt(a.dataset.deal, 10) - 1, 0); window.scrollTo(0, 0); };
  });
  document.addEventListener("keydown", function (e) {
    var tag = (e.target && e.target.tagName) || "";
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || e.altKey || e.ctrlKey || e.metaKey) { return; }
    var handled = true;
    if (e.key === "ArrowRight") { (e.shiftKey ? nextTrick : nextCard)(); }
    else if (e.key === "ArrowLeft") { (e.shiftKey ? prevTrick : prevCard)(); }
    else if (e.key === "Home") { setPos(di, 0); }
    else if (e.key === "End") { setPos(di, plays(deal()).length, di === data.deals.length - 1 && data.status === "live"); }
    else if (e.key === "[") { setPos(di - 1, 0); }
    else if (e.key === "]") { setPos(di + 1, 0); }
    else if ((e.key === " " && tag !== "BUTTON") || e.key === "p") { togglePlay(); }
    else { handled = false; }
    if (handled) { e.preventDefault(); }
  });
  window.KingReplay = {
    data: function () { return data; },
    position: function () { return { deal: di + 1, card: k }; },
    setPosition: function (d, c) { setPos(d - 1, c); },
    pov: function () { return pov; }
  };
  fillSelect();
  initial();
  live();
})();

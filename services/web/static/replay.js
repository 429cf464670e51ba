/* Game replay: steps through the public record card by card (data embedded by the server:
   trick winners and running scores come from the server, the rules are never re-done here). */
(function () {
  "use strict";
  var K = window.King, T = K.t;
  var data = JSON.parse(document.getElementById("replay-data").textContent);
  var di = 0, k = 0, following = false;
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

  function renderSeats(d, ps) {
    var played = {};
    ps.slice(0, k).forEach(function (p) { played[p.card] = true; });
    var count = [0, 0, 0, 0];
    ps.slice(0, k).forEach(function (p) { count[p.seat] += 1; });
    var done = completedTricks(d, k);
    var won = [0, 0, 0, 0];
    (d.tricks || []).slice(0, done).forEach(function (tr) { won[tr.winner] += 1; });
    for (var s = 0; s < 4; s++) {
      var box = document.getElementById("seat-" + s);
      box.querySelector(".name").textContent = data.players[s];
      var role = [];
      if (d.declarer === s) { role.push(T.declarer); }
      if (d.live && d.to_move === s && atEnd()) { role.push("▶ " + T.to_move); }
      box.querySelector(".role").textContent = role.length ? "(" + role.join(", ") + ")" : "";
      box.querySelector(".tw").textContent = d.redeal ? "" : T.tricks_won + ": " + won[s];
      box.classList.toggle("to-move", !!(d.live && d.to_move === s && atEnd()));
      var hand = box.querySelector(".hand");
      hand.textContent = "";
      if (d.hands) {
        K.sortHand(d.hands[s]).forEach(function (c) {
          if (!played[c]) { hand.appendChild(K.card(c)); }
        });
      } else {
        hand.appendChild(K.el("span", "muted small", T.hidden_hand));
        hand.appendChild(K.back(13 - count[s]));
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

  function renderChart() {
    var svg = document.getElementById("chart");
    var ns = "http://www.w3.org/2000/svg";
    svg.textContent = "";
    var pts = [[0, 0, 0, 0]], idx = [0];
    data.deals.forEach(function (d, i) {
      if (!d.redeal && !d.live) { pts.push(d.totals_after); idx.push(i + 1); }
    });
    var lo = 0, hi = 0;
    pts.forEach(function (p) { p.forEach(function (v) { lo = Math.min(lo, v); hi = Math.max(hi, v); }); });
    if (hi === lo) { hi = lo + 1; }
    var W = 320, H = 160, L = 34, R = 6, TOP = 6, B = 16;
    var n = Math.max(1, pts.length - 1);
    function x(i) { return L + (W - L - R) * i / n; }
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
    line(L, y(0), W - R, y(0), "zero");
    label(L - 3, y(hi) + 4, String(hi)); label(L - 3, y(lo), String(lo));
    label(L - 3, y(0) + 4, "0");
    label(W - R, H - 3, T.deal + " " + (pts.length - 1), "end");
    /* the deal being shown */
    var shown = 0;
    for (var j = 0; j < idx.length; j++) { if (idx[j] <= di + 1) { shown = j; } }
    line(x(shown), TOP, x(shown), H - B, "cursor");
    for (var s = 0; s < 4; s++) {
      var pl = document.createElementNS(ns, "polyline");
      pl.setAttribute("points", pts.map(function (p, i) { return x(i) + "," + y(p[s]); }).join(" "));
      pl.setAttribute("fill", "none");
      pl.setAttribute("stroke", COLORS[s]);
      pl.setAttribute("stroke-width", "2");
      if (DASH[s]) { pl.setAttribute("stroke-dasharray", DASH[s]); }
      svg.appendChild(pl);
    }
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
      li.appendChild(document.createTextNode(" " + data.players[q] + ": " + data.totals[q]));
      legend.appendChild(li);
    }
  }

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
    return location.origin + location.pathname + "?deal=" + (di + 1) + "&card=" + k;
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
    var url = "?deal=" + (di + 1) + "&card=" + k;
    history.replaceState(null, "", url);
    document.getElementById("share-link").value = link();
    document.querySelectorAll("a[data-lang]").forEach(function (a) {
      a.href = location.pathname + url + "&lang=" + a.dataset.lang;
    });
    renderChart();
    document.body.dataset.deal = String(di + 1);
    document.body.dataset.card = String(k);
  }

  function initial() {
    var q = new URLSearchParams(location.search);
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
    else { handled = false; }
    if (handled) { e.preventDefault(); }
  });
  fillSelect();
  initial();
  live();
})();

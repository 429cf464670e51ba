/* Analysis marks on the replay (docs/ANALYSIS.md): for a deal that has ended, each card of the
   trick shown gets a badge with its cost in points and its label, and the panel lists the
   trick's cards with the best card(s) and the declaration against the expert's choice.
   Off until the viewer turns it on (remembered in localStorage). A deal in play is never asked
   for (the server refuses it too). The position is the one replay.js writes on <body>
   (data-deal: the deal's index from 1, data-card: the cards shown). */
(function () {
  "use strict";
  var K = window.King, T = K.t;
  var panel = document.getElementById("analysis");
  var dataEl = document.getElementById("replay-data");
  if (!panel || !dataEl) { return; }
  var data = JSON.parse(dataEl.textContent);
  var toggle = document.getElementById("analysis-toggle");
  var out = document.getElementById("analysis-body");
  var KEY = "king_analysis";
  var kept = {};      /* "deal.attempt" -> the deal's analysis, or {error: text} */
  var asked = {};     /* "deal" -> true while its request runs */
  var refreshedAt = 0;

  function on() { return toggle.checked; }
  function entry() {
    var i = parseInt(document.body.dataset.deal || "0", 10);
    return data.deals[i - 1] || null;
  }
  function position() { return parseInt(document.body.dataset.card || "0", 10); }
  function points(x) { return (x > 0 ? "+" : "") + (Math.round(x * 10) / 10); }
  function labelText(label) { return label ? T["analysis_" + label] : ""; }

  function clearBadges() {
    document.querySelectorAll(".ana-badge").forEach(function (b) { b.remove(); });
  }

  /* A live page's data goes stale when a deal ends: read it again (at most every 3 s). */
  function refreshData() {
    if (data.status !== "live" || Date.now() - refreshedAt < 3000) { return; }
    refreshedAt = Date.now();
    fetch(location.pathname.replace(/\/$/, "") + "/replay.json", { headers: { accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (fresh) { if (fresh && fresh.deals) { data = fresh; render(); } })
      .catch(function () {});
  }

  function load(d) {
    if (asked[d.deal]) { return; }
    asked[d.deal] = true;
    var url = "/api/v1/games/" + encodeURIComponent(data.game_id) + "/deals/" + d.deal + "/analysis";
    fetch(url, { headers: { accept: "application/json" } })
      .then(function (r) {
        return r.json().then(function (body) {
          return { ok: r.ok, pending: r.status === 202, retry: parseInt(r.headers.get("retry-after") || "5", 10), body: body };
        });
      })
      .then(function (res) {
        if (res.pending) {  /* being computed: ask again after Retry-After */
          setTimeout(function () { asked[d.deal] = false; render(); }, 1000 * Math.max(1, res.retry || 5));
          return "pending";
        }
        if (res.ok) {
          res.body.deals.forEach(function (a) { kept[a.deal + "." + a.attempt] = a; });
        } else {
          kept[d.deal + "." + d.attempt] = { error: res.body.detail || T.analysis_failed };
        }
      })
      .catch(function () { kept[d.deal + "." + d.attempt] = { error: T.analysis_failed }; })
      .then(function (state) { if (state !== "pending") { asked[d.deal] = false; render(); } });
  }

  function declarationLine(a) {
    var decl = a.declaration;
    if (!decl) { return null; }
    var p = K.el("p", "small ana-declaration");
    var said = decl.declared_value === null ? "" : " (" + points(decl.declared_value) + ")";
    p.appendChild(document.createTextNode(T.analysis_declared + ": " + K.contractName(decl.declared) + said + " · "));
    var expert = decl.expert === "redeal" ? T.redeal : K.contractName(decl.expert);
    var value = decl.expert_value === null ? "" : " (" + points(decl.expert_value) + ")";
    p.appendChild(K.el("strong", decl.agrees ? null : "ana-differs", T.analysis_expert + ": " + expert + value + (decl.agrees ? " ✓" : "")));
    return p;
  }

  function trickTable(a, k) {
    var t = Math.floor((k - 1) / 4);
    var table = K.el("table", "list small ana-table");
    var head = K.el("tr");
    [T.player, T.card, T.analysis_cost, T.analysis_best].forEach(function (h) { head.appendChild(K.el("th", null, h)); });
    table.appendChild(K.el("thead")).appendChild(head);
    var body = K.el("tbody");
    a.cards.slice(4 * t, k).forEach(function (c) {
      var tr = K.el("tr", c.label ? "ana-" + c.label : null);
      tr.appendChild(K.el("td", null, data.players[c.seat]));
      tr.appendChild(K.el("td", null, K.text(c.card)));
      var cost = c.cost > 0 ? points(-c.cost) + (c.exact ? "" : " ~") : "0";
      tr.appendChild(K.el("td", "num", cost + (c.label ? " " + labelText(c.label) : "")));
      tr.appendChild(K.el("td", null, c.forced ? T.analysis_forced : c.best.map(K.text).join(" ")));
      body.appendChild(tr);
      badge(c);
    });
    table.appendChild(body);
    return table;
  }

  /* The badge on the card in its trick slot (when the slot shows that card). */
  function badge(c) {
    var slot = document.getElementById("slot-" + c.seat);
    var shown = slot && slot.querySelector('.card[data-card="' + c.card + '"]');
    if (!shown) { return; }
    var b = K.el("span", "ana-badge " + (c.label ? "ana-" + c.label : (c.cost > 0 ? "ana-cost" : "ana-best")));
    b.textContent = c.cost > 0 ? points(-c.cost) : "✓";
    b.title = (c.label ? labelText(c.label) + ": " : "") + T.analysis_best + " " + c.best.map(K.text).join(" ");
    shown.appendChild(b);
  }

  function render() {
    clearBadges();
    out.textContent = "";
    if (!on()) { return; }
    var d = entry();
    if (!d || d.live) {
      out.appendChild(K.el("p", "muted small", T.analysis_after_deal));
      refreshData();
      return;
    }
    if (d.redeal) { return; }
    var a = kept[d.deal + "." + d.attempt];
    if (!a) {
      out.appendChild(K.el("p", "muted small", T.analysis_loading));
      load(d);
      return;
    }
    if (a.error) { out.appendChild(K.el("p", "bad small", a.error)); return; }
    var line = declarationLine(a);
    if (line) { out.appendChild(line); }
    var k = position();
    if (k > 0) { out.appendChild(trickTable(a, k)); }
    var marks = a.cards.filter(function (c) { return c.label; }).length;
    var note = T.analysis_marks + ": " + marks + (a.exact ? "" : " · ~ " + T.analysis_estimate);
    out.appendChild(K.el("p", "muted small", note));
  }

  /* Its own styles, so the shared stylesheet stays as it is. */
  var style = document.createElement("style");
  style.textContent =
    ".card.played { position: relative; }" +
    ".ana-badge { position: absolute; top: -.7rem; right: -.9rem; font-size: .7rem; font-weight: 700; padding: 0 .25rem;" +
    " border-radius: .6rem; color: #fff; background: #57606a; line-height: 1.3; }" +
    ".ana-badge.ana-best { background: #1a7f37; }" +
    ".ana-badge.ana-inaccuracy { background: #9a6700; } .ana-badge.ana-mistake { background: #bc4c00; }" +
    ".ana-badge.ana-blunder { background: #cf222e; }" +
    ".analysis { margin: 0 0 .6rem; } .ana-table td, .ana-table th { padding: .1rem .35rem; }" +
    "tr.ana-inaccuracy td { color: #9a6700; } tr.ana-mistake td { color: #bc4c00; }" +
    "tr.ana-blunder td { color: #cf222e; font-weight: 600; }";
  document.head.appendChild(style);

  try { toggle.checked = localStorage.getItem(KEY) === "on"; } catch (e) { /* no storage */ }
  toggle.onchange = function () {
    try { localStorage.setItem(KEY, toggle.checked ? "on" : "off"); } catch (e) { /* no storage */ }
    render();
  };
  new MutationObserver(render).observe(document.body, { attributes: true, attributeFilter: ["data-deal", "data-card"] });
  render();
})();

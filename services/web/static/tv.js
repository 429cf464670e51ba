/* TV: shows the live table most worth watching (`/tv.json`: a King in reach, then the closest
   standings, then the latest deal) as its replay page in follow mode, and keeps it while it is
   live; when it ends (or none was shown) it switches to the best live table, asking every 5 s.
   With no table live it keeps the last game on screen, or says nothing is being played. */
(function () {
  "use strict";
  var K = window.King, T = K.t;
  var root = document.getElementById("tv");
  var tid = root.dataset.tournament;
  var frame = document.getElementById("tv-frame"), open = document.getElementById("tv-open");
  var empty = document.getElementById("tv-empty"), why = document.getElementById("tv-why");
  var current = null, POLL_MS = 5000;

  function show(id, table) {
    if (id !== current) {
      current = id;
      frame.src = "/games/" + encodeURIComponent(id) + "?tv=1&lang=" + encodeURIComponent(K.I.lang);
      open.href = "/games/" + encodeURIComponent(id);
    }
    frame.hidden = false; open.hidden = false; empty.hidden = true;
    root.dataset.game = id;
    var words = [];
    if (table && table.king) {
      words.push(T.tv_king + ": " + table.king.player + " (" + table.king.tricks + "/" + table.king.needs + ")");
    } else if (table) {
      words.push(T.tv_gap + ": " + table.gap);
    }
    if (table) { words.push(T.deal + " " + table.deal + "/" + table.deals); }
    why.textContent = words.join(" · ");
  }
  function poll() {
    fetch("/tv.json" + (tid ? "?tournament=" + encodeURIComponent(tid) : ""), { cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (d) {
        if (!d) { return; }
        var tables = d.tables || [];
        var mine = tables.filter(function (x) { return x.game_id === current; })[0];
        if (mine) { show(current, mine); return; }           /* still live: stay */
        if (tables.length) { show(tables[0].game_id, tables[0]); return; }
        if (current) { why.textContent = T.tv_nothing; return; } /* keep the ended game in view */
        if (d.latest_over) { show(d.latest_over, null); why.textContent = T.tv_nothing; return; }
        empty.hidden = false;
      })
      .catch(function () {})
      .then(function () { setTimeout(poll, POLL_MS); });
  }
  poll();
})();

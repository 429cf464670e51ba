/* "Your table is ready" on every page: when this tab holds a player's token (sessionStorage,
   set by signing in on a play, invitations or tournament page), the player's notice stream
   (GET /api/v1/me/events, NDJSON) announces each live game that seats it — a tournament
   round pairing it, an accepted invitation — and the banner links to its play page (not shown
   on that game's own play page). A game's end takes it off; a dropped stream is reopened. */
(function () {
  "use strict";
  var bar = document.getElementById("table-ready");
  /* a token typed into a page, else the logged-in session's cookie (body data-user) */
  var token = sessionStorage.getItem("king_token");
  var session = !token && document.body.dataset.user;
  if (!bar || !(token || session) || !window.fetch || !window.TextDecoder) { return; }
  var games = {}, retryMs = 2000;

  function draw() {
    var here = location.pathname;
    var ids = Object.keys(games).filter(function (g) { return here !== "/play/" + g; });
    bar.textContent = "";
    bar.hidden = ids.length === 0;
    if (!ids.length) { return; }
    bar.appendChild(document.createTextNode(bar.dataset.text + ": "));
    ids.forEach(function (g, i) {
      var a = document.createElement("a");
      a.href = "/play/" + encodeURIComponent(g);
      a.textContent = bar.dataset.play + " " + g;
      a.dataset.game = g;
      if (i) { bar.appendChild(document.createTextNode(" · ")); }
      bar.appendChild(a);
    });
  }
  function handle(line) {
    var n;
    try { n = JSON.parse(line); } catch (e) { return; }
    if (n.type === "game_started") { games[n.game_id] = true; }
    else if (n.type === "game_over") { delete games[n.game_id]; }
    else { return; }
    draw();
  }
  function follow() {
    fetch("/api/v1/me/events?format=ndjson",
          { credentials: "same-origin",
            headers: token ? { authorization: "Bearer " + token, accept: "application/x-ndjson" }
                           : { accept: "application/x-ndjson" } })
      .then(function (r) {
        if (r.status === 401 || r.status === 403) { token = null; session = false; return; }
        if (!r.ok || !r.body) { throw new Error("stream " + r.status); }
        retryMs = 2000;
        games = {}; /* a new stream announces every live game again */
        var reader = r.body.getReader(), dec = new TextDecoder(), buf = "";
        function pump() {
          return reader.read().then(function (x) {
            if (x.done) { return; }
            buf += dec.decode(x.value, { stream: true });
            var lines = buf.split("\n");
            buf = lines.pop();
            lines.forEach(function (l) { if (l.trim()) { handle(l); } });
            return pump();
          });
        }
        return pump();
      })
      .catch(function () {})
      .then(function () {
        if (!token && !session) { return; }
        setTimeout(follow, retryMs);
        retryMs = Math.min(60000, retryMs * 2);
      });
  }
  follow();
})();

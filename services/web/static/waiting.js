/* A table that has not started: reload the page when it starts. The public SSE stream wakes
   it at once (its first events are game_created and deal_started); a slow poll of the page's
   JSON covers a stream that cannot connect. */
(function () {
  "use strict";
  var gid = document.getElementById("waiting").dataset.game;
  var base = "/games/" + encodeURIComponent(gid);
  var done = false;
  function go() { if (!done) { done = true; location.reload(); } }
  function poll() {
    fetch(base + "/replay.json", { headers: { accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (d) { if (d && d.status !== "created") { go(); } })
      .catch(function () {});
  }
  if (window.EventSource) {
    var es = new EventSource("/api/v1/games/" + encodeURIComponent(gid) + "/events");
    ["game_created", "deal_started"].forEach(function (type) {
      es.addEventListener(type, function () { es.close(); go(); });
    });
  }
  setInterval(poll, 5000);
})();

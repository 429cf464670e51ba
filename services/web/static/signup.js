/* A tournament's sign-up panel: the player's API token (sessionStorage, this tab only, shared
   with the play page) registers its own player (POST /api/v1/tournaments/{id}/players) or
   withdraws it (DELETE .../players/{player}); the API's refusal is shown as it says it. */
(function () {
  "use strict";
  var K = window.King, T = K.t, KEY = "king_token";
  var box = document.getElementById("signup");
  if (!box) { return; }
  var tid = encodeURIComponent(box.dataset.tournament);
  var token = K.initialToken(KEY), me = null;
  var form = document.getElementById("signup-token"), mine = document.getElementById("signup-me");
  var join = document.getElementById("signup-join"), leave = document.getElementById("signup-leave");
  var status = document.getElementById("signup-status"), error = document.getElementById("signup-error");

  function reason(r) {
    var b = r.body || {};
    return T.refused + ": " + (b.detail || b.title || b.message || r.status);
  }
  function show() {
    error.textContent = "";
    if (!token) { form.hidden = false; mine.hidden = true; return; }
    K.api(token, "/me").then(function (r) {
      if (!r.ok) { sessionStorage.removeItem(KEY); token = null; form.hidden = false; mine.hidden = true; error.textContent = reason(r); return; }
      me = r.body;
      form.hidden = true; mine.hidden = false;
      document.getElementById("signup-who").textContent = T.signed_in_as + ": " + me.id;
      return K.api(token, "/tournaments/" + tid).then(function (d) {
        if (!d.ok) { error.textContent = reason(d); return; }
        var players = (d.body.tournament && d.body.tournament.players) || [];
        var entry = players.filter(function (p) { return p.id === me.id; })[0];
        var in_ = !!(entry && entry.active), out = !!(entry && !entry.active);
        /* a player who withdrew is not taken back (the API refuses): say so instead */
        join.hidden = in_ || out; leave.hidden = !in_;
        status.textContent = in_ ? T.signed_up : (out ? T.withdrew : "");
        box.dataset.registered = in_ ? "1" : (out ? "withdrawn" : "0");
      });
    });
  }
  form.onsubmit = function (e) {
    e.preventDefault();
    token = document.getElementById("signup-token-input").value.trim();
    sessionStorage.setItem(KEY, token);
    show();
  };
  document.getElementById("signup-signout").onclick = function () {
    if (token === K.SESSION) { document.querySelector("form.logout").submit(); return; }
    sessionStorage.removeItem(KEY); token = null; me = null; status.textContent = ""; show();
  };
  join.onclick = function () {
    K.api(token, "/tournaments/" + tid + "/players", { method: "POST" }).then(function (r) {
      if (!r.ok) { error.textContent = reason(r); return; }
      show();
    });
  };
  leave.onclick = function () {
    K.api(token, "/tournaments/" + tid + "/players/" + encodeURIComponent(me.id), { method: "DELETE" }).then(function (r) {
      if (!r.ok) { error.textContent = reason(r); return; }
      show();
    });
  };
  show();
})();

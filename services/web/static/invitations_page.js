/* /invitations: ask for the player's API token (kept in sessionStorage, as on the play page)
   and show the invitations panel. */
(function () {
  "use strict";
  var K = window.King, T = K.t, KEY = "king_token";
  var token = K.initialToken(KEY);

  function signin(show) {
    document.getElementById("signin").hidden = !show;
    document.getElementById("mine").hidden = show;
  }
  function start() {
    if (!token) { signin(true); return; }
    K.api(token, "/me").then(function (r) {
      if (!r.ok) {
        sessionStorage.removeItem(KEY); token = null; signin(true);
        document.getElementById("signin-error").textContent = T.refused + ": " + ((r.body && (r.body.detail || r.body.title)) || r.status);
        return;
      }
      signin(false);
      document.getElementById("whoami").textContent = T.signed_in_as + ": " + r.body.id;
      window.KingInvitations.mount(token);
    });
  }
  document.getElementById("signin").onsubmit = function (e) {
    e.preventDefault();
    token = document.getElementById("token").value.trim();
    sessionStorage.setItem(KEY, token);
    document.getElementById("signin-error").textContent = "";
    start();
  };
  document.getElementById("signout").onclick = function () {
    if (token === K.SESSION) { document.querySelector("form.logout").submit(); return; }
    window.KingInvitations.stop(); sessionStorage.removeItem(KEY); token = null; location.reload();
  };
  start();
})();

/* The pages' sign-in: the logged-in account's session (King.initialToken), or the player's
   API token (#signin, _signin.html), kept in sessionStorage (this tab only, shared with the play
   page and the tournament sign-up; a typed token wins over the session), checked against
   /api/v1/me. KingSignin.start(onIn, onOut): onIn(token, me) once signed in; the
   #signout button forgets the token (onOut first). Used by /invitations and /lobby. */
(function () {
  "use strict";
  var K = window.King, T = K.t, KEY = "king_token";

  function start(onIn, onOut) {
    var token = K.initialToken(KEY);
    var form = document.getElementById("signin"), mine = document.getElementById("mine");
    function signin(show) { form.hidden = !show; mine.hidden = show; }
    function check() {
      if (!token) { signin(true); return; }
      K.api(token, "/me").then(function (r) {
        if (!r.ok) {
          sessionStorage.removeItem(KEY); token = null; signin(true);
          document.getElementById("signin-error").textContent = T.refused + ": " + ((r.body && (r.body.detail || r.body.title)) || r.status);
          return;
        }
        signin(false);
        document.getElementById("whoami").textContent = T.signed_in_as + ": " + r.body.id;
        onIn(token, r.body);
      });
    }
    form.onsubmit = function (e) {
      e.preventDefault();
      token = document.getElementById("token").value.trim();
      sessionStorage.setItem(KEY, token);
      document.getElementById("signin-error").textContent = "";
      check();
    };
    document.getElementById("signout").onclick = function () {
      if (onOut) { onOut(); }
      // A session is ended by logging out (a CSRF-checked POST), a typed token by forgetting it.
      if (token === K.SESSION) { document.querySelector("form.logout").submit(); return; }
      sessionStorage.removeItem(KEY); token = null; location.reload();
    };
    check();
  }
  window.KingSignin = { start: start };
})();

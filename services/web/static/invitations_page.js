/* /invitations: sign in with the player's API token (signin.js) and show the invitations
   panel. */
(function () {
  "use strict";
  window.KingSignin.start(
    function (token) { window.KingInvitations.mount(token); },
    function () { window.KingInvitations.stop(); }
  );
})();

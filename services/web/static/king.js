/* Shared helpers of the King pages: words, card names and card elements. No dependencies. */
(function () {
  "use strict";
  var I = JSON.parse(document.getElementById("i18n").textContent);
  var SYM = { S: "♠", H: "♥", D: "♦", C: "♣" };
  var NAMES = {
    en: {
      suits: { S: "spades", H: "hearts", D: "diamonds", C: "clubs" },
      ranks: { A: "ace", K: "king", Q: "queen", J: "jack", T: "ten" }
    },
    tr: {
      suits: { S: "maça", H: "kupa", D: "karo", C: "sinek" },
      ranks: { A: "ası", K: "papazı", Q: "kızı", J: "valesi" }
    }
  };
  var ORDER = "23456789TJQKA";
  var SUIT_ORDER = "SHCD"; /* alternate colours in a hand */

  function rankText(r) { return r === "T" ? "10" : r; }
  function text(c) { return rankText(c[0]) + SYM[c[1]]; }
  function label(c) {
    var n = NAMES[I.lang] || NAMES.en, r = c[0], s = c[1];
    if (I.lang === "tr") {
      return n.suits[s] + " " + (n.ranks[r] || rankText(r));
    }
    return (n.ranks[r] || rankText(r)) + " of " + n.suits[s];
  }
  function sortHand(cards) {
    return cards.slice().sort(function (a, b) {
      var s = SUIT_ORDER.indexOf(a[1]) - SUIT_ORDER.indexOf(b[1]);
      return s !== 0 ? s : ORDER.indexOf(b[0]) - ORDER.indexOf(a[0]);
    });
  }
  /* A card as a span (role img) or, with opts.button, a focusable button. */
  function card(c, opts) {
    opts = opts || {};
    var el = document.createElement(opts.button ? "button" : "span");
    el.className = "card suit-" + c[1] + (opts.cls ? " " + opts.cls : "");
    el.dataset.card = c;
    if (opts.button) { el.type = "button"; } else { el.setAttribute("role", "img"); }
    el.setAttribute("aria-label", label(c) + (opts.suffix || ""));
    el.title = label(c);
    var r = document.createElement("span"); r.className = "r"; r.textContent = rankText(c[0]);
    var s = document.createElement("span"); s.className = "s"; s.textContent = SYM[c[1]];
    el.appendChild(r); el.appendChild(s);
    return el;
  }
  function back(n) {
    var el = document.createElement("span");
    el.className = "backs";
    el.textContent = n > 0 ? "🂠 × " + n : "";
    return el;
  }
  function contractName(id) { return id ? (I.contracts[id] || id) : ""; }
  function el(tag, cls, txt) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (txt !== undefined && txt !== null) { e.textContent = txt; }
    return e;
  }
  /* A page whose visitor is logged in (body data-user) acts through the session cookie: the
     token is then SESSION, and requests carry the CSRF cookie's value as x-csrftoken instead
     of a bearer token. A token typed into the page (sessionStorage) still wins. */
  var SESSION = "session";
  function initialToken(key) {
    return sessionStorage.getItem(key) || (document.body.dataset.user ? SESSION : null);
  }
  function auth(token) {
    if (token !== SESSION) { return { authorization: "Bearer " + token }; }
    var m = document.cookie.match(/(?:^|; )king_csrf=([^;]*)/);
    return m ? { "x-csrftoken": decodeURIComponent(m[1]) } : {};
  }
  /* The JSON API with a player's token as Bearer (or the session): {ok, status, body}. */
  function api(token, path, opts) {
    opts = opts || {};
    opts.credentials = "same-origin";
    opts.headers = Object.assign(auth(token), { accept: "application/json" }, opts.headers || {});
    return fetch("/api/v1" + path, opts).then(function (r) {
      var ct = r.headers.get("content-type") || "";
      var body = ct.indexOf("json") >= 0 ? r.json() : r.text();
      return body.then(function (b) { return { ok: r.ok, status: r.status, body: b }; });
    });
  }
  function suit(s) { return SYM[s] || s; }
  window.King = { I: I, t: I.t, text: text, suit: suit, label: label, card: card, back: back,
                  sortHand: sortHand, contractName: contractName, el: el, api: api,
                  auth: auth, initialToken: initialToken, SESSION: SESSION };
})();

/* The invitations panel (#invitations): the signed-in player's pending invitations, each with
   Accept and Decline, through the JSON API with the player's token (Bearer). The player's
   NDJSON stream (/api/v1/me/events) wakes a reload on every invitation notice, with a slow
   poll as a safety net. Used by /invitations and by the play page (hidden there when empty). */
(function () {
  "use strict";
  var K = window.King, T = K.t;
  var token = null, onChange = null, gen = 0, timer = null, pending = null;

  function api(path, opts) { return K.api(token, path, opts); }
  function box() { return document.getElementById("invitations"); }
  function say(id, text) { document.getElementById(id).textContent = text || ""; }
  function when(iso) {
    var d = new Date(iso);
    return isNaN(d.getTime()) ? iso : d.toLocaleString(K.I.lang === "tr" ? "tr-TR" : "en-GB");
  }
  function item(inv) {
    var li = K.el("li", "invitation");
    li.dataset.invitation = inv.id;
    li.dataset.game = inv.game_id;
    var head = K.el("p", "invitation-head");
    head.appendChild(K.el("strong", null, inv.inviter));
    head.appendChild(document.createTextNode(" " + T.invites_you + ": "));
    var link = K.el("a", null, inv.game_id);
    link.href = "/play/" + encodeURIComponent(inv.game_id);
    head.appendChild(link);
    li.appendChild(head);
    var facts = K.el("p", "muted small");
    var parts = [T.seats + ": " + inv.seats.join(", ")];
    if (inv.players && inv.players.length) { parts.push(T.players + ": " + inv.players.join(", ")); }
    if (inv.decision_seconds) { parts.push(T.decision_time + ": " + inv.decision_seconds + " " + T.seconds); }
    parts.push(T.expires + ": " + when(inv.expires_at));
    facts.textContent = parts.join(" · ");
    li.appendChild(facts);
    [["accept", T.accept], ["decline", T.decline]].forEach(function (a) {
      var b = K.el("button", "answer answer-" + a[0], a[1]);
      b.type = "button";
      b.dataset.answer = a[0];
      b.onclick = function () { answer(inv, a[0], li); };
      li.appendChild(b);
    });
    return li;
  }
  function answer(inv, how, li) {
    li.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    say("invitations-error", "");
    api("/invitations/" + encodeURIComponent(inv.id) + "/" + how, { method: "POST" }).then(function (r) {
      if (!r.ok) {
        li.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
        var p = r.body || {};
        say("invitations-error", T.refused + ": " + (p.detail || p.title || r.status) + (p.code ? " [" + p.code + "]" : ""));
      } else {
        var st = document.getElementById("invitations-status");
        st.textContent = (how === "accept" ? T.accepted : T.declined) + ": " + inv.game_id;
        if (how === "accept" && r.body.game_status === "live") {
          st.textContent += " — ";
          var go = K.el("a", "go-play", T.game_started_go);
          go.href = "/play/" + encodeURIComponent(inv.game_id);
          st.appendChild(go);
        }
      }
      load();
      if (onChange) { onChange(r.ok ? r.body : null); }
    });
  }
  /* The list as `received` says, each invitation's row kept while it is unchanged: a reload
     (the poll, any invitation notice) that built every row again put a press on Accept and
     its release on two different buttons, which the browser does not count as a click. */
  function show(list, received) {
    var rows = {};
    Array.prototype.forEach.call(list.children, function (li) { rows[li.dataset.invitation] = li; });
    received.forEach(function (inv, i) {
      var same = JSON.stringify(inv), li = rows[inv.id];
      delete rows[inv.id];
      if (!li || li.dataset.same !== same) {
        var fresh = item(inv);
        fresh.dataset.same = same;
        if (li) { list.replaceChild(fresh, li); }
        li = fresh;
      }
      if (list.children[i] !== li) { list.insertBefore(li, list.children[i] || null); }
    });
    Object.keys(rows).forEach(function (id) { list.removeChild(rows[id]); });
  }
  function load() {
    var mine = gen;
    return api("/me/invitations?status=pending").then(function (r) {
      if (mine !== gen || !r.ok) { return; }
      var received = r.body.received || [];
      show(document.getElementById("invitation-list"), received);
      var panel = box();
      document.getElementById("invitations-empty").hidden = received.length > 0;
      if (panel.dataset.hideEmpty) { panel.hidden = received.length === 0 && !document.getElementById("invitations-status").textContent; }
      document.body.dataset.invitations = String(received.length);
    });
  }
  function schedule() { if (!pending) { pending = setTimeout(function () { pending = null; load(); }, 100); } }
  function follow(mine, wait) {
    fetch("/api/v1/me/events?format=ndjson", { headers: Object.assign(K.auth(token), { accept: "application/x-ndjson" }) })
      .then(function (r) {
        if (!r.ok || !r.body) { throw new Error("stream " + r.status); }
        wait = 2000;
        var reader = r.body.getReader(), dec = new TextDecoder(), buf = "";
        function pump() {
          return reader.read().then(function (x) {
            if (x.done || mine !== gen) { return; }
            buf += dec.decode(x.value, { stream: true });
            var lines = buf.split("\n");
            buf = lines.pop();
            if (lines.some(function (l) { return l.indexOf("\"invitation") >= 0; })) { schedule(); }
            return pump();
          });
        }
        return pump();
      })
      .catch(function () {})
      .then(function () {
        if (mine === gen) { setTimeout(function () { follow(mine, Math.min(wait * 2, 60000)); }, wait); }
      });
  }
  /* Show `tok`'s invitations in #invitations and keep them current; `changed` is called after
     each answer (with the invitation as answered, or null when refused). */
  function mount(tok, changed) {
    if (!box()) { return; }
    stop();
    token = tok; onChange = changed || null;
    var mine = gen;
    load();
    follow(mine, 2000);
    timer = setInterval(load, 15000);
  }
  function stop() { gen++; if (timer) { clearInterval(timer); timer = null; } }
  window.KingInvitations = { mount: mount, stop: stop, load: load };
})();

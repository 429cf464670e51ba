/* /lobby: the open tables (GET /api/v1/lobby), kept live by the lobby's stream
   (/api/v1/lobby/events, SSE, resumed from the listing's position), and for a signed-in
   player (signin.js) the quick game, a new table, Join / Leave / Cancel, and the invitations
   panel. When a table the player sits at starts, the page goes to its play page. Every action
   goes through the JSON API with the player's token; a refusal is shown as the API says it. */
(function () {
  "use strict";
  var K = window.King, T = K.t;
  var token = null, me = null, tables = {}, source = null;

  function say(id, text) { document.getElementById(id).textContent = text || ""; }
  function reason(r) {
    var b = r.body || {};
    return T.refused + ": " + (b.detail || b.title || r.status);
  }
  function sits(t) { return !!me && t.seats.indexOf(me) >= 0; }
  // The table's start reaches the page twice (the answer to "Play now" or the last join,
  // and the lobby's stream): it leaves once, since a second assignment aborts the first
  // navigation.
  var leaving = false;
  function go(t) {
    if (t && t.play_url && !leaving) { leaving = true; location.href = t.play_url; }
  }

  function act(path, body) {
    say("lobby-error", "");
    var opts = { method: "POST" };
    if (body) { opts.body = JSON.stringify(body); opts.headers = { "content-type": "application/json" }; }
    return K.api(token, path, opts).then(function (r) {
      if (!r.ok) { say("lobby-error", reason(r)); return null; }
      return r.body;
    });
  }
  function button(label, cls, onclick) {
    var b = K.el("button", cls, label);
    b.type = "button"; b.onclick = onclick;
    return b;
  }
  function row(t) {
    var li = K.el("li", "lobby-table");
    li.dataset.table = t.id; li.dataset.status = t.status;
    var head = K.el("p", "lobby-table-head");
    head.appendChild(K.el("strong", null, t.id));
    head.appendChild(document.createTextNode(" · " + T.table_by + ": " + t.creator + " · " +
      (T["mode_" + ((t.rules && t.rules.mode) || "standard20")] || "") + " · " +
      T.decision_time + ": " + t.decision_seconds + " " + T.seconds));
    li.appendChild(head);
    var seats = K.el("ol", "lobby-seats");
    seats.start = 0;
    t.seats.forEach(function (s) { seats.appendChild(K.el("li", s ? null : "muted", s || T.free_seat)); });
    li.appendChild(seats);
    if (t.status === "full") { li.appendChild(K.el("p", "small", T.table_starting)); }
    if (token && t.status === "open") {
      var actions = K.el("p", "lobby-actions");
      var path = "/lobby/tables/" + encodeURIComponent(t.id);
      if (!sits(t)) {
        actions.appendChild(button(T.join_table, "join", function () { act(path + "/join").then(update); }));
      } else if (t.creator !== me) {
        actions.appendChild(button(T.leave_table, "leave", function () { act(path + "/leave").then(update); }));
      }
      if (t.creator === me) {
        actions.appendChild(button(T.cancel_table, "cancel", function () { act(path + "/cancel").then(update); }));
      }
      li.appendChild(actions);
    }
    return li;
  }
  function listed(t) { return t.status === "open" || t.status === "full"; }
  /* The lobby's one order: the newest table first. */
  function newer(a, b) { return a.created_at > b.created_at; }
  function render() {
    var list = document.getElementById("table-list");
    list.textContent = "";
    var shown = Object.keys(tables).map(function (k) { return tables[k]; })
      .filter(listed)
      .sort(function (a, b) { return newer(a, b) ? -1 : newer(b, a) ? 1 : 0; });
    shown.forEach(function (t) { list.appendChild(row(t)); });
    document.getElementById("tables-empty").hidden = shown.length > 0;
  }
  /* One table changed: its row alone is built again, placed (newest first) or taken away.
     Building the whole list again put a press on another table's button and its release on
     two different buttons, which the browser does not count as a click. */
  function update(t) {
    if (!t) { return; }
    tables[t.id] = t;
    if (t.status === "started" && sits(t)) { go(t); return; }
    var list = document.getElementById("table-list");
    var rows = Array.prototype.slice.call(list.children);
    var old = rows.filter(function (li) { return li.dataset.table === t.id; })[0];
    if (!listed(t)) {
      if (old) { old.remove(); }
    } else if (old) {
      old.replaceWith(row(t));
    } else {
      var later = rows.filter(function (li) {
        var other = tables[li.dataset.table];
        return other && newer(t, other);
      })[0];
      list.insertBefore(row(t), later || null);
    }
    document.getElementById("tables-empty").hidden = list.children.length > 0;
  }
  function tournaments(list) {
    var ul = document.getElementById("tournament-list");
    ul.textContent = "";
    list.forEach(function (tr) {
      var li = K.el("li", "lobby-tournament");
      li.appendChild(document.createTextNode(tr.name + " · " + tr.players.length + " " + T.n_players + " "));
      var a = K.el("a", "button", T.join_tournament);
      a.href = "/tournaments/" + encodeURIComponent(tr.id) + "#signup";
      li.appendChild(a);
      ul.appendChild(li);
    });
    document.getElementById("tournaments-empty").hidden = list.length > 0;
  }
  function follow(position) {
    if (source) { source.close(); }
    source = new EventSource("/api/v1/lobby/events?after=" + position);
    ["table_opened", "seat_taken", "seat_left", "table_started", "table_cancelled"].forEach(function (kind) {
      source.addEventListener(kind, function (e) { update(JSON.parse(e.data).data); });
    });
  }
  function load() {
    var get = token ? K.api(token, "/lobby") : fetch("/api/v1/lobby", { headers: { accept: "application/json" } })
      .then(function (r) { return r.json().then(function (b) { return { ok: r.ok, status: r.status, body: b }; }); });
    return get.then(function (r) {
      if (!r.ok) { say("lobby-error", reason(r)); return; }
      tables = {};
      r.body.tables.forEach(function (t) { tables[t.id] = t; });
      render();
      tournaments(r.body.tournaments || []);
      document.body.dataset.lobby = "ready";
      follow(r.body.position);
    });
  }

  document.getElementById("quick-game").onclick = function () {
    act("/lobby/quick-game").then(go);
  };
  document.getElementById("new-table").onsubmit = function (e) {
    e.preventDefault();
    var seats = ["person"];
    [1, 2, 3].forEach(function (n) { seats.push(document.getElementById("seat-" + n).value); });
    var body = {
      seats: seats, seat: 0,
      rules: { mode: document.getElementById("table-rules").value },
      decision_seconds: Number(document.getElementById("table-seconds").value)
    };
    act("/lobby/tables", body).then(function (t) { if (t) { say("lobby-status", T.table_opened_msg + ": " + t.id); update(t); } });
  };

  window.KingSignin.start(
    function (tok, who) { token = tok; me = who.id; window.KingInvitations.mount(token); load(); },
    function () { window.KingInvitations.stop(); }
  );
  load();  /* the tables for everyone; again once signed in, with the player's buttons */
})();

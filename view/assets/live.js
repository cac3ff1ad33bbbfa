// Live updates of a result set's page: progress, running medians and new loads, from the
// server-sent events of SET/events (see package view, live.go).
(function () {
  "use strict";
  var panel = document.getElementById("live");
  if (!panel || !window.EventSource) { return; }
  var src = new EventSource(panel.getAttribute("data-events"));
  function text(id, s) { var e = document.getElementById(id); if (e) { e.textContent = s; } }
  function cell(tr, s, cls) {
    var td = document.createElement("td");
    if (cls) { td.className = cls; }
    td.textContent = s;
    tr.appendChild(td);
    return td;
  }
  src.addEventListener("update", function (ev) {
    var u = JSON.parse(ev.data);
    text("live-made", String(u.made));
    var stale = document.getElementById("live-stale");
    if (stale) { stale.hidden = String(u.loads) === panel.getAttribute("data-loads"); }
    text("live-loads", String(u.loads));
    text("live-valid", String(u.valid));
    text("live-corrupt", String(u.corrupt || 0));
    text("live-scheduled", u.scheduled > 0 ? String(u.scheduled) : "unknown");
    text("live-updated", u.updated);
    var bar = document.getElementById("live-progress");
    if (bar && u.scheduled > 0) { bar.max = u.scheduled; bar.value = u.made; }
    var med = document.getElementById("live-medians");
    if (med) {
      med.textContent = "";
      u.groups.forEach(function (g) {
        var tr = document.createElement("tr");
        var a = document.createElement("a");
        a.href = g.href; a.textContent = g.label;
        cell(tr, "").appendChild(a);
        cell(tr, String(g.n));
        cell(tr, g.median);
        cell(tr, g.ci);
        med.appendChild(tr);
      });
    }
    var recent = document.getElementById("live-recent");
    if (recent) {
      recent.textContent = "";
      u.recent.forEach(function (l) {
        var tr = document.createElement("tr");
        if (l.fresh) { tr.className = "fresh"; }
        var a = document.createElement("a");
        a.href = l.href; a.textContent = l.label;
        cell(tr, "").appendChild(a);
        cell(tr, l.protocol);
        cell(tr, l.plt);
        cell(tr, l.outcome);
        recent.appendChild(tr);
      });
    }
  });
}());

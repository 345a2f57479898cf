// Progressive enhancement only: every page works without this file.
(function () {
  "use strict";
  // Live monitor states over Server-Sent Events (/events), driven by the server's monitor.state events.
  var live = document.querySelector("[data-live]");
  var summary = document.querySelector("[data-live-summary]");
  if (live) {
    var recount = function () {
      if (!summary) return;
      var n = function (s) { return live.querySelectorAll("[data-monitor] .st-" + s).length; };
      var all = live.querySelectorAll("[data-monitor]").length, up = n("up"), deg = n("degraded"), down = n("down");
      summary.textContent = all + (all === 1 ? " monitor: " : " monitors: ") + up + " up, " + deg + " degraded, " + down + " down, " + (all - up - deg - down) + " other.";
    };
    var reloadRows = function () {
      fetch(live.getAttribute("data-live"), { credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (t) { if (t !== null) { live.innerHTML = t; recount(); } });
    };
    if (window.EventSource) {
      var es = new EventSource("/events");
      var opened = 0;
      // the server ends a stream now and then; on reconnect, catch up on what happened meanwhile
      es.addEventListener("open", function () { if (opened++) reloadRows(); });
      es.addEventListener("state", function (e) {
        var d = JSON.parse(e.data);
        var row = live.querySelector('[data-monitor="' + d.monitorId + '"]');
        if (row) { row.outerHTML = d.html; recount(); } else reloadRows();
      });
      es.addEventListener("changed", reloadRows);
    } else {
      setInterval(reloadRows, 5000); // no EventSource: poll
    }
  }
  // Copy buttons next to read-only fields (the heartbeat ping URL).
  document.querySelectorAll("[data-copy]").forEach(function (b) {
    b.hidden = false;
    b.addEventListener("click", function () {
      var input = document.getElementById(b.getAttribute("data-copy"));
      input.select();
      var done = function () { b.textContent = "Copied"; setTimeout(function () { b.textContent = "Copy"; }, 1500); };
      if (navigator.clipboard) navigator.clipboard.writeText(input.value).then(done, function () { document.execCommand("copy"); done(); });
      else { document.execCommand("copy"); done(); }
    });
  });
  // A search field over a list of checkboxes (the maintenance window's monitors): rows that do not
  // match are hidden, checked or not, and stay in the form.
  document.querySelectorAll("[data-filter]").forEach(function (input) {
    var list = document.getElementById(input.getAttribute("data-filter"));
    if (!list) return;
    var none = list.querySelector("[data-filter-empty]");
    input.parentNode.hidden = false;
    input.addEventListener("input", function () {
      var q = input.value.trim().toLowerCase();
      var shown = 0;
      list.querySelectorAll(".check").forEach(function (row) {
        row.hidden = q !== "" && row.textContent.toLowerCase().indexOf(q) < 0;
        if (!row.hidden) shown++;
      });
      if (none) none.hidden = shown > 0;
    });
  });
  // One-off or recurring: only the chosen kind's fields show (without script, both do).
  var kinds = document.querySelectorAll("[data-kind-choice]");
  if (kinds.length) {
    var showKind = function () {
      var chosen = document.querySelector("[data-kind-choice]:checked");
      document.querySelectorAll("[data-kind]").forEach(function (p) { p.hidden = !chosen || p.getAttribute("data-kind") !== chosen.value; });
    };
    kinds.forEach(function (k) { k.addEventListener("change", showKind); });
    showKind();
  }
  // A long list of checkboxes (the monitors a monitor depends on) narrowed by a filter box.
  document.querySelectorAll("[data-filter]").forEach(function (input) {
    var list = document.getElementById(input.getAttribute("data-filter"));
    var box = input.closest("[data-filter-box]");
    if (!list) return;
    if (box) box.hidden = false;
    input.addEventListener("input", function () {
      var q = input.value.trim().toLowerCase();
      list.querySelectorAll(".check").forEach(function (row) {
        row.hidden = q !== "" && row.textContent.toLowerCase().indexOf(q) === -1;
      });
    });
  });
  // Forms that destroy something ask once more (the no-script path has its own confirm page).
  document.querySelectorAll("form[data-confirm]").forEach(function (f) {
    f.addEventListener("submit", function (e) { if (!confirm(f.getAttribute("data-confirm"))) e.preventDefault(); });
  });
})();

// Progressive enhancement only: every page works without this file.
(function () {
  "use strict";

  // Times: the server writes UTC ("2026-03-01 12:34:56 UTC") in <time datetime>; shown here as
  // "2 min ago" when recent, else as local date and time. The title keeps the UTC text for hover.
  var pad = function (n) { return (n < 10 ? "0" : "") + n; };
  var relative = function (ms) {
    var s = Math.round((ms - Date.now()) / 1000), a = Math.abs(s), past = s <= 0, text;
    if (a < 5) return past ? "just now" : "now";
    if (a < 90) text = a + " s";
    else if (a < 90 * 60) text = Math.round(a / 60) + " min";
    else if (a < 36 * 3600) text = Math.round(a / 3600) + " h";
    else return null;
    return past ? text + " ago" : "in " + text;
  };
  var local = function (d) {
    try {
      return d.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
    } catch (e) {
      return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + pad(d.getHours()) + ":" + pad(d.getMinutes());
    }
  };
  var upgradeTimes = function (root) {
    root.querySelectorAll("time[datetime]").forEach(function (t) {
      var d = new Date(t.getAttribute("datetime"));
      if (isNaN(d.getTime())) return;
      t.textContent = relative(d.getTime()) || local(d);
    });
    // the latency chart's time axis: local hours and minutes
    root.querySelectorAll("svg text[data-time]").forEach(function (t) {
      var d = new Date(t.getAttribute("data-time"));
      if (!isNaN(d.getTime())) t.textContent = pad(d.getHours()) + ":" + pad(d.getMinutes());
    });
    root.querySelectorAll("[data-tz-label]").forEach(function (t) { t.textContent = t.getAttribute("data-tz-label"); });
  };

  // Copy buttons next to read-only fields (the heartbeat ping URL, a new token).
  var bindCopy = function (root) {
    root.querySelectorAll("[data-copy]").forEach(function (b) {
      b.hidden = false;
      b.addEventListener("click", function () {
        var input = document.getElementById(b.getAttribute("data-copy"));
        input.select();
        var done = function () { b.textContent = "Copied"; setTimeout(function () { b.textContent = "Copy"; }, 1500); };
        if (navigator.clipboard) navigator.clipboard.writeText(input.value).then(done, function () { document.execCommand("copy"); done(); });
        else { document.execCommand("copy"); done(); }
      });
    });
  };
  // Forms that destroy something ask once more (the no-script path has its own confirm page).
  var bindConfirm = function (root) {
    root.querySelectorAll("form[data-confirm]").forEach(function (f) {
      f.addEventListener("submit", function (e) { if (!confirm(f.getAttribute("data-confirm"))) e.preventDefault(); });
    });
  };
  var enhance = function (root) { upgradeTimes(root); bindCopy(root); bindConfirm(root); bindSelect(root); };

  // Live updates over Server-Sent Events (/events), driven by the server's monitor.state and
  // monitor.changed events: the monitor list swaps rows, the monitor page swaps its parts.
  var live = document.querySelector("[data-live]");
  var summary = document.querySelector("[data-live-summary]");
  var detail = document.querySelector("[data-live-monitor]");
  var announce = document.querySelector("[data-live-announce]");
  // Checkboxes of the bulk actions (form "bulk"): the select-all box ticks every row of the page;
  // the ticks survive a live refresh of the rows.
  var bindSelect = function (root) {
    root.querySelectorAll("[data-select-all]").forEach(function (all) {
      all.parentNode.hidden = false;
      all.addEventListener("change", function () {
        document.querySelectorAll('[data-live] input[type=checkbox][form="bulk"]').forEach(function (b) { b.checked = all.checked; });
      });
    });
  };
  var loading = false, again = false;
  var reloadRows = function () {
    if (!live) return;
    // one fetch at a time, and one more after it when asked meanwhile: a burst of state changes
    // costs two fetches of the page, not one each
    if (loading) { again = true; return; }
    loading = true;
    var done = function () { loading = false; if (again) { again = false; reloadRows(); } };
    fetch(live.getAttribute("data-live"), { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (t) {
        if (t === null) return;
        // group sections the person closed stay closed, ticked rows stay ticked
        var closed = [], ticked = {};
        live.querySelectorAll("details[data-section]:not([open])").forEach(function (d) { closed.push(d.getAttribute("data-section")); });
        live.querySelectorAll('input[form="bulk"]:checked').forEach(function (b) { ticked[b.value] = true; });
        live.innerHTML = t;
        closed.forEach(function (k) { var d = live.querySelector('details[data-section="' + k + '"]'); if (d) d.open = false; });
        live.querySelectorAll('input[form="bulk"]').forEach(function (b) { if (ticked[b.value]) b.checked = true; });
        upgradeTimes(live);
      })
      .then(done, done);
  };
  // what the server last sent for each part, so an unchanged part (and the focus in it) stays put
  var served = {};
  var reloadDetail = function () {
    if (!detail) return;
    fetch(detail.getAttribute("data-live-src"), { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (t) {
        if (t === null) return;
        var tpl = document.createElement("template");
        tpl.innerHTML = t;
        var fresh = tpl.content.querySelectorAll("[data-live-part]");
        var names = {};
        fresh.forEach(function (part) {
          var name = part.getAttribute("data-live-part"), markup = part.outerHTML;
          names[name] = true;
          var old = detail.querySelector('[data-live-part="' + name + '"]');
          if (old && served[name] === markup) return;
          served[name] = markup;
          if (old) old.replaceWith(part);
          else detail.appendChild(part);
          enhance(part);
        });
        detail.querySelectorAll("[data-live-part]").forEach(function (p) { if (!names[p.getAttribute("data-live-part")]) p.remove(); });
      });
  };
  if (detail) detail.querySelectorAll("[data-live-part]").forEach(function (p) { served[p.getAttribute("data-live-part")] = p.outerHTML; });
  var reloadAll = function () { reloadRows(); reloadDetail(); };
  var detailId = detail ? Number(detail.getAttribute("data-live-monitor")) : null;
  if (live || detail) {
    if (window.EventSource) {
      var es = new EventSource("/events");
      var opened = 0;
      // the server ends a stream now and then; on reconnect, catch up on what happened meanwhile
      es.addEventListener("open", function () { if (opened++) reloadAll(); });
      es.addEventListener("state", function (e) {
        var d = JSON.parse(e.data);
        if (live) reloadRows();
        if (detailId === d.monitorId) {
          reloadDetail();
          if (announce) announce.textContent = "State changed to " + d.to + ".";
        }
      });
      es.addEventListener("changed", function (e) {
        reloadRows();
        if (detailId !== null && JSON.parse(e.data).monitorId === detailId) reloadDetail();
      });
    } else {
      setInterval(reloadAll, 5000); // no EventSource: poll
    }
  }
  // A search field over a list of checkboxes (a maintenance window's monitors, a monitor's parents):
  // rows that do not match are hidden, checked or not, and stay in the form.
  document.querySelectorAll("[data-filter]").forEach(function (input) {
    var list = document.getElementById(input.getAttribute("data-filter"));
    if (!list) return;
    var none = list.querySelector("[data-filter-empty]");
    (input.closest("[data-filter-box]") || input.parentNode).hidden = false;
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
  // The status page's chosen monitors: Up, Down and Remove move the rows in place (without script
  // each is a submit that shows the form again with the new order); the order is saved with the form.
  document.querySelectorAll("[data-order-list]").forEach(function (list) {
    list.addEventListener("click", function (e) {
      var b = e.target.closest("[data-order-op]");
      if (!b) return;
      e.preventDefault();
      var li = b.closest("[data-order-item]"), op = b.getAttribute("data-order-op");
      if (op === "up" && li.previousElementSibling) list.insertBefore(li, li.previousElementSibling);
      else if (op === "down" && li.nextElementSibling) list.insertBefore(li.nextElementSibling, li);
      else if (op === "remove") { li.remove(); return; }
      b.focus();
    });
  });
  // A monitor's authentication: only the chosen kind's fields show (without script, every kind's do),
  // and the section's heading names the kind chosen, as the server wrote it for the saved one.
  var authChoice = document.querySelector("[data-auth-choice]");
  if (authChoice) {
    var showAuth = function () {
      document.querySelectorAll("[data-auth]").forEach(function (p) { p.hidden = p.getAttribute("data-auth") !== authChoice.value; });
      var chosen = authChoice.options[authChoice.selectedIndex];
      document.querySelectorAll("[data-auth-label]").forEach(function (l) { if (chosen) l.textContent = chosen.textContent; });
    };
    document.querySelectorAll("[data-auth-note]").forEach(function (n) { n.hidden = true; });
    authChoice.addEventListener("change", showAuth);
    showAuth();
  }
  enhance(document);
  // relative times age: refresh them now and then
  setInterval(function () { upgradeTimes(document); }, 30000);

  // After a failed submit the server puts an error summary at the top: move there, so keyboard and
  // screen reader users start from the list of problems (each links to its field).
  var errors = document.getElementById("form-errors");
  if (errors) errors.focus();
})();

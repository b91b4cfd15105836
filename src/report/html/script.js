"use strict";
// The filter (operator, outcome, text) over every element carrying data-op, and a check of
// the page written into #self-check for the browser test. No request is made.
(function () {
  var op = document.getElementById("filter-op");
  var outcome = document.getElementById("filter-outcome");
  var text = document.getElementById("filter-text");
  var count = document.getElementById("filter-count");
  var items = Array.prototype.slice.call(document.querySelectorAll("[data-op]"));
  function apply() {
    var o = op.value, r = outcome.value, t = text.value.trim().toLowerCase();
    var shown = 0;
    items.forEach(function (el) {
      var keep = (!o || el.dataset.op === o) && (!r || el.dataset.outcome === r) &&
        (!t || el.dataset.text.indexOf(t) >= 0);
      el.hidden = !keep;
      if (keep && el.tagName === "TR") { shown++; }
    });
    var active = o || r || t;
    if (active) { document.getElementById("all-results").open = true; }
    count.textContent = active ? shown + " result(s) match" : "";
    return shown;
  }
  [op, outcome, text].forEach(function (el) {
    el.addEventListener("input", apply);
    el.addEventListener("change", apply);
  });
  window.opconformFilter = function (o, r, t) {
    op.value = o; outcome.value = r; text.value = t; return apply();
  };

  // Self-check: the banner, the failure anchors, the filter.
  var checks = [];
  function check(name, ok, detail) { checks.push({ name: name, ok: !!ok, detail: detail || "" }); }
  var banner = document.getElementById("verdict");
  check("banner", banner && /^(PASS|FAIL|INTERRUPTED|LOAD ERRORS)/.test(
    banner.querySelector(".headline").textContent), banner && banner.querySelector(".headline").textContent);
  var links = Array.prototype.slice.call(document.querySelectorAll("a[href^='#']"));
  var broken = links.filter(function (a) {
    return !document.getElementById(decodeURIComponent(a.getAttribute("href").slice(1)));
  });
  check("anchors", broken.length === 0, links.length + " links, " + broken.length + " broken" +
    (broken.length ? ": " + broken[0].getAttribute("href") : ""));
  var rows = document.querySelectorAll("tr[data-op]").length;
  var total = window.opconformFilter("", "", "");
  var firstOp = op.options.length > 1 ? op.options[1].value : "";
  var byOp = window.opconformFilter(firstOp, "", "");
  var expectOp = document.querySelectorAll("tr[data-op='" + firstOp + "']").length;
  var none = window.opconformFilter("", "", "no case has this text \u2603");
  var passOnly = window.opconformFilter("", "pass", "");
  var expectPass = document.querySelectorAll("tr[data-outcome='pass']").length;
  window.opconformFilter("", "", "");
  document.getElementById("all-results").open = false;
  check("filter", total === rows && byOp === expectOp && none === 0 && passOnly === expectPass,
    "all " + total + "/" + rows + ", " + firstOp + " " + byOp + "/" + expectOp +
    ", pass " + passOnly + "/" + expectPass + ", nonsense " + none);
  var csv = document.getElementById("csv");
  check("csv", csv && csv.getAttribute("href").indexOf("data:text/csv;base64,") === 0, "");
  var external = Array.prototype.slice.call(document.querySelectorAll("[src],link[href]"));
  check("offline", external.length === 0, external.length + " element(s) with src or link href");
  var out = document.getElementById("self-check");
  out.dataset.ok = checks.every(function (c) { return c.ok; }) ? "true" : "false";
  out.dataset.height = String(document.documentElement.scrollHeight);
  out.textContent = checks.map(function (c) {
    return (c.ok ? "ok " : "FAILED ") + c.name + ": " + c.detail;
  }).join("\n");
})();

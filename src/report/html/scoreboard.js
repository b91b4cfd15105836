// Checks the scoreboard on load and writes the outcome into #self-check (read by
// tests/browser.rs): the backend columns, every in-page anchor, relative links only, and that
// the page loaded no resource.
(function () {
  var lines = [], ok = true;
  function check(cond, text) { ok = ok && cond; lines.push((cond ? "ok " : "FAILED ") + text); }
  var heads = document.querySelectorAll("table.board")[0];
  var backends = heads ? heads.querySelectorAll("th.backend").length : 0;
  check(backends > 0, "backends: " + backends + " columns");
  var links = document.querySelectorAll("a[href]"), absolute = 0, broken = 0;
  for (var i = 0; i < links.length; i++) {
    var href = links[i].getAttribute("href");
    if (/^[a-z]+:/i.test(href) || href.charAt(0) === "/") absolute++;
    if (href.charAt(0) === "#" && !document.getElementById(href.slice(1))) broken++;
  }
  check(absolute === 0, "links: " + links.length + " relative, " + absolute + " absolute, " + broken + " broken");
  check(broken === 0, "anchors");
  var loaded = performance.getEntriesByType("resource").length;
  check(loaded === 0, "requests: " + loaded);
  var out = document.getElementById("self-check");
  out.setAttribute("data-ok", ok ? "true" : "false");
  out.setAttribute("data-backends", String(backends));
  out.setAttribute("data-height", String(document.documentElement.scrollHeight));
  out.textContent = lines.join("; ");
})();

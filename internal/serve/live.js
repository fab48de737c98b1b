// bookgen serve: reload the page after a good rebuild, swap the stylesheet
// after a change to CSS only, show the problems (file:line, with a
// transcript's diff) over the page after a bad one, and show the progress
// of the first build on the "building" page.
(function () {
  "use strict";
  var shown = null;
  // The build this page comes from (data-build of this script): a page
  // served before a build landed, whose events stream opened after it, is
  // reloaded on "hello" instead of waiting for a "reload" it missed.
  var me = document.currentScript;
  var id = (me && me.getAttribute("data-build")) || null;

  // The "building" page, styled here (no inline styles: CSP).
  var building = document.getElementById("bookgen-building");
  if (building) {
    building.style.cssText = "max-width:40rem;margin:15vh auto;padding:0 1rem;" +
      "font:16px/1.6 system-ui,-apple-system,Segoe UI,Roboto,sans-serif";
  }

  function hide() {
    if (shown) { shown.remove(); shown = null; }
  }

  function show(message) {
    hide();
    var box = document.createElement("div");
    box.id = "bookgen-error";
    box.setAttribute("role", "alert");
    box.style.cssText = "position:fixed;left:1rem;right:1rem;bottom:1rem;z-index:1000;max-height:60vh;overflow:auto;" +
      "background:#2d0a0a;color:#ffdcd7;border:1px solid #f85149;border-radius:8px;padding:0.75rem 1rem;" +
      "font:13px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;box-shadow:0 4px 16px rgba(0,0,0,.4)";
    var head = document.createElement("div");
    head.style.cssText = "display:flex;justify-content:space-between;gap:1rem;font-weight:600;margin-bottom:0.5rem";
    head.textContent = "bookgen: the last change does not build; this page is the last good build.";
    var close = document.createElement("button");
    close.type = "button";
    close.textContent = "×";
    close.setAttribute("aria-label", "Dismiss");
    close.style.cssText = "background:none;border:0;color:inherit;font-size:18px;line-height:1;cursor:pointer";
    close.onclick = hide;
    head.appendChild(close);
    var pre = document.createElement("pre");
    pre.style.cssText = "margin:0;white-space:pre-wrap";
    // Colour the lines of a diff: "-" expected, "+" actual.
    message.split("\n").forEach(function (line) {
      var span = document.createElement("span");
      var t = line.replace(/^\s+/, "");
      if (/^-/.test(t)) span.style.color = "#ffa198";
      else if (/^\+/.test(t)) span.style.color = "#7ee787";
      else if (!/^\s/.test(line)) span.style.fontWeight = "600";
      span.textContent = line + "\n";
      pre.appendChild(span);
    });
    box.appendChild(head);
    box.appendChild(pre);
    document.body.appendChild(box);
    shown = box;
  }

  // swapCSS points the book's stylesheet at its new content-hashed name;
  // the old one is removed once the new one has loaded, so nothing flashes.
  function swapCSS(sitePath) {
    var old = document.querySelector('link[rel=stylesheet][href*="assets/book."]');
    if (!old) { location.reload(); return; }
    var root = (document.body && document.body.getAttribute("data-root")) || "";
    var link = old.cloneNode();
    link.href = new URL(root + sitePath, location.href).href;
    link.onload = function () { old.remove(); };
    old.after(link);
  }

  var es = new EventSource("/__bookgen/events");
  es.addEventListener("hello", function (e) {
    // A different build id after a reconnect: the server restarted or
    // rebuilt while we were away.
    if (id !== null && id !== e.data) location.reload();
    id = e.data;
  });
  es.addEventListener("reload", function (e) {
    id = e.data;
    location.reload();
  });
  es.addEventListener("css", function (e) {
    var lines = e.data.split("\n");
    id = lines[0];
    hide();
    swapCSS(lines[1]);
  });
  es.addEventListener("build-error", function (e) { show(e.data); });
  es.addEventListener("progress", function (e) {
    var p = document.getElementById("bookgen-progress");
    if (p) p.textContent = e.data;
  });
})();

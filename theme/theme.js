// bookgen theme: runs before the first paint, from <head> and again right
// after the sidebar, so that neither the theme nor the sidebar's scroll
// position flashes. It sets <html data-theme> to the reader's remembered
// choice ("light" or "dark"; none means: follow prefers-color-scheme), and
// puts the sidebar back where the previous page left it. And it sends on a
// reader who arrives at an old #fragment: book.toml's [output.html.redirect]
// keys such as "/page.html#old" (mdBook 0.5's fragment map), which the
// site writes to <html data-fragment-redirects>; on a removed page's
// redirect (data-redirect), any other fragment goes to the new page too.
(function () {
  "use strict";
  var h = document.documentElement;
  var map = h.getAttribute("data-fragment-redirects");
  if (map && location.hash && !h.hasAttribute("data-redirecting")) {
    try {
      var m = JSON.parse(map), to = null;
      if (Object.prototype.hasOwnProperty.call(m, location.hash)) {
        to = new URL(m[location.hash], location.href).href;
      } else if (h.getAttribute("data-redirect")) {
        var u = new URL(h.getAttribute("data-redirect"), location.href);
        u.hash = location.hash;
        to = u.href;
      }
      if (to) {
        h.setAttribute("data-redirecting", "");
        location.replace(to);
      }
    } catch (e) {
      // A map that does not parse: stay on the page.
    }
  }
  try {
    var t = localStorage.getItem("bookgen-theme");
    if (t === "light" || t === "dark") document.documentElement.setAttribute("data-theme", t);
    var s = document.getElementById("sidebar");
    var y = sessionStorage.getItem("bookgen-sidebar");
    if (s && y !== null) s.scrollTop = +y;
  } catch (e) {
    // Storage may be disabled: follow the system's theme.
  }
})();

// bookgen theme: runs before the first paint, from <head> and again right
// after the sidebar, so that neither the theme nor the sidebar's scroll
// position flashes. It sets <html data-theme> to the reader's remembered
// choice ("light" or "dark"; none means: follow prefers-color-scheme), and
// puts the sidebar back where the previous page left it.
(function () {
  "use strict";
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

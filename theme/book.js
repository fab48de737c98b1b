// bookgen theme script: the chapter drawer on narrow screens, copy buttons
// on code blocks, and keeping the current chapter visible in the sidebar.
(function () {
  "use strict";

  var body = document.body;
  var toggle = document.querySelector(".menu-toggle");
  var sidebar = document.getElementById("sidebar");

  function setOpen(open) {
    body.classList.toggle("sidebar-open", open);
    if (toggle) toggle.setAttribute("aria-expanded", open ? "true" : "false");
  }
  if (toggle && sidebar) {
    toggle.addEventListener("click", function (e) {
      e.stopPropagation();
      setOpen(!body.classList.contains("sidebar-open"));
    });
    document.addEventListener("click", function (e) {
      if (body.classList.contains("sidebar-open") && !sidebar.contains(e.target)) setOpen(false);
    });
    document.addEventListener("keydown", function (e) {
      if (e.key === "Escape") setOpen(false);
    });
  }

  var current = sidebar && sidebar.querySelector("[aria-current=page]");
  if (current && current.scrollIntoView) {
    var r = current.getBoundingClientRect();
    if (r.bottom > window.innerHeight) current.scrollIntoView({ block: "center" });
  }

  // Copy buttons copy a block's text; for console blocks only the commands
  // (the "$ " lines, without the prompt).
  document.querySelectorAll(".code-block").forEach(function (block) {
    var pre = block.querySelector("pre");
    if (!pre || !navigator.clipboard) return;
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy-button";
    button.textContent = "Copy";
    button.addEventListener("click", function () {
      var text = pre.innerText;
      if (block.getAttribute("data-lang") === "console") {
        text = text.split("\n").filter(function (l) { return l.indexOf("$ ") === 0; })
          .map(function (l) { return l.slice(2); }).join("\n");
      }
      navigator.clipboard.writeText(text).then(function () {
        button.textContent = "Copied";
        setTimeout(function () { button.textContent = "Copy"; }, 1500);
      });
    });
    block.appendChild(button);
  });
})();

// bookgen theme script. Everything it adds is a convenience on top of pages
// that work without it (search excepted):
//   - the chapter drawer on narrow screens (without JavaScript the menu link
//     opens it through #sidebar and CSS :target);
//   - the light/dark switch, remembered in localStorage (theme.js applies it
//     before the first paint);
//   - the sidebar's scroll position, kept from page to page (sessionStorage);
//   - copy buttons on code blocks;
//   - keyboard: ←/→ previous/next chapter, "/" or "s" search, "?" shortcuts;
//   - search: MiniSearch and the index built by bookgen, both fetched the
//     first time search opens; the chosen result's page marks the terms.
(function () {
  "use strict";

  var doc = document.documentElement;
  var body = document.body;
  var toggle = document.querySelector(".menu-toggle");
  var sidebar = document.getElementById("sidebar");

  function store(kind, key, value) {
    try {
      if (value === null) window[kind].removeItem(key);
      else window[kind].setItem(key, value);
    } catch (e) { /* storage disabled */ }
  }

  // ------------------------------------------------------------ drawer
  function setOpen(open) {
    body.classList.toggle("sidebar-open", open);
    if (toggle) toggle.setAttribute("aria-expanded", open ? "true" : "false");
  }
  if (toggle && sidebar) {
    toggle.addEventListener("click", function (e) {
      e.preventDefault();
      e.stopPropagation();
      setOpen(!body.classList.contains("sidebar-open"));
    });
    var close = sidebar.querySelector(".sidebar-close");
    if (close) close.addEventListener("click", function (e) { e.preventDefault(); setOpen(false); });
    document.addEventListener("click", function (e) {
      if (body.classList.contains("sidebar-open") && !sidebar.contains(e.target)) setOpen(false);
    });
  }

  // ------------------------------------------------------ sidebar scroll
  if (sidebar) {
    var current = sidebar.querySelector("[aria-current=page]");
    if (current && current.scrollIntoView) {
      var r = current.getBoundingClientRect(), sr = sidebar.getBoundingClientRect();
      if (r.bottom > sr.bottom || r.top < sr.top) current.scrollIntoView({ block: "center" });
    }
    window.addEventListener("pagehide", function () {
      store("sessionStorage", "bookgen-sidebar", String(sidebar.scrollTop));
    });
  }

  // ------------------------------------------------------------- theme
  var themeButton = document.querySelector(".theme-toggle");
  var darkQuery = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  function currentTheme() {
    var t = doc.getAttribute("data-theme");
    if (t === "light" || t === "dark") return t;
    return darkQuery && darkQuery.matches ? "dark" : "light";
  }
  function showTheme() {
    var dark = currentTheme() === "dark";
    var label = dark ? "Light theme" : "Dark theme";
    themeButton.setAttribute("aria-pressed", dark ? "true" : "false");
    themeButton.title = label;
    themeButton.querySelector(".visually-hidden").textContent = label;
  }
  if (themeButton) {
    themeButton.hidden = false;
    showTheme();
    themeButton.addEventListener("click", function () {
      var next = currentTheme() === "dark" ? "light" : "dark";
      doc.setAttribute("data-theme", next);
      store("localStorage", "bookgen-theme", next);
      showTheme();
    });
    if (darkQuery && darkQuery.addEventListener) darkQuery.addEventListener("change", showTheme);
  }

  // -------------------------------------------------------- copy buttons
  // Copy buttons copy a block's text; for console blocks only the commands
  // (the "$ " lines, without the prompt).
  document.querySelectorAll(".code-block").forEach(function (block) {
    var pre = block.querySelector("pre");
    if (!pre || !navigator.clipboard) return;
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy-button";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy the code");
    button.addEventListener("click", function () {
      // textContent, not innerText: innerText renders the layout, and
      // each line is a block holding its own "\n", which innerText turns
      // into a blank line between every two. Line numbers are left out.
      var clone = pre.cloneNode(true);
      clone.querySelectorAll(".lnt, .ln").forEach(function (n) { n.remove(); });
      var text = clone.textContent;
      if (block.getAttribute("data-lang") === "console") {
        text = text.split("\n").filter(function (l) { return l.indexOf("$ ") === 0; })
          .map(function (l) { return l.slice(2); }).join("\n");
      }
      navigator.clipboard.writeText(text).then(function () {
        button.textContent = "Copied";
        setTimeout(function () { button.textContent = "Copy"; }, 1500);
      }, function () {
        button.textContent = "Press Ctrl+C";
      });
    });
    block.appendChild(button);
  });

  // ------------------------------------------------ search-term marks
  // A result link carries ?highlight=term+term; mark those words in the
  // chapter (word prefixes, case-insensitive).
  function markTerms(terms) {
    var article = document.querySelector(".chapter");
    if (!article || !terms.length) return;
    var esc = terms.map(function (t) { return t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); });
    var re = new RegExp("(" + esc.join("|") + ")", "gi");
    var walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT, {
      acceptNode: function (n) {
        return n.parentNode.closest("script, style, mark") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT;
      }
    });
    var nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    nodes.forEach(function (n) {
      var s = n.nodeValue;
      re.lastIndex = 0;
      if (!re.test(s)) return;
      var frag = document.createDocumentFragment(), last = 0;
      s.replace(re, function (m, _g, at) {
        if (at > last) frag.appendChild(document.createTextNode(s.slice(last, at)));
        var mark = document.createElement("mark");
        mark.className = "search-hit";
        mark.textContent = m;
        frag.appendChild(mark);
        last = at + m.length;
        return m;
      });
      if (last < s.length) frag.appendChild(document.createTextNode(s.slice(last)));
      n.parentNode.replaceChild(frag, n);
    });
  }
  var params = new URLSearchParams(location.search);
  var hl = (params.get("highlight") || "").split(/\s+/).filter(function (t) { return t.length > 1; });
  if (hl.length) {
    markTerms(hl);
    if (location.hash) {
      var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
      if (target) target.scrollIntoView();
    }
  }

  // -------------------------------------------------------------- search
  var root = body.getAttribute("data-root") || "";
  var dialog = document.getElementById("search-dialog");
  var input = document.getElementById("search-input");
  var list = document.getElementById("search-results");
  var status = document.getElementById("search-status");
  var searchButton = document.querySelector(".search-toggle");
  var engine = null, loading = null, results = [], selected = -1;

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var s = document.createElement("script");
      s.src = src;
      s.onload = resolve;
      s.onerror = function () { reject(new Error("cannot load " + src)); };
      document.head.appendChild(s);
    });
  }
  // tokenize splits text into terms as MiniSearch's default does (at
  // white space and punctuation), then splits each run of Chinese,
  // Japanese or Korean characters, which are written without spaces
  // between words, into overlapping pairs of characters (bigrams, as
  // Lucene's CJK analyzer does): "分布式系统" gives "分布", "布式", "式系",
  // "系统". A query is tokenized the same way, so any two or more
  // characters that occur in a chapter find it; a single character finds
  // the pairs it starts.
  var SEPARATOR = /[\n\r\p{Z}\p{P}]+/u;
  var CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc\u3005]+/gu;
  function tokenize(text) {
    var out = [];
    text.split(SEPARATOR).forEach(function (word) {
      if (!word) return;
      var last = 0;
      CJK_RUN.lastIndex = 0;
      word.replace(CJK_RUN, function (run, at) {
        if (at > last) out.push(word.slice(last, at));
        var chars = Array.from(run);
        if (chars.length === 1) out.push(run);
        for (var i = 0; i + 1 < chars.length; i++) out.push(chars[i] + chars[i + 1]);
        last = at + run.length;
        return run;
      });
      if (last < word.length) out.push(word.slice(last));
    });
    return out;
  }
  function loadIndex() {
    if (loading) return loading;
    status.textContent = "Loading the index…";
    loading = Promise.all([
      window.MiniSearch ? Promise.resolve() : loadScript(body.getAttribute("data-search-lib")),
      fetch(body.getAttribute("data-search-index")).then(function (r) {
        if (!r.ok) throw new Error("search index: HTTP " + r.status);
        return r.json();
      })
    ]).then(function (got) {
      engine = new window.MiniSearch({
        fields: ["t", "x"],
        tokenize: tokenize,
        storeFields: ["t", "b", "u", "x"],
        searchOptions: { boost: { t: 3 }, prefix: true, fuzzy: 0.15, combineWith: "AND" }
      });
      engine.addAll(got[1]);
      status.textContent = "";
      if (input.value) run();
    }, function (err) {
      status.textContent = "Search is unavailable: " + err.message;
      loading = null;
    });
    return loading;
  }

  function excerpt(text, terms) {
    var lower = text.toLowerCase(), at = -1;
    for (var i = 0; i < terms.length && at < 0; i++) at = lower.indexOf(terms[i].toLowerCase());
    var start = Math.max(0, at - 60);
    var s = (start > 0 ? "…" : "") + text.slice(start, start + 180);
    return s + (start + 180 < text.length ? "…" : "");
  }
  function addMarked(el, text, terms) {
    if (!terms.length) { el.textContent = text; return; }
    var esc = terms.map(function (t) { return t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); });
    var parts = text.split(new RegExp("(" + esc.join("|") + ")", "gi"));
    parts.forEach(function (p, i) {
      if (i % 2) {
        var m = document.createElement("mark");
        m.textContent = p;
        el.appendChild(m);
      } else if (p) el.appendChild(document.createTextNode(p));
    });
  }
  function resultURL(r) {
    var u = r.u, hash = "", i = u.indexOf("#");
    if (i >= 0) { hash = u.slice(i); u = u.slice(0, i); }
    return root + u + "?highlight=" + encodeURIComponent(r.terms.join(" ")) + hash;
  }
  function select(i) {
    var items = list.children;
    if (!items.length) return;
    selected = (i + items.length) % items.length;
    for (var k = 0; k < items.length; k++) items[k].setAttribute("aria-selected", k === selected ? "true" : "false");
    input.setAttribute("aria-activedescendant", items[selected].id);
    items[selected].scrollIntoView({ block: "nearest" });
  }
  function run() {
    if (!engine) return;
    var q = input.value.trim();
    list.textContent = "";
    selected = -1;
    input.removeAttribute("aria-activedescendant");
    if (!q) { status.textContent = ""; input.setAttribute("aria-expanded", "false"); return; }
    results = engine.search(q).slice(0, 30);
    if (!results.length) results = engine.search(q, { combineWith: "OR" }).slice(0, 30);
    status.textContent = results.length ? results.length + (results.length === 1 ? " result" : " results") : "No results for “" + q + "”";
    input.setAttribute("aria-expanded", results.length ? "true" : "false");
    results.forEach(function (r, i) {
      var li = document.createElement("li");
      li.id = "search-result-" + i;
      li.setAttribute("role", "option");
      li.setAttribute("aria-selected", "false");
      var a = document.createElement("a");
      a.href = resultURL(r);
      a.tabIndex = -1;
      var crumbs = document.createElement("span");
      crumbs.className = "search-crumbs";
      crumbs.textContent = r.b.join(" › ");
      var title = document.createElement("span");
      title.className = "search-title";
      addMarked(title, r.t, r.terms);
      var text = document.createElement("span");
      text.className = "search-text";
      addMarked(text, excerpt(r.x, r.terms), r.terms);
      a.appendChild(crumbs);
      a.appendChild(title);
      a.appendChild(text);
      li.appendChild(a);
      li.addEventListener("mousemove", function () { if (selected !== i) select(i); });
      list.appendChild(li);
    });
    if (results.length) select(0);
  }
  // openSearch opens the dialog; key is the shortcut that opened it, if any.
  function openSearch(key) {
    if (!dialog || dialog.open) return;
    setOpen(false);
    dialog.showModal();
    input.focus();
    input.select();
    if (typeof key === "string") {
      // The shortcut's keydown was cancelled, so no character follows in a
      // browser; a synthetic keypress (automation, some IMEs) must not
      // type it into the field either.
      var swallow = function (e) {
        if (e.key === key) e.preventDefault();
        input.removeEventListener("keypress", swallow);
      };
      input.addEventListener("keypress", swallow);
      setTimeout(function () { input.removeEventListener("keypress", swallow); }, 50);
    }
    loadIndex();
  }
  if (dialog && input && list) {
    if (searchButton) {
      searchButton.hidden = false;
      searchButton.addEventListener("click", openSearch);
    }
    input.addEventListener("input", run);
    input.addEventListener("keydown", function (e) {
      if (e.key === "ArrowDown") { e.preventDefault(); select(selected + 1); }
      else if (e.key === "ArrowUp") { e.preventDefault(); select(selected - 1); }
      else if (e.key === "Escape") { e.preventDefault(); input.blur(); dialog.close(); }
      else if (e.key === "Enter") {
        e.preventDefault();
        var li = list.children[selected];
        if (li) location.href = li.querySelector("a").href;
      }
    });
    dialog.addEventListener("click", function (e) { if (e.target === dialog) dialog.close(); });
    dialog.addEventListener("close", function () {
      // "close" fires after close(); the dialog may be open again by then.
      if (!dialog.open && dialog.contains(document.activeElement)) document.activeElement.blur();
    });
  }

  // ------------------------------------------------------------- keyboard
  var help = document.getElementById("help-dialog");
  var helpButton = document.querySelector(".help-toggle");
  function openHelp() {
    if (help && !help.open) help.showModal();
  }
  if (help && helpButton) {
    helpButton.hidden = false;
    helpButton.addEventListener("click", openHelp);
  }
  function typing(el) {
    if (!el || !(el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName))) return false;
    var d = el.closest("dialog");
    return !d || d.open; // a field of a closed dialog keeps focus only until "close" fires
  }
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape") { setOpen(false); return; }
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target) || e.defaultPrevented) return;
    if ((dialog && dialog.open) || (help && help.open)) return;
    var link;
    switch (e.key) {
      case "ArrowLeft":
        link = document.querySelector(".pager-prev");
        break;
      case "ArrowRight":
        link = document.querySelector(".pager-next");
        break;
      case "/":
      case "s":
        if (dialog) { e.preventDefault(); openSearch(e.key); }
        return;
      case "?":
        e.preventDefault();
        openHelp();
        return;
      default:
        return;
    }
    if (link) { e.preventDefault(); location.href = link.href; }
  });
})();

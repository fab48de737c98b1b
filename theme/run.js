// Run panels: a transcript of a program bookgen built for the browser
// (GOOS=js GOARCH=wasm) gets a "Run" button. The program runs in a Web
// Worker with the wasm_exec.js of the Go toolchain that built it; its
// output streams into the panel, and the panel says whether it matches the
// transcript the build verified. Nothing is loaded before the first click,
// and nothing leaves the site: the binary and wasm_exec.js are files of
// the site (assets/, named after a hash of their content).
//
// This one file is both the page's script and the worker's: in a worker
// there is no document.
(function () {
  "use strict";

  if (typeof document === "undefined") {
    worker();
    return;
  }

  const scriptURL = document.currentScript && document.currentScript.src;
  const root = new URL(document.body.dataset.root || "", location.href);

  // maxOutput bounds what one run may print into the panel, in characters:
  // a program printing without end is stopped there, and the tab stays
  // responsive. The book's programs print a few kilobytes.
  const maxOutput = 1 << 20;

  // matcher:begin (the transcript matcher: markdown.OutputLines, MatchLine
  // and Matches in Go; both pass internal/markdown/testdata/match.json,
  // theme TestRunJSMatchCases runs this part in Node)

  // anyLines and anyText mirror markdown.AnyLines and markdown.AnyText.
  const anyLines = "...";
  const anyText = "[..]";

  function lineMatch(expected, actual) {
    expected = expected.replace(/[ \t\r]+$/, "");
    actual = actual.replace(/[ \t\r]+$/, "");
    const parts = expected.split(anyText);
    if (parts.length === 1) return expected === actual;
    if (!actual.startsWith(parts[0])) return false;
    let rest = actual.slice(parts[0].length);
    const last = parts[parts.length - 1];
    for (const p of parts.slice(1, -1)) {
      const i = rest.indexOf(p);
      if (i < 0) return false;
      rest = rest.slice(i + p.length);
    }
    return rest.length >= last.length && rest.endsWith(last);
  }

  function trimBlank(lines) {
    while (lines.length && lines[lines.length - 1].trim() === "") lines.pop();
    return lines;
  }

  // ansiEscape is markdown's ansiEscape: CSI (ESC [ or U+009B), OSC
  // strings ended by BEL or ESC \, the other string controls (ESC P, X, ^,
  // _), the short escapes, and a lone ESC.
  // eslint-disable-next-line no-control-regex
  const ansiEscape = /(?:\x1b\[|\u009b)[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]*(?:\x1b\\)?|\x1b[ -/]*[0-~]|\x1b/g;

  // outputLines mirrors markdown.OutputLines: no escapes, no trailing white
  // space or trailing blank lines.
  function outputLines(text) {
    text = text.replace(ansiEscape, "");
    if (text === "") return [];
    return trimBlank(text.replace(/\n+$/, "").split("\n").map((l) => l.replace(/[ \t\r]+$/, "")));
  }

  // firstDifference returns -1 when actual matches expected ("..." lines
  // match any number of lines), else the index of the first expected line
  // no alignment gets past.
  function firstDifference(expected, actual) {
    expected = trimBlank(expected.slice());
    actual = trimBlank(actual.slice());
    const memo = new Map();
    let furthest = 0;
    function m(i, j) {
      const k = i * (actual.length + 1) + j;
      if (memo.has(k)) return memo.get(k);
      furthest = Math.max(furthest, i);
      let r;
      if (i === expected.length) r = j === actual.length;
      else if (expected[i].trim() === anyLines) r = m(i + 1, j) || (j < actual.length && m(i, j + 1));
      else r = j < actual.length && lineMatch(expected[i], actual[j]) && m(i + 1, j + 1);
      memo.set(k, r);
      return r;
    }
    return m(0, 0) ? -1 : furthest;
  }
  // matcher:end

  function sameArgs(a, b) {
    return a.length === b.length && a.every((x, i) => x === b[i]);
  }

  // argsOf builds the program's arguments from the flag inputs: every
  // flag whose value is not its default, then the transcript's other
  // arguments.
  function argsOf(panel) {
    const args = [];
    for (const input of panel.querySelectorAll("input[data-flag]")) {
      const name = input.dataset.flag;
      if (input.dataset.kind === "bool") {
        const v = input.checked ? "true" : "false";
        if (v !== (input.dataset.default || "false")) args.push("-" + name + "=" + v);
      } else if (input.value !== input.dataset.default && !(input.value === "" && input.placeholder !== input.dataset.default)) {
        args.push("-" + name + "=" + input.value);
      }
    }
    return args.concat(JSON.parse(panel.dataset.rest || "[]"));
  }

  function flagState(panel) {
    return Array.from(panel.querySelectorAll("input[data-flag]"), (i) => (i.dataset.kind === "bool" ? String(i.checked) : i.value)).join("\u0000");
  }

  function setStatus(panel, text, kind) {
    const s = panel.querySelector(".run-status");
    s.textContent = text;
    s.dataset.state = kind;
    panel.dataset.state = kind;
  }

  function run(panel) {
    const button = panel.querySelector(".run-button");
    if (panel.worker) {
      panel.worker.terminate();
      panel.worker = null;
      clearInterval(panel.ticker);
      button.textContent = "Run";
      setStatus(panel, "Stopped.", "stopped");
      return;
    }
    const transcriptArgs = JSON.parse(panel.dataset.args || "[]");
    const asTranscript = flagState(panel) === panel.initialFlags;
    const args = asTranscript ? transcriptArgs : argsOf(panel);
    const out = panel.querySelector(".run-output");
    out.hidden = false;
    out.textContent = "";
    let text = "";
    const started = performance.now();
    setStatus(panel, "Loading " + panel.dataset.name + "…", "loading");
    button.textContent = "Stop";
    const w = new Worker(scriptURL);
    panel.worker = w;
    let ticker = 0;
    const finish = () => {
      w.terminate();
      clearInterval(ticker);
      if (panel.worker === w) panel.worker = null;
      button.textContent = "Run";
    };
    w.onmessage = (e) => {
      if (panel.worker !== w) return;
      const m = e.data;
      if (m.out !== undefined) {
        if (text.length + m.out.length > maxOutput) {
          const room = maxOutput - text.length;
          text += m.out.slice(0, room);
          out.append(m.out.slice(0, room));
          finish();
          panel.dataset.output = text;
          setStatus(panel, "Stopped: the program printed more than " + (maxOutput >> 20) + " MiB.", "stopped");
          return;
        }
        text += m.out;
        out.append(m.out);
      } else if (m.loaded !== undefined) {
        panel.dataset.loadMs = String(Math.round(m.loaded));
        const t0 = performance.now();
        setStatus(panel, "Running…", "running");
        // Progress for a long run (a Raft group electing, a model
        // check): the seconds it has run, until it ends or is stopped.
        ticker = panel.ticker = setInterval(() => {
          setStatus(panel, "Running… " + Math.floor((performance.now() - t0) / 1000) + " s (Stop ends it)", "running");
        }, 1000);
      } else if (m.error !== undefined) {
        finish();
        setStatus(panel, "Could not run the program: " + m.error, "error");
      } else if (m.exit !== undefined) {
        if (m.exit !== 0) {
          const tail = "exit status " + m.exit + "\n";
          text += (text === "" || text.endsWith("\n") ? "" : "\n") + tail;
          out.append(tail);
        }
        finish();
        panel.dataset.ms = String(Math.round(performance.now() - started));
        panel.dataset.output = text;
        const shown = "go run " + panel.dataset.pkg + (args.length ? " " + args.join(" ") : "");
        if (!asTranscript && !sameArgs(args, transcriptArgs)) {
          setStatus(panel, "Ran " + shown + ": flags differ from the transcript, so the output is not compared.", "changed");
          return;
        }
        const diff = firstDifference(JSON.parse(panel.dataset.expected), outputLines(text));
        if (diff < 0) setStatus(panel, "✓ Same output as the transcript verified at build time.", "match");
        else setStatus(panel, "✗ Differs from the transcript verified at build time (from its line " + (diff + 1) + ").", "differs");
      }
    };
    w.onerror = (e) => {
      e.preventDefault();
      if (panel.worker !== w) return; // after the exit: see worker()
      finish();
      setStatus(panel, "Could not run the program: " + (e.message || "worker failed"), "error");
    };
    w.postMessage({
      exec: new URL(panel.dataset.exec, root).href,
      wasm: new URL(panel.dataset.wasm, root).href,
      name: panel.dataset.name,
      args: args,
    });
  }

  for (const panel of document.querySelectorAll(".run[data-wasm]")) {
    panel.hidden = false;
    panel.initialFlags = flagState(panel);
    panel.querySelector(".run-button").addEventListener("click", () => run(panel));
  }

  // worker runs one program: it loads wasm_exec.js and the binary, sends
  // each write to stdout or stderr as it happens, then the exit status.
  function worker() {
    // A goroutine still sleeping when main returns leaves a timer behind;
    // when it fires, wasm_exec.js throws "Go program has already exited".
    // The program is over by then: that error is not the reader's.
    let exited = false;
    self.addEventListener("error", (e) => {
      if (exited) e.preventDefault();
    });
    self.onmessage = async (e) => {
      const { exec, wasm, name, args } = e.data;
      try {
        importScripts(exec);
        const decoders = {};
        globalThis.fs.writeSync = (fd, buf) => {
          const d = decoders[fd] || (decoders[fd] = new TextDecoder("utf-8"));
          postMessage({ out: d.decode(buf, { stream: true }) });
          return buf.length;
        };
        const go = new Go();
        go.argv = [name].concat(args);
        go.env = { HOME: "/", TMPDIR: "/tmp" };
        let code = 0;
        go.exit = (c) => {
          code = c;
        };
        const t0 = performance.now();
        const resp = await fetch(wasm);
        if (!resp.ok) throw new Error(wasm + ": " + resp.status + " " + resp.statusText);
        const bytes = await resp.arrayBuffer();
        const { instance } = await WebAssembly.instantiate(bytes, go.importObject);
        postMessage({ loaded: performance.now() - t0 });
        await go.run(instance);
        exited = true;
        postMessage({ exit: code });
      } catch (err) {
        postMessage({ error: String((err && err.message) || err) });
      }
    };
  }
})();

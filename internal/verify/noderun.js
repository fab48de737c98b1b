"use strict";
// noderun.js PATH/wasm_exec.js PROGRAM.wasm NAME [ARG...]
//
// Runs a Go program built for js/wasm the way the page's Run button runs
// it (theme/run.js, function worker): the toolchain's browser wasm_exec.js,
// after the in-memory file system of memfs.js (the same file the page
// loads: a disk that lasts for the run) and with its own stub process (no
// working folder),
// argv [NAME, ARG...], the environment HOME=/ TMPDIR=/tmp, and every write
// to standard output or error sent, in order, to one stream (here fd 1).
// When the program's main returns the run ends at once, as the page ends
// its worker, even if timers are left. Exit status: the program's; 125
// when the binary could not be loaded or run (the reason on fd 2).
const nodeProcess = process;
const nodeFs = require("fs");
const [execPath, wasmPath, name, ...args] = nodeProcess.argv.slice(2);

// The page has no Node process object: let wasm_exec.js install its stub,
// as it does in a browser.
globalThis.process = undefined;
require(execPath);

globalThis.fs.writeSync = (fd, buf) => {
  nodeFs.writeSync(1, buf);
  return buf.length;
};
const go = new Go();
go.argv = [name].concat(args);
go.env = { HOME: "/", TMPDIR: "/tmp" };
let code = 0;
go.exit = (c) => {
  code = c;
};
WebAssembly.instantiate(nodeFs.readFileSync(wasmPath), go.importObject)
  .then(async ({ instance }) => {
    await go.run(instance);
    nodeProcess.exit(code);
  })
  .catch((err) => {
    nodeFs.writeSync(2, String((err && err.message) || err) + "\n");
    nodeProcess.exit(125);
  });

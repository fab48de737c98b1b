// Starts the protocol's reference Node server (@durable-streams/server,
// pinned in package.json) for comparisons: the benchmark and, by hand, the
// conformance suite. Environment: PORT (default 0: a free port), DATA_DIR
// (file-backed storage; unset: in memory), LONG_POLL_MS (default 1000).
// Prints "refserver: serving on http://127.0.0.1:PORT" on stderr.
import { DurableStreamTestServer } from "@durable-streams/server"

const server = new DurableStreamTestServer({
  port: Number(process.env.PORT ?? "0"),
  host: "127.0.0.1",
  longPollTimeout: Number(process.env.LONG_POLL_MS ?? "1000"),
  dataDir: process.env.DATA_DIR || undefined,
})
const url = await server.start()
console.error(`refserver: serving on ${url ?? server.url}`)
const stop = async () => {
  await server.stop()
  process.exit(0)
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)

// Runs the Durable Streams server conformance suite (pinned in package.json)
// against the server at STREAM_URL. conformance_test.go starts streamd and
// sets STREAM_URL and LONG_POLL_MS; `npx vitest run -t "<describe name>"`
// runs a subset.
import { runConformanceTests } from "@durable-streams/server-conformance-tests"

const baseUrl = process.env.STREAM_URL
if (!baseUrl) {
  throw new Error("STREAM_URL is not set: start streamd and point STREAM_URL at it")
}

runConformanceTests({
  baseUrl,
  longPollTimeoutMs: Number(process.env.LONG_POLL_MS ?? "1000"),
})

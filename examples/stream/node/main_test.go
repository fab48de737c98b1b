package node

import (
	"net/http"
	"os"
	"testing"
	"time"
)

// requestBound bounds every request the tests send with
// http.DefaultClient (and http.Get): an answer that never comes fails that
// test with the request named, instead of hanging the package until go
// test's own timeout. It is longer than any wait a test expects (a
// long-poll, retryFor).
const requestBound = time.Minute

func TestMain(m *testing.M) {
	http.DefaultClient.Timeout = requestBound
	os.Exit(m.Run())
}

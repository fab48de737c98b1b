package serve

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ownership-book/ownership/internal/build"
)

// TestServeSendsNetlifyHeaders checks that serve answers pages, assets,
// missing pages and its own script with the security headers of the
// repository's netlify.toml (Content-Security-Policy included), read
// from that file, and keeps its own no-store caching.
func TestServeSendsNetlifyHeaders(t *testing.T) {
	netlify, err := os.ReadFile(filepath.Join("..", "..", NetlifyFile))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "book"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "book", "ch.md"), []byte("first"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, NetlifyFile), netlify, 0o644); err != nil {
		t.Fatal(err)
	}
	rules, err := readHeaderRules(root)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]string
	for _, r := range rules {
		if r.For == "/*" {
			want = r.Values
		}
	}
	if want["Content-Security-Policy"] == "" {
		t.Fatalf("netlify.toml has no Content-Security-Policy for /*: %v", rules)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, ln, Options{Build: build.Options{Root: root}, BuildFunc: fakeBuild, Debounce: 20 * time.Millisecond})
	}()
	defer func() { cancel(); <-done }()
	base := "http://" + ln.Addr().String()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if code, _ := get(t, base+"/"); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no page served")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := os.MkdirAll(filepath.Join(root, "site", "assets"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "site", "assets", "book.css"), []byte("p{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/", "/index.html", "/assets/book.css", "/missing.html", ScriptPath} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for k, v := range want {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("%s: %s = %q, want netlify.toml's %q", p, k, got, v)
			}
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("%s: Cache-Control = %q, want no-store", p, cc)
		}
	}
}

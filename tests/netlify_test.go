package tests

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// TestNetlifyConfig checks netlify.toml against the rest of the
// repository: it builds with bookgen into the folder it publishes, pins
// the Go version .ci/run uses, caches assets/ forever, serves 404.html for
// unknown paths, and sends a Content-Security-Policy that allows only the
// site itself. (tests/browser serves the built site with these headers in
// Chromium and fails on any violation.)
func TestNetlifyConfig(t *testing.T) {
	data, err := os.ReadFile("../netlify.toml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Build struct {
			Command     string            `toml:"command"`
			Publish     string            `toml:"publish"`
			Environment map[string]string `toml:"environment"`
		} `toml:"build"`
		Headers []struct {
			For    string            `toml:"for"`
			Values map[string]string `toml:"values"`
		} `toml:"headers"`
		Redirects []struct {
			From   string `toml:"from"`
			To     string `toml:"to"`
			Status int    `toml:"status"`
		} `toml:"redirects"`
	}
	if err := toml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("netlify.toml: %v", err)
	}
	if !strings.HasPrefix(cfg.Build.Command, "go run ./cmd/bookgen build") {
		t.Errorf("build command %q does not run bookgen build", cfg.Build.Command)
	}
	if out := regexp.MustCompile(`-o\s+(\S+)`).FindStringSubmatch(cfg.Build.Command); (out == nil && cfg.Build.Publish != "site") || (out != nil && out[1] != cfg.Build.Publish) {
		t.Errorf("publish %q is not the folder the build command writes", cfg.Build.Publish)
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`GO_VERSION="([^"]+)"`).FindSubmatch(ci)
	if m == nil || cfg.Build.Environment["GO_VERSION"] != string(m[1]) {
		t.Errorf("GO_VERSION %q, .ci/run uses %q", cfg.Build.Environment["GO_VERSION"], m)
	}

	headers := map[string]map[string]string{}
	for _, h := range cfg.Headers {
		headers[h.For] = h.Values
	}
	if cc := headers["/assets/*"]["Cache-Control"]; !strings.Contains(cc, "max-age=31536000") || !strings.Contains(cc, "immutable") {
		t.Errorf("assets cache header %q", cc)
	}
	csp := headers["/*"]["Content-Security-Policy"]
	directives := map[string]string{}
	for _, d := range strings.Split(csp, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		directives[name] = value
	}
	if directives["default-src"] != "'self'" {
		t.Errorf("CSP default-src %q, want 'self'", directives["default-src"])
	}
	for name, value := range directives {
		for _, bad := range []string{"http:", "https:", "*", "'unsafe-inline'", "'unsafe-eval'"} {
			if strings.Contains(value, bad) {
				t.Errorf("CSP %s allows %s: %q", name, bad, value)
			}
		}
	}
	// Scripts from the site only; WebAssembly may be compiled (the run
	// panels, issue 18), nothing else is evaluated.
	if got := directives["script-src"]; got != "'self' 'wasm-unsafe-eval'" {
		t.Errorf("CSP script-src %q, want 'self' 'wasm-unsafe-eval'", got)
	}
	for _, name := range []string{"script-src", "style-src", "connect-src", "frame-ancestors", "object-src"} {
		if _, ok := directives[name]; !ok {
			t.Errorf("CSP lacks %s", name)
		}
	}
	if headers["/*"]["X-Content-Type-Options"] != "nosniff" {
		t.Error("no X-Content-Type-Options: nosniff")
	}
	found404 := false
	for _, r := range cfg.Redirects {
		if r.From == "/*" && r.To == "/404.html" && r.Status == 404 {
			found404 = true
		}
	}
	if !found404 {
		t.Error("no 404 rule to /404.html")
	}
}

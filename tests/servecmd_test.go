package tests

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeCommand runs `bookgen serve --poll 100ms --addr 127.0.0.1:0` as a
// process: it prints the loopback URL and that it polls, serves the book
// with the live-reload script, rebuilds after an edit seen by polling (one
// summary line: pages, checks run, cached, time), and stops cleanly on
// SIGINT.
func TestServeCommand(t *testing.T) {
	t.Parallel()
	root := copyFixture(t, "good")
	cmd := exec.Command(bookgen(t), "serve", "--poll", "100ms", "--addr", "127.0.0.1:0", "-o", filepath.Join(t.TempDir(), "site"))
	cmd.Dir = root
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func(re *regexp.Regexp) []string {
		t.Helper()
		timeout := time.After(2 * time.Minute)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("bookgen serve ended before printing %s", re)
				}
				t.Log(l)
				if m := re.FindStringSubmatch(l); m != nil {
					return m
				}
			case <-timeout:
				t.Fatalf("no line matching %s", re)
			}
		}
	}
	url := next(regexp.MustCompile(`^bookgen: serving .* on (http://127\.0\.0\.1:\d+/) \(polling every 100ms\)$`))[1]
	summary := regexp.MustCompile(`^bookgen: build (\d+): \d+ pages?( \(\d+ rendered\))?, \d+ checks? run, \d+ cached(, \d+ parsed)?, [0-9.]+[µm]?s$`)
	next(summary)
	resp, err := http.Get(url + "intro.html")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "/__bookgen/live.js") {
		t.Errorf("GET intro.html: %d, live-reload script present: %v", resp.StatusCode, strings.Contains(string(body), "/__bookgen/live.js"))
	}

	intro := filepath.Join(root, "book", "intro.md")
	src, err := os.ReadFile(intro)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(intro, append(src, "\nOne more line.\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	next(regexp.MustCompile(`^bookgen: changed: book/intro\.md$`))
	if m := next(summary); m[1] != "2" || m[2] != " (1 rendered)" {
		t.Errorf("rebuild after the edit: build %s,%s; want build 2 rendering 1 chapter", m[1], m[2])
	}

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	next(regexp.MustCompile(`^bookgen: stopped$`))
	if err := cmd.Wait(); err != nil {
		t.Errorf("bookgen serve after SIGINT: %v", err)
	}
}

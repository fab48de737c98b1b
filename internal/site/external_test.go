package site

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/render"
)

// TestCheckExternal runs the external link check against a loopback server:
// a page that answers, one that answers GET but refuses HEAD, a redirect to
// a good page, a missing page and a page that never answers in time.
func TestCheckExternal(t *testing.T) {
	var heads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			heads.Add(1)
		}
		switch r.URL.Path {
		case "/ok":
		case "/get-only":
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusMethodNotAllowed)
			}
		case "/moved":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/slow":
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	link := func(p string, line int) render.ExternalLink {
		return render.ExternalLink{URL: srv.URL + p, File: "book/a.md", Line: line}
	}
	pages := []*render.Page{
		{External: []render.ExternalLink{link("/ok", 1), link("/get-only", 2), link("/moved#frag", 3)}},
		{External: []render.ExternalLink{link("/missing", 4), link("/slow", 5), link("/missing", 6)}},
	}
	err := CheckExternal(context.Background(), pages, ExternalOptions{Timeout: 300 * time.Millisecond})
	errs := diag.All(err)
	got := map[int]string{}
	for _, e := range errs {
		if e.File != "book/a.md" {
			t.Errorf("error names %q: %v", e.File, e)
		}
		got[e.Line] = e.Msg
	}
	if len(got) != 3 || !strings.Contains(got[4], "HTTP 404") || !strings.Contains(got[6], "HTTP 404") || !strings.Contains(got[5], "no answer within") {
		t.Errorf("problems = %v, want lines 4 and 6 (404) and 5 (timeout)", got)
	}
	if heads.Load() == 0 {
		t.Error("no HEAD request was made")
	}
	if err := CheckExternal(context.Background(), pages[:1], ExternalOptions{}); err != nil {
		t.Errorf("good links: %v", err)
	}
}

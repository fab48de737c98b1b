package site

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/render"
)

// ExternalOptions tune CheckExternal.
type ExternalOptions struct {
	// Client makes the requests; nil means a client with Timeout that
	// follows up to 10 redirects.
	Client *http.Client
	// Timeout bounds one URL's requests (10s when zero).
	Timeout time.Duration
	// Workers is how many URLs are checked at once (4 when zero).
	Workers int
}

// CheckExternal requests every distinct http and https URL the pages link
// to, once each: a HEAD request, then a GET when the server refuses HEAD
// (405, 501) or answers it with another error. A URL answered with a status
// below 400 (after redirects) is fine; any other status, a timeout or a
// network error is a *diag.Error at every place that links to it. The
// fragment is not checked. bookgen runs this only on request
// (bookgen build --check-external): the book's build must not depend on
// other sites.
func CheckExternal(ctx context.Context, pages []*render.Page, opt ExternalOptions) error {
	if opt.Timeout <= 0 {
		opt.Timeout = 10 * time.Second
	}
	if opt.Workers <= 0 {
		opt.Workers = 4
	}
	client := opt.Client
	if client == nil {
		client = &http.Client{Timeout: opt.Timeout}
	}
	where := map[string][]render.ExternalLink{}
	var urls []string
	for _, pg := range pages {
		for _, l := range pg.External {
			u, _, _ := strings.Cut(l.URL, "#")
			if _, seen := where[u]; !seen {
				urls = append(urls, u)
			}
			where[u] = append(where[u], l)
		}
	}
	problems := make([]string, len(urls))
	var wg sync.WaitGroup
	sem := make(chan struct{}, opt.Workers)
	for i, u := range urls {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			problems[i] = checkURL(ctx, client, u, opt.Timeout)
		}()
	}
	wg.Wait()
	var errs diag.List
	for i, u := range urls {
		if problems[i] == "" {
			continue
		}
		for _, l := range where[u] {
			errs = append(errs, &diag.Error{File: l.File, Line: l.Line, Msg: fmt.Sprintf("external link %s: %s", l.URL, problems[i])})
		}
	}
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].File != errs[j].File {
			return errs[i].File < errs[j].File
		}
		return errs[i].Line < errs[j].Line
	})
	return errs.Err()
}

// checkURL returns "" when u answers, else what went wrong.
func checkURL(ctx context.Context, client *http.Client, u string, timeout time.Duration) string {
	status, err := request(ctx, client, http.MethodHead, u, timeout)
	if err == nil && status < 400 {
		return ""
	}
	status, err = request(ctx, client, http.MethodGet, u, timeout)
	if err != nil {
		return err.Error()
	}
	if status >= 400 {
		return fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	}
	return ""
}

func request(ctx context.Context, client *http.Client, method, u string, timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("User-Agent", "bookgen-linkcheck")
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("no answer within %s", timeout)
		}
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

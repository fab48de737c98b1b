package site

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
)

// writeRedirects writes book.toml's [output.html.redirect]: for each old
// page a small HTML page that sends the browser on (a meta refresh and a
// canonical link, as mdBook's redirect.hbs), and, for hosts that read it
// (Netlify, Cloudflare Pages), a _redirects file with one "old new 301"
// line each, so that the server answers with a real redirect and the HTML
// page is only the fallback.
//
// A key with a #fragment ("/old.html#intro") is mdBook 0.5's fragment
// redirect (hbs_renderer.rs collect_redirects_for_path and
// combine_fragment_redirects; templates index.hbs and redirect.hbs): on
// a chapter's page, a reader who arrives with that fragment is sent on
// (fragmentMap, read by theme.js; the page's Content-Security-Policy
// allows no inline script); on a removed page's redirect, a reader with
// that fragment goes to its target and any other to the whole page's
// target, the fragment kept (any removed page's redirect keeps the
// reader's fragment, as redirect.hbs does). Such a removed page needs a whole-page key,
// as in mdBook, and gets no _redirects line: the server's redirect would
// skip the page's script.
//
// The target is written as in book.toml: relative to the old page, from the
// site root ("/x.html", which is taken under site-url's path), or an
// absolute URL. An old page that is a chapter's page, or a target inside the
// site that is no page of the book, is a *diag.Error at book.toml's line;
// when the book's broken links are warnings (book.Config.WarnBrokenLinks),
// such a target is a warning instead and the redirect is written as mdBook
// writes it (a sibling book's page, "../../std/x.html").
func writeRedirects(out siteFiles, b *book.Book, a assets) ([]*diag.Error, error) {
	if len(b.Config.Redirects) == 0 && len(b.Config.FragmentRedirects) == 0 {
		return nil, nil
	}
	var warnings []*diag.Error
	pages := map[string]bool{"index.html": true, "print.html": true, "404.html": true}
	for _, ch := range b.Chapters {
		pages[htmlPath(ch.Path)] = true
	}
	base := sitePath(b)
	var rules strings.Builder
	var errs diag.List
	// resolve checks r's target and returns it as a URL from the site's
	// host ("/book/x.html#y"), or ok false when it is refused.
	resolve := func(r book.Redirect, key string) (abs string, ok bool) {
		u, err := url.Parse(r.To)
		if err != nil {
			errs = append(errs, diag.Errorf(b.ConfigFile, r.Line, "redirect %q: target %q: %v", key, r.To, err))
			return "", false
		}
		// The target as a path from the site root, when it is in the site.
		abs = r.To
		if u.Scheme == "" && u.Host == "" {
			target := u.Path
			if target == "" && u.Fragment != "" {
				target = path.Base(r.From) // "#new": the same page
			}
			if !strings.HasPrefix(target, "/") {
				target = path.Join(path.Dir("/"+r.From), target)
			}
			inSite := strings.TrimPrefix(path.Clean(target), "/")
			if strings.HasSuffix(u.Path, "/") || inSite == "" || inSite == "." {
				inSite = path.Join(inSite, "index.html")
			}
			abs = base + inSite
			if !pages[inSite] && !out.has(inSite) {
				e := diag.Errorf(b.ConfigFile, r.Line, "redirect %q: target %q is /%s, which is no page of the site", key, r.To, inSite)
				if !b.Config.WarnBrokenLinks() {
					errs = append(errs, e)
					return "", false
				}
				warnings = append(warnings, e)
				// Resolved from the old page's address, where the
				// browser resolves it, even above the site's path.
				if !strings.HasPrefix(u.Path, "/") {
					abs = path.Join(path.Dir(base+r.From), u.Path)
				}
			}
			if u.Fragment != "" {
				abs += "#" + u.EscapedFragment()
			}
		}
		return abs, true
	}
	whole := map[string]bool{}
	for _, r := range b.Config.Redirects {
		whole[r.From] = true
	}
	frags := map[string]map[string]string{} // old page -> fragment -> target
	for _, r := range b.Config.FragmentRedirects {
		key := "/" + r.From + r.Fragment
		if !pages[r.From] && !whole[r.From] {
			msg := fmt.Sprintf("redirect %q: /%s is neither a page of the book nor an old page with a redirect of its own; add \"/%s\" = \"...\" for readers who arrive without the fragment (mdBook refuses this too)", key, r.From, r.From)
			if out.has(r.From) {
				msg = fmt.Sprintf("redirect %q: /%s is a file copied from the book, which bookgen cannot add the fragment's script to", key, r.From)
			}
			e := diag.Errorf(b.ConfigFile, r.Line, "%s", msg)
			if out.has(r.From) && b.Config.WarnBrokenLinks() {
				warnings = append(warnings, e) // mdBook skips it without a word
			} else {
				errs = append(errs, e)
			}
			continue
		}
		if _, ok := resolve(r, key); !ok {
			continue
		}
		if frags[r.From] == nil {
			frags[r.From] = map[string]string{}
		}
		frags[r.From][r.Fragment] = r.To
	}
	for _, r := range b.Config.Redirects {
		if pages[r.From] {
			errs = append(errs, diag.Errorf(b.ConfigFile, r.Line, "redirect %q: /%s is the page of a chapter; remove the redirect or the chapter (mdBook refuses this too)", "/"+r.From, r.From))
			continue
		}
		abs, ok := resolve(r, "/"+r.From)
		if !ok {
			continue
		}
		// Every old page keeps the reader's #fragment, as mdBook's
		// redirect.hbs does with its script (the meta refresh alone
		// drops it): theme.js, with the page's map, empty when the
		// page has no fragment keys.
		m := frags[r.From]
		if err := out.add(r.From, fragmentRedirect(r.To, "Redirecting to "+r.To, relRoot(r.From), relRoot(r.From)+a.themeJS, m)); err != nil {
			return nil, err
		}
		if len(m) > 0 {
			continue // no _redirects line: the server's 301 would skip the map
		}
		fmt.Fprintf(&rules, "%s%s %s 301\n", base, (&url.URL{Path: r.From}).EscapedPath(), abs)
	}
	if err := errs.Err(); err != nil {
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
		return nil, errs
	}
	sort.SliceStable(warnings, func(i, j int) bool { return warnings[i].Line < warnings[j].Line })
	if out.has("_redirects") || rules.Len() == 0 {
		return warnings, nil // the book brings its own, or nothing to say
	}
	return warnings, out.add("_redirects", []byte(rules.String()))
}

// fragmentMap is the JSON object of the fragment redirects of the page at
// site path p ({"#old": "other.html#new"}), "" when it has none; theme.js
// reads it from <html data-fragment-redirects>.
func fragmentMap(b *book.Book, p string) string {
	m := map[string]string{}
	for _, r := range b.Config.FragmentRedirects {
		if r.From == p {
			m[r.Fragment] = r.To
		}
	}
	if len(m) == 0 {
		return ""
	}
	j, _ := json.Marshal(m) // sorted keys: the same page every build
	return string(j)
}

// fragmentRedirect is redirect with mdBook's fragment map: theme.js (at
// script, relative to the page) sends a reader whose #fragment is in m to
// its target, and any other with a fragment to target with that fragment,
// before the meta refresh would drop it. root is the page's relative path
// to the site's root, where its icon is.
func fragmentRedirect(target, title, root, script string, m map[string]string) []byte {
	if m == nil {
		m = map[string]string{}
	}
	j, _ := json.Marshal(m)
	t := template.HTMLEscapeString(target)
	return []byte("<!DOCTYPE html>\n<html data-fragment-redirects=\"" + template.HTMLEscapeString(string(j)) + "\" data-redirect=\"" + t +
		"\"><head><meta charset=\"utf-8\"><title>" + template.HTMLEscapeString(title) +
		"</title><link rel=\"icon\" href=\"" + template.HTMLEscapeString(root) + "favicon.svg\" type=\"image/svg+xml\"><script src=\"" + template.HTMLEscapeString(script) + "\"></script><meta http-equiv=\"refresh\" content=\"0; url=" + t + "\"><link rel=\"canonical\" href=\"" + t +
		"\"></head><body><p><a href=\"" + t + "\">" + template.HTMLEscapeString(title) + "</a></p></body></html>\n")
}

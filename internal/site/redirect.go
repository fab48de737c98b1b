package site

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/ownership-book/ownership/internal/book"
	"github.com/ownership-book/ownership/internal/diag"
)

// writeRedirects writes book.toml's [output.html.redirect]: for each old
// page a small HTML page that sends the browser on (a meta refresh and a
// canonical link, no script, as mdBook's redirect.hbs without its fragment
// map), and, for hosts that read it (Netlify, Cloudflare Pages), a
// _redirects file with one "old new 301" line each, so that the server
// answers with a real redirect and the HTML page is only the fallback.
//
// The target is written as in book.toml: relative to the old page, from the
// site root ("/x.html", which is taken under site-url's path), or an
// absolute URL. An old page that is a chapter's page, or a target inside the
// site that is no page of the book, is a *diag.Error at book.toml's line;
// when the book's broken links are warnings (book.Config.WarnBrokenLinks),
// such a target is a warning instead and the redirect is written as mdBook
// writes it (a sibling book's page, "../../std/x.html").
func writeRedirects(out siteFiles, b *book.Book) ([]*diag.Error, error) {
	if len(b.Config.Redirects) == 0 {
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
	for _, r := range b.Config.Redirects {
		if pages[r.From] {
			errs = append(errs, diag.Errorf(b.ConfigFile, r.Line, "redirect %q: /%s is the page of a chapter; remove the redirect or the chapter (mdBook refuses this too)", "/"+r.From, r.From))
			continue
		}
		u, err := url.Parse(r.To)
		if err != nil {
			errs = append(errs, diag.Errorf(b.ConfigFile, r.Line, "redirect %q: target %q: %v", "/"+r.From, r.To, err))
			continue
		}
		// The target as a path from the site root, when it is in the site.
		abs := r.To
		if u.Scheme == "" && u.Host == "" {
			target := u.Path
			if !strings.HasPrefix(target, "/") {
				target = path.Join(path.Dir("/"+r.From), target)
			}
			inSite := strings.TrimPrefix(path.Clean(target), "/")
			if strings.HasSuffix(u.Path, "/") || inSite == "" || inSite == "." {
				inSite = path.Join(inSite, "index.html")
			}
			abs = base + inSite
			if !pages[inSite] && !out.has(inSite) {
				e := diag.Errorf(b.ConfigFile, r.Line, "redirect %q: target %q is /%s, which is no page of the site", "/"+r.From, r.To, inSite)
				if !b.Config.WarnBrokenLinks() {
					errs = append(errs, e)
					continue
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
		if err := out.add(r.From, redirect(r.To, "Redirecting to "+r.To)); err != nil {
			return nil, err
		}
		fmt.Fprintf(&rules, "%s%s %s 301\n", base, (&url.URL{Path: r.From}).EscapedPath(), abs)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	if out.has("_redirects") {
		return warnings, nil // the book brings its own
	}
	return warnings, out.add("_redirects", []byte(rules.String()))
}

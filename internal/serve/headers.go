package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// NetlifyFile is the deployment's configuration, at the repository root:
// its [[headers]] rules (Content-Security-Policy and the other security
// headers) are the ones readers' browsers get, so serve sends them too and
// the preview is held to the same policy. It is the only place they are
// written.
const NetlifyFile = "netlify.toml"

// headerRule is one [[headers]] table of netlify.toml: the header values
// of the paths that "for" matches (Netlify's syntax: an exact path, or a
// prefix ending in "*").
type headerRule struct {
	For    string            `toml:"for"`
	Values map[string]string `toml:"values"`
}

// readHeaderRules reads the [[headers]] rules of root/netlify.toml; none
// when there is no such file. A file that is not valid TOML is an error
// naming it.
func readHeaderRules(root string) ([]headerRule, error) {
	data, err := os.ReadFile(filepath.Join(root, NetlifyFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var cfg struct {
		Headers []headerRule `toml:"headers"`
	}
	if err := toml.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %v", NetlifyFile, err)
	}
	return cfg.Headers, nil
}

// matchNetlify reports whether a Netlify "for" pattern ("/*",
// "/assets/*", "/x.html") matches the URL path p.
func matchNetlify(pattern, p string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(p, prefix)
	}
	return pattern == p
}

// setHeaders sets on h the values of every rule matching the URL path p,
// later rules winning, as Netlify applies them. Cache-Control is left
// out: the preview is never cached (serve sends no-store), so a rebuilt
// page is always the one shown.
func setHeaders(h http.Header, rules []headerRule, p string) {
	for _, r := range rules {
		if !matchNetlify(r.For, p) {
			continue
		}
		for k, v := range r.Values {
			if http.CanonicalHeaderKey(k) == "Cache-Control" {
				continue
			}
			h.Set(k, v)
		}
	}
}

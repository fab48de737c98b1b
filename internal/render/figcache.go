package render

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/ownership-book/ownership/internal/verify"
)

// FigureCache keeps drawn figures by content: the key is a hash of the
// figure's language, its source, the versions of d2 and goat this bookgen
// was built with and the version of bookgen's own clean-up of their SVG.
// Figures are kept in memory and, when Dir is set, as one JSON file per
// figure in Dir (bookgen uses .bookgen-cache/figures/), so that a second
// build, or a rebuild in bookgen serve, draws only the figures that
// changed. A failed drawing is never cached. The zero FigureCache caches in
// memory only; a nil *FigureCache caches nothing. It is safe for
// concurrent use.
type FigureCache struct {
	Dir string
	// Context, when set, is the build's: a drawing still running when it
	// is done is abandoned and Draw returns its error (see
	// DrawFigureWithin).
	Context context.Context
	// Budget bounds the time one figure may take to draw (0: no bound);
	// past it the drawing is abandoned and Draw returns FigureErrors
	// saying so. bookgen takes it from book.toml ([bookgen]
	// figure-timeout).
	Budget time.Duration
	// Progress, when set, is told about once a second of a drawing that
	// has run for a second or more: Running names the figure ("d2 figure
	// at book/ch.md:12"), Since its start, Total is 0.
	Progress func(verify.Progress)

	mu    sync.Mutex
	mem   map[string]*Figure
	drawn int // figures drawn (not found in the cache)
}

// figureFormat changes whenever cleanSVG, mapColours, mergeGoatText or Figure change
// what a cached entry holds.
const figureFormat = "figure v2"

var libVersions = sync.OnceValue(func() string {
	v := map[string]string{"oss.terrastruct.com/d2": "?", "github.com/bep/goat": "?"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if _, want := v[d.Path]; want {
				v[d.Path] = d.Version
			}
		}
	}
	return "d2 " + v["oss.terrastruct.com/d2"] + ", goat " + v["github.com/bep/goat"]
})

func figureKey(lang, src string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s", figureFormat, libVersions(), lang, src)
	return hex.EncodeToString(h.Sum(nil))
}

// Drawn returns how many figures this cache had to draw.
func (c *FigureCache) Drawn() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drawn
}

// Draw returns the figure of src in language lang (see DrawFigure), from
// the cache when it has it.
func (c *FigureCache) Draw(lang, src string) (*Figure, error) {
	return c.DrawAt("", lang, src)
}

// DrawAt is Draw for the figure at where ("book/ch.md:12"), the name
// Progress reports it by; the drawing honours Context and Budget.
func (c *FigureCache) DrawAt(where, lang, src string) (*Figure, error) {
	if c == nil {
		return DrawFigure(lang, src)
	}
	key := figureKey(lang, src)
	c.mu.Lock()
	fig := c.mem[key]
	c.mu.Unlock()
	if fig != nil {
		return fig, nil
	}
	if fig = c.load(key); fig == nil {
		var err error
		ctx := c.Context
		if ctx == nil {
			ctx = context.Background()
		}
		var tick func(time.Duration)
		if c.Progress != nil && where != "" {
			start := time.Now()
			name := lang + " figure at " + where
			tick = func(time.Duration) {
				c.Progress(verify.Progress{Running: []string{name}, Since: []time.Time{start}})
			}
			defer c.Progress(verify.Progress{})
		}
		fig, err = DrawFigureWithin(ctx, c.Budget, tick, lang, src)
		if err != nil {
			return nil, err
		}
		c.save(key, fig)
		c.mu.Lock()
		c.drawn++
		c.mu.Unlock()
	}
	c.mu.Lock()
	if c.mem == nil {
		c.mem = map[string]*Figure{}
	}
	c.mem[key] = fig
	c.mu.Unlock()
	return fig, nil
}

func (c *FigureCache) file(key string) string {
	return filepath.Join(c.Dir, key[:2], key+".json")
}

// load reads a cached figure; a missing or unreadable file is a miss.
func (c *FigureCache) load(key string) *Figure {
	if c.Dir == "" {
		return nil
	}
	data, err := os.ReadFile(c.file(key))
	if err != nil {
		return nil
	}
	var fig Figure
	if json.Unmarshal(data, &fig) != nil || len(fig.SVG) == 0 {
		return nil
	}
	return &fig
}

// save writes fig atomically (a temporary file renamed into place); a
// cache that cannot be written only costs a later build the drawing.
func (c *FigureCache) save(key string, fig *Figure) {
	if c.Dir == "" {
		return
	}
	data, err := json.Marshal(fig)
	if err != nil {
		return
	}
	name := c.file(key)
	if os.MkdirAll(filepath.Dir(name), 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), ".tmp-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), name) != nil {
		_ = os.Remove(tmp.Name())
	}
}

package render

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/yuin/goldmark/ast"
)

// ReservedIDs are the id attributes the page template (theme/page.html), the
// theme's scripts and bookgen serve's error overlay put on every page. A
// heading whose id would be one of them gets the next free numbered id
// instead ("help-title-1"), so that no id appears twice on a page.
// internal/site's tests check that the template uses no other id.
var ReservedIDs = []string{
	"bookgen-error",
	"content",
	"help-dialog",
	"help-title",
	"search-dialog",
	"search-input",
	"search-results",
	"search-status",
	"sidebar",
}

// reservedPrefix is the prefix of the ids theme/book.js gives search
// results ("search-result-0", "search-result-1", ...).
const reservedPrefix = "search-result-"

// Reserved reports whether id is taken by the page template or its scripts
// (see ReservedIDs).
func Reserved(id string) bool {
	for _, r := range ReservedIDs {
		if id == r {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(id, reservedPrefix); ok && rest != "" {
		if _, err := strconv.Atoi(rest); err == nil {
			return true
		}
	}
	return false
}

// NormalizeID turns a heading's plain text into an id with mdBook's rule
// (mdbook::utils::normalize_id): Unicode letters and numbers (Rust's
// char::is_alphanumeric, which counts vowel signs such as Devanagari "ি"
// as letters), "_" and "-" are kept and lowercased with Unicode's rules
// (Rust's char::to_lowercase, which mdBook applies to every kept character
// since its change from ASCII-only lowercasing), each whitespace character
// becomes "-", and everything else is dropped. The text is trimmed first,
// as mdBook's id_from_content does. "Épocas y fencing — Ünïcode 日本語"
// gives "épocas-y-fencing--ünïcode-日本語", "## Überblick" gives
// "überblick". The result is "" when nothing is kept.
func NormalizeID(text string) string {
	var b strings.Builder
	for _, c := range strings.TrimSpace(text) {
		switch {
		case alphanumeric(c) || c == '_' || c == '-':
			b.WriteString(lowerRune(c))
		case unicode.IsSpace(c):
			b.WriteByte('-')
		}
	}
	return b.String()
}

// autoMark starts the placeholder id handed to goldmark for a heading
// without an explicit {#id}; assign replaces it. A NUL byte cannot come
// from Markdown text, so no explicit id starts with it.
const autoMark = "\x00auto"

// idTable is goldmark's parser.IDs for one page: it records explicit ids
// ({#id}) while parsing and hands out placeholders for the others, which
// assign turns into mdBook-style ids once the heading's inline content has
// been parsed (mdBook derives the id from the rendered heading, so a link's
// text counts and its URL does not).
type idTable struct {
	used map[string]bool
	n    int
}

func newIDTable() *idTable {
	t := &idTable{used: map[string]bool{}}
	for _, r := range ReservedIDs {
		t.used[r] = true
	}
	return t
}

// Generate implements parser.IDs.
func (t *idTable) Generate(value []byte, kind ast.NodeKind) []byte {
	t.n++
	return []byte(autoMark + strconv.Itoa(t.n))
}

// Put implements parser.IDs: value is an explicit id.
func (t *idTable) Put(value []byte) { t.used[string(value)] = true }

// assign gives every heading of doc that has a placeholder id its id, in
// document order: NormalizeID of its plain text ("heading" when that is
// empty), then, as mdBook does for repeated headings, "-1", "-2", ... until
// the id is used by no explicit id, earlier heading or the template
// (Reserved).
func (t *idTable) assign(doc ast.Node, src []byte) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		h, ok := n.(*ast.Heading)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		if !strings.HasPrefix(headingID(h), autoMark) {
			return ast.WalkSkipChildren, nil
		}
		base := NormalizeID(plainText(h, src))
		if base == "" {
			base = "heading"
		}
		id := base
		for i := 1; t.used[id] || Reserved(id); i++ {
			id = base + "-" + strconv.Itoa(i)
		}
		t.used[id] = true
		h.SetAttributeString("id", []byte(id))
		return ast.WalkSkipChildren, nil
	})
}

// alphanumeric is Rust's char::is_alphanumeric: the Unicode Alphabetic
// property (letters, letter numbers and Other_Alphabetic marks) or a
// number (Nd, Nl, No).
func alphanumeric(c rune) bool {
	return unicode.IsLetter(c) || unicode.IsNumber(c) || unicode.Is(unicode.Other_Alphabetic, c)
}

// lowerRune is Rust's char::to_lowercase: the rune's Unicode lowercase
// mapping, which for U+0130 (İ, capital I with dot above) is two runes,
// "i" and U+0307 (combining dot above), where Go's unicode.ToLower gives
// one.
func lowerRune(c rune) string {
	if c == '\u0130' {
		return "i\u0307"
	}
	return string(unicode.ToLower(c))
}

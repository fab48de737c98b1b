package book

import (
	"fmt"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/ownership-book/ownership/internal/diag"
)

// SummaryFile is the repository-relative path of the table of contents in
// bookgen's layout (Book.SummaryFile is the loaded book's).
const SummaryFile = "book/SUMMARY.md"

// ParseSummary parses the text of book/SUMMARY.md in mdBook's format
// (https://rust-lang.github.io/mdBook/format/summary.html) and returns the
// optional "# Title" and the top-level entries in order. Chapter files are not
// read: Item.Source stays nil.
//
// The accepted lines, one entry per line:
//
//	# Title                  first heading, before any entry: the book's title
//	[Title](file.md)         prefix chapter (before the numbered list) or
//	                         suffix chapter (after it); never nested
//	# Part title             starts (or continues) the numbered list
//	- [Title](file.md)       numbered chapter ("*" works as well as "-");
//	    - [Title](sub.md)    nested by indentation (a tab counts as 4 columns):
//	                         indented at least to the text of the item above
//	                         (CommonMark's content column, 2 for "- [")
//	- [Title]()              draft chapter: numbered, no file
//	---                      separator (three or more dashes)
//
// A title may continue on the following lines until its link closes
// (CommonMark's paragraph continuation; the line break is a space). The
// title is inline Markdown: Item.Title is its plain text, Item.TitleHTML
// its rendering. A link target is any file of the book folder, with or
// without ".md" ("first/README"); book.HTMLPath gives its page.
//
// Blank lines and HTML comments are skipped, also after an entry on its
// line. Numbering follows mdBook: top
// level chapters count 1, 2, 3 ... across part titles (a part title does not
// restart the count), nested ones 1.1, 1.2 ...
//
// Anything else is an error at SummaryFile and its line: a list item that is
// not a single link, a deeper heading, indentation that matches no enclosing
// item, a numbered chapter after a suffix chapter, a link target that is a
// URL or a folder or leaves book/, the same file listed twice.
func ParseSummary(src []byte) (title string, items []*Item, err error) {
	title, items, _, err = parseSummary(src, "book", false)
	return title, items, err
}

// parseSummary is ParseSummary for the SUMMARY.md of the source folder dir
// (a repository-relative slash path, see Book.Src). It also returns the
// warnings: text mdBook ignores, which bookgen drops too but names. In a
// plain mdBook book (plain, book.Config.Plain) a list item's second link,
// which mdBook drops without a word, is a warning too; elsewhere it is an
// error, as a broken link is.
func parseSummary(src []byte, dir string, plain bool) (title string, items []*Item, warnings []*diag.Error, err error) {
	p := &summaryParser{seen: map[string]int{}, base: -1, dir: dir, plain: plain}
	lines := strings.Split(string(src), "\n")
	inComment := false
	for i := 0; i < len(lines); i++ {
		p.line = i + 1
		line := strings.TrimRight(lines[i], " \t\r")
		if inComment {
			if strings.Contains(line, "-->") {
				inComment = false
			}
			continue
		}
		indent, rest := leadingIndent(line)
		switch {
		case rest == "":
			continue
		case strings.HasPrefix(rest, "<!--"):
			inComment = !strings.Contains(rest[4:], "-->")
			continue
		}
		// A title may run over several lines, the later ones indented
		// or not ("- [A long\n  title](a.md)"): CommonMark's paragraph
		// continuation, which mdBook's parser follows. Join them with a
		// space (a soft line break) until the link closes.
		for j := i + 1; j < len(lines) && unclosedLink(rest); j++ {
			next := strings.TrimSpace(lines[j])
			if next == "" {
				break
			}
			rest += " " + next
			i = j
		}
		if err := p.parseLine(indent, rest); err != nil {
			return "", nil, nil, err
		}
	}
	if inComment {
		return "", nil, nil, diag.Errorf(path.Join(dir, "SUMMARY.md"), len(lines), "unterminated HTML comment")
	}
	return p.title, p.items, p.warnings, nil
}

type summaryParser struct {
	// plain is set for a plain mdBook book: a list item's second link
	// is dropped with a warning, as mdBook drops it, not an error.
	plain   bool
	line    int
	title   string
	items   []*Item
	section Section
	// started is set once the first entry (not the title) is seen.
	started bool
	// numbered counts top-level numbered chapters across all parts.
	numbered int
	// sawNumbered is set once a numbered chapter is seen.
	sawNumbered bool
	// firstSuffix is the line of the first suffix chapter, 0 before it.
	firstSuffix int
	// base is the indentation of top-level list items, -1 before the first.
	base int
	// stack holds the open numbered items, outermost first, with the
	// indentation of each.
	stack []openItem
	// seen maps a chapter path to the line that listed it.
	seen map[string]int
	// dir is the source folder, repository-relative ("book").
	dir string
	// warnings are the problems that do not stop the build.
	warnings []*diag.Error
}

type openItem struct {
	indent int
	// content is the column where the item's text starts (CommonMark's
	// content column): a later item is nested under this one only when it
	// is indented at least this far.
	content int
	item    *Item
	// childIndent is the indentation of this item's children, -1 before
	// the first child.
	childIndent int
}

func (p *summaryParser) errorf(format string, args ...any) error {
	return diag.Errorf(path.Join(p.dir, "SUMMARY.md"), p.line, format, args...)
}

func (p *summaryParser) parseLine(indent int, rest string) error {
	switch {
	case strings.HasPrefix(rest, "#"):
		return p.heading(indent, rest)
	case isSeparator(rest):
		p.stack = nil
		p.items = append(p.items, &Item{Kind: KindSeparator, Section: p.section, Line: p.line})
		p.started = true
		return nil
	case isListItem(rest):
		return p.listItem(indent, contentColumn(indent, rest), rest[2:])
	case strings.HasPrefix(rest, "["):
		return p.affixChapter(indent, rest)
	}
	return p.errorf("unexpected line %q: want a link [Title](file.md), a list item - [Title](file.md), a # part title or ---", clip(rest))
}

func (p *summaryParser) heading(indent int, rest string) error {
	level := len(rest) - len(strings.TrimLeft(rest, "#"))
	text := rest[level:]
	if text != "" && text[0] != ' ' && text[0] != '\t' {
		return p.errorf("unexpected line %q: a heading needs a space after #", clip(rest))
	}
	if indent > 3 {
		return p.errorf("heading %q is indented %d columns; headings start at the left margin", clip(rest), indent)
	}
	if level != 1 {
		// mdBook's summary parser skips any heading but an h1 (and
		// what it holds): it is no part title and no entry.
		p.warnings = append(p.warnings, diag.Errorf(path.Join(p.dir, "SUMMARY.md"), p.line, "heading level %d %q is dropped, as mdBook drops it: only a level-1 heading (# Part title) means something in SUMMARY.md", level, clip(rest)))
		p.started = true
		return nil
	}
	text = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(text), "#"))
	if text == "" {
		return p.errorf("empty heading")
	}
	if !p.started && p.title == "" {
		p.title = unescape(text)
		return nil
	}
	if p.section == Suffix {
		return p.errorf("part title %q after the suffix chapters (first at line %d); part titles belong to the numbered list", text, p.firstSuffix)
	}
	p.section = Numbered
	p.stack = nil
	p.started = true
	p.items = append(p.items, &Item{Kind: KindPartTitle, Section: Numbered, Title: unescape(text), Line: p.line})
	return nil
}

func (p *summaryParser) affixChapter(indent int, rest string) error {
	if indent > 3 {
		if len(p.stack) > 0 && p.plain {
			top := p.stack[len(p.stack)-1].item
			p.warnings = append(p.warnings, diag.Errorf(path.Join(p.dir, "SUMMARY.md"), p.line, "link %q without a list marker under the list item %q (line %d) continues that item's text and is dropped, as mdBook drops it (only an item's first link counts); write it as a list item to keep it: - %s", clip(rest), top.Title, top.Line, clip(rest)))
			return nil
		}
		if len(p.stack) > 0 {
			return p.errorf("link %q without a list marker under the list item %q (line %d) continues that item's text, and mdBook keeps only an item's first link; write it as a list item: - %s", clip(rest), p.stack[len(p.stack)-1].item.Title, p.stack[len(p.stack)-1].item.Line, clip(rest))
		}
		return p.errorf("unnumbered chapter %q is indented %d columns; prefix and suffix chapters cannot be nested", clip(rest), indent)
	}
	switch p.section {
	case Numbered:
		if !p.sawNumbered {
			return p.errorf("unnumbered chapter %q after a part title: a part title must be followed by numbered chapters (- [Title](file.md))", clip(rest))
		}
		p.section = Suffix
		p.firstSuffix = p.line
	case Suffix:
	case Prefix:
	}
	it, err := p.link(rest)
	if err != nil {
		return err
	}
	it.Section = p.section
	p.stack = nil
	p.started = true
	p.items = append(p.items, it)
	return nil
}

func (p *summaryParser) listItem(indent, content int, rest string) error {
	if p.section == Suffix {
		return p.errorf("numbered chapter after the suffix chapter at line %d: unnumbered chapters after the numbered list are suffix chapters, and nothing numbered may follow them (prefix chapters go before the first numbered one)", p.firstSuffix)
	}
	rest = strings.TrimLeft(rest, " \t")
	if !strings.HasPrefix(rest, "[") {
		return p.errorf("list item %q is not a link: want - [Title](file.md) or - [Title]() for a draft", clip(rest))
	}
	it, err := p.link(rest)
	if err != nil {
		return err
	}
	it.Section = Numbered
	p.section = Numbered
	p.started = true
	p.sawNumbered = true

	if p.base < 0 {
		p.base = indent
	}
	// As in CommonMark (and so in mdBook), an item is nested under an
	// open item only when it is indented at least to that item's content
	// column; "- [A]" then " - [B]" are siblings, not A and A's child.
	var under *openItem
	for len(p.stack) > 0 && indent < p.stack[len(p.stack)-1].content {
		under = &p.stack[len(p.stack)-1]
		p.stack = p.stack[:len(p.stack)-1]
	}
	if len(p.stack) == 0 {
		if indent != p.base {
			switch {
			case indent < p.base:
				return p.errorf("list item indented %d columns, less than the top-level items (%d)", indent, p.base)
			case under != nil:
				return p.errorf("list item indented %d columns: too little to nest under %q (line %d; a nested chapter is indented at least %d) and not aligned with it as a sibling (%d)", indent, under.item.Title, under.item.Line, under.content, under.indent)
			}
			return p.errorf("list item indented %d columns but no chapter above it to nest under (top-level items are indented %d)", indent, p.base)
		}
		p.numbered++
		it.Number = []int{p.numbered}
		p.items = append(p.items, it)
	} else {
		parent := &p.stack[len(p.stack)-1]
		if parent.childIndent >= 0 && parent.childIndent != indent {
			return p.errorf("list item indented %d columns but its siblings under %q are indented %d: inconsistent nesting", indent, parent.item.Title, parent.childIndent)
		}
		parent.childIndent = indent
		it.Number = append(append([]int(nil), parent.item.Number...), len(parent.item.Children)+1)
		parent.item.Children = append(parent.item.Children, it)
	}
	p.stack = append(p.stack, openItem{indent: indent, content: content, item: it, childIndent: -1})
	return nil
}

// link parses "[Title](target)" filling a chapter Item.
func (p *summaryParser) link(s string) (*Item, error) {
	// Title: up to the matching ']', honouring backslash escapes and
	// nested brackets.
	depth, end := 0, -1
	for i := 0; i < len(s) && end < 0; i++ {
		switch s[i] {
		case '\\':
			i++
		case '`':
			if j := strings.IndexByte(s[i+1:], '`'); j >= 0 {
				i += j + 1
			}
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				end = i
			}
		}
	}
	if end < 0 {
		return nil, p.errorf("unterminated link %q: want [Title](file.md)", clip(s))
	}
	title, titleHTML := inlineTitle(strings.TrimSpace(s[1:end]))
	rest := s[end+1:]
	if !strings.HasPrefix(rest, "(") {
		return nil, p.errorf("%q is not a link: want [Title](file.md)", clip(s))
	}
	rest = rest[1:]
	var target string
	if strings.HasPrefix(rest, "<") {
		j := strings.IndexByte(rest, '>')
		if j < 0 {
			return nil, p.errorf("unterminated <target> in link %q", clip(s))
		}
		target, rest = rest[1:j], rest[j+1:]
		if !strings.HasPrefix(rest, ")") {
			return nil, p.errorf("link %q: want ) after <target>", clip(s))
		}
		rest = rest[1:]
	} else {
		j := strings.IndexByte(rest, ')')
		if j < 0 {
			return nil, p.errorf("unterminated link %q: want [Title](file.md)", clip(s))
		}
		// CommonMark allows white space around a destination:
		// "[A]( a.md )" links a.md, and "[A](  )" is a draft as in mdBook.
		target, rest = strings.TrimSpace(rest[:j]), rest[j+1:]
		if strings.ContainsAny(target, " \t") {
			return nil, p.errorf("link target %q contains a space: write <%s> or use %%20", target, target)
		}
	}
	rest = strings.TrimSpace(rest)
	for strings.HasPrefix(rest, "<!--") {
		// A note after an entry: "- [A](a.md) <!-- TODO -->".
		end := strings.Index(rest[4:], "-->")
		if end < 0 {
			break
		}
		rest = strings.TrimSpace(rest[4+end+3:])
	}
	if rest != "" {
		if strings.Contains(rest, "](") || strings.HasPrefix(rest, "[") {
			return nil, p.errorf("unexpected text %q after the link; an entry is one link on its own line", clip(rest))
		}
		// mdBook takes an item's first link and skips the rest of the
		// item (parse_nested_item in crates/mdbook-summary): a note
		// after the link is dropped, which bookgen says.
		p.warnings = append(p.warnings, diag.Errorf(path.Join(p.dir, "SUMMARY.md"), p.line, "text %q after the link is not part of the entry and is dropped, as mdBook drops it", clip(rest)))
	}
	if title == "" {
		return nil, p.errorf("link with an empty title")
	}
	it := &Item{Kind: KindChapter, Title: title, TitleHTML: titleHTML, Line: p.line}
	if target == "" {
		it.Draft = true
		return it, nil
	}
	clean, err := p.chapterPath(target)
	if err != nil {
		return nil, err
	}
	if prev, ok := p.seen[clean]; ok {
		return nil, p.errorf("chapter file %s is already listed at line %d; each file may appear once", path.Join(p.dir, clean), prev)
	}
	p.seen[clean] = p.line
	it.Path = clean
	return it, nil
}

// chapterPath checks a link target and returns it cleaned, relative to
// book/.
func (p *summaryParser) chapterPath(target string) (string, error) {
	if strings.Contains(target, "#") || strings.Contains(target, "?") {
		return "", p.errorf("link target %q: a chapter is a whole .md file, without #fragment or ?query", target)
	}
	u, err := url.PathUnescape(target)
	if err != nil {
		return "", p.errorf("link target %q: %v", target, err)
	}
	if !utf8.ValidString(u) {
		// "%FF.md": the file may exist, but its page's URL and the
		// search index's address for it cannot be written as text.
		return "", p.errorf("link target %q decodes to a file name that is not valid UTF-8; name chapter files in UTF-8", target)
	}
	if strings.Contains(u, "://") || strings.HasPrefix(u, "mailto:") {
		return "", p.errorf("link target %q is a URL; a chapter is a .md file under %s/", target, p.dir)
	}
	if strings.HasSuffix(u, "/") || path.Base(u) == "." || path.Base(u) == ".." {
		return "", p.errorf("link target %q names a folder; a chapter is a file (first/README.md)", target)
	}
	if strings.HasPrefix(u, "/") || strings.Contains(u, "\\") || strings.ContainsRune(u, 0) {
		return "", p.errorf("link target %q must be a relative slash-separated path inside %s/", target, p.dir)
	}
	clean := path.Clean(u)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", p.errorf("link target %q escapes %s/", target, p.dir)
	}
	return clean, nil
}

// unclosedLink reports whether the entry s (a list item or a link,
// after its indentation) opens a link "[Title](target)" that does not
// close on this line.
func unclosedLink(s string) bool {
	if isListItem(s) {
		s = strings.TrimLeft(s[2:], " \t")
	}
	if !strings.HasPrefix(s, "[") {
		return false
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '`':
			// A code span may hold brackets: skip to its end.
			if j := strings.IndexByte(s[i+1:], '`'); j >= 0 {
				i += j + 1
			}
		case '[':
			depth++
		case ']':
			if depth--; depth == 0 {
				rest := s[i+1:]
				return strings.HasPrefix(rest, "(") && !strings.Contains(rest, ")")
			}
		}
	}
	return true
}

// leadingIndent returns the indentation of line in columns (a tab advances
// to the next multiple of 4) and the rest of the line.
func leadingIndent(line string) (int, string) {
	col := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return col, line[i:]
		}
	}
	return col, ""
}

// contentColumn returns the column where the text of a list item starts:
// after the marker at column indent and the 1 to 4 columns of white space
// that follow it (5 or more count as 1, CommonMark's rule for a list item
// starting with indented code). rest starts with the marker.
func contentColumn(indent int, rest string) int {
	col := indent + 1
	for i := 1; i < len(rest); i++ {
		switch rest[i] {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			if col-(indent+1) > 4 {
				return indent + 2
			}
			return col
		}
	}
	return indent + 2
}

func isSeparator(s string) bool {
	return len(s) >= 3 && strings.Trim(s, "-") == ""
}

func isListItem(s string) bool {
	return len(s) >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && (s[1] == ' ' || s[1] == '\t')
}

// unescape removes CommonMark backslash escapes of ASCII punctuation.
func unescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// clip shortens s for an error message.
func clip(s string) string {
	const max = 60
	if len(s) <= max {
		return s
	}
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max]) + "…"
}

// NumberString formats a numbered chapter's section number as mdBook
// prints it ("1.2."); "" for an unnumbered item.
func (it *Item) NumberString() string {
	var b strings.Builder
	for _, x := range it.Number {
		fmt.Fprintf(&b, "%d.", x)
	}
	return b.String()
}

package markdown

import "strings"

// ParseInfo splits a fenced code block's info string into its language and
// attributes. The language is the first word, lower-cased ("go", "console",
// "" when the info string is empty). The attributes follow, separated by
// spaces, tabs or commas (commas so that mdBook's "rust,ignore" habit reads
// the same); each is "key" (value "") or "key=value". A value may be quoted
// with " or ' to hold separators: hl_lines="1 3-5". Later keys win.
//
// The attributes bookgen acts on:
//
//	ignore         go blocks: not compiled or parsed (counted in Report.Ignored);
//	               console blocks: not run
//	timeout=120s   console blocks: per-command timeout (Go duration)
//	hl_lines=, linenos   presentation only (the renderer's)
//
// Unknown attributes are kept in the map; Verify refuses them on go and
// console blocks, where a misspelt one would change what is checked.
func ParseInfo(info string) (lang string, attrs map[string]string) {
	attrs = map[string]string{}
	fields := splitInfo(info)
	if len(fields) == 0 {
		return "", attrs
	}
	lang = strings.ToLower(fields[0])
	for _, f := range fields[1:] {
		key, val, _ := strings.Cut(f, "=")
		if key == "" {
			continue
		}
		attrs[key] = unquote(val)
	}
	return lang, attrs
}

// splitInfo splits at spaces, tabs and commas outside quotes.
func splitInfo(s string) []string {
	var fields []string
	var b strings.Builder
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			b.WriteByte(c)
		case c == '"' || c == '\'':
			quote = c
			b.WriteByte(c)
		case c == ' ' || c == '\t' || c == ',':
			if b.Len() > 0 {
				fields = append(fields, b.String())
				b.Reset()
			}
		default:
			b.WriteByte(c)
		}
	}
	if b.Len() > 0 {
		fields = append(fields, b.String())
	}
	return fields
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return strings.Trim(v, `"'`)
}

// Checkable reports whether a fenced block with this language and these
// attributes (ParseInfo's) is of a kind verification checks: a go block
// (compiled or parsed), a console block (a transcript to run, unless
// verification finds it is not one), and a figure that is a program's
// output (d2 with run=). A page may show such a block only with the
// verdict verification gave it (verify.BlockVerdict), "ignore" included.
func Checkable(lang string, attrs map[string]string) bool {
	switch lang {
	case "go", "console":
		return true
	case "d2":
		_, run := attrs["run"]
		return run
	}
	return false
}

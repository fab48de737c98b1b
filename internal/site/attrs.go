package site

import "bytes"

// eachAttr calls f for every attribute written as ` name="value"` in html
// whose name is one of names (the space may be any of HTML's white space
// characters), in order, with the byte offsets of the name and of the
// value. It matches what the regular expression `\s(name)="([^"]*)"`
// would, in one pass without backtracking: the site runs it over every
// page of a large book (link check, print.html).
func eachAttr(html []byte, names []string, f func(name string, nameStart, valStart, valEnd int)) {
	i := 0
	for {
		j := bytes.Index(html[i:], []byte(`="`))
		if j < 0 {
			return
		}
		eq := i + j
		valStart := eq + 2
		next := valStart
		for _, name := range names {
			ns := eq - len(name)
			if ns < 1 || string(html[ns:eq]) != name || !isSpace(html[ns-1]) {
				continue
			}
			k := bytes.IndexByte(html[valStart:], '"')
			if k < 0 {
				break
			}
			f(name, ns, valStart, valStart+k)
			next = valStart + k + 1
			break
		}
		i = next
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

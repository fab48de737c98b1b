package markdown

import (
	"bytes"
	"fmt"
)

// MaxNesting is the deepest nesting of block containers (list items and
// block quotes, counted together) a chapter may use. The rule and the
// figure are markdown-it's (its parser option maxNesting, 100 by default):
// goldmark, like any CommonMark parser, revisits every open container on
// every line, and its time on a list nested n deep grows faster than n²
// (measured: 500 levels 0.4 s, 1,000 levels 5.6 s, 10,000 levels did not
// finish in ten minutes). No book needs a hundred levels.
const MaxNesting = 100

// MaxLinkScan is how many bytes, summed over a chapter, goldmark may have
// to scan looking for the end of link destinations that are opened with
// "](" and not closed. goldmark scans from each "](" to the ")" that
// balances it, or to the end of the paragraph when none does: n unclosed
// openings in one paragraph cost n²/2 steps ("[x](" repeated 60,000 times,
// 240 KB, takes about a minute). 1<<25 bytes is about 0.1 s of scanning;
// a chapter of ordinary links scans a few bytes per link.
const MaxLinkScan = 1 << 25

// Problem is one reason Bounds refuses a chapter: Line is 1-based in the
// source given to Bounds.
type Problem struct {
	Line int
	Msg  string
}

// Bounds checks, before a chapter is parsed, that its Markdown stays
// within what the parser handles in time proportional to its size: block
// containers nested at most MaxNesting deep, and unclosed link
// destinations costing at most MaxLinkScan bytes of scanning. It is a pure
// function of src (the expanded chapter) and runs in time linear in it.
// Problems come in line order, at most one of each kind (the first line
// where the bound is passed). Lines inside fenced code blocks are not
// Markdown and are skipped.
func Bounds(src []byte) []Problem {
	var probs []Problem
	lines := bytes.SplitAfter(src, []byte("\n"))
	var nestErr *Problem
	var stack []int // content column of each open list item
	var fence []byte
	var para []byte  // the current paragraph's text
	paraLine := 0    // 1-based line the paragraph starts at
	var starts []int // offsets in para where each of its lines starts
	scanned := 0
	var linkErr *Problem
	flush := func() {
		if linkErr == nil && len(para) > 0 {
			if off, n, ok := linkScan(para, &scanned); !ok {
				line := paraLine
				for i, s := range starts {
					if s <= off {
						line = paraLine + i
					}
				}
				linkErr = &Problem{Line: line, Msg: fmt.Sprintf(
					"%d link destinations in this paragraph are opened with \"](\" and never closed; the parser scans the rest of the paragraph for each one (time grows with the square of their number): close them with \")\" or write the bracket as \\]", n)}
			}
		}
		para, starts = para[:0], starts[:0]
	}
	for i, raw := range lines {
		n := i + 1
		l := bytes.TrimRight(raw, "\r\n")
		trim := bytes.TrimLeft(l, " \t>")
		if fence != nil {
			if bytes.HasPrefix(bytes.TrimLeft(trim, " \t"), fence) && len(bytes.Trim(bytes.TrimLeft(trim, " \t"), string(fence[:1])+" \t")) == 0 {
				fence = nil
			}
			continue
		}
		if len(bytes.TrimSpace(l)) == 0 {
			flush()
			continue
		}
		// Block quote markers, then the indentation, then list markers.
		quotes, rest := 0, l
		for {
			j := 0
			for j < len(rest) && j < 4 && rest[j] == ' ' {
				j++
			}
			if j < len(rest) && rest[j] == '>' {
				quotes++
				rest = rest[j+1:]
				continue
			}
			break
		}
		col := indent(rest)
		for len(stack) > 0 && stack[len(stack)-1] > col {
			stack = stack[:len(stack)-1]
		}
		// "- - a" opens two items: each marker's content column is
		// where the next marker may stand.
		body, base := rest, 0
		for {
			if t := bytes.TrimLeft(body, " "); len(t) > 0 && t[0] == '>' && len(stack) > 0 {
				quotes++ // a block quote inside a list item
				base += len(body) - len(t) + 1
				body = t[1:]
				continue
			}
			w, ok := listMarker(body)
			if !ok {
				break
			}
			at := base + indent(body)
			stack = append(stack, at+w)
			body = body[leading(body)+w:]
			base = at + w
		}
		if d := len(stack) + quotes; d > MaxNesting && nestErr == nil {
			nestErr = &Problem{Line: n, Msg: fmt.Sprintf(
				"lists and block quotes nest %d deep here; a chapter may nest them at most %d deep (the parser's time grows steeply with depth): flatten the list", d, MaxNesting)}
		}
		if f := fenceOpen(bytes.TrimLeft(trim, " \t")); f != nil {
			flush()
			fence = f
			continue
		}
		if len(para) == 0 {
			paraLine = n
		}
		starts = append(starts, len(para))
		para = append(para, l...)
		para = append(para, '\n')
	}
	flush()
	if nestErr != nil {
		probs = append(probs, *nestErr)
	}
	if linkErr != nil {
		probs = append(probs, *linkErr)
	}
	if len(probs) == 2 && probs[1].Line < probs[0].Line {
		probs[0], probs[1] = probs[1], probs[0]
	}
	return probs
}

// linkScan adds to *scanned the bytes goldmark scans for the destination
// of each "](" in para: up to the ")" that balances it (parentheses
// counted as CommonMark's link destination rule counts them), or to the
// end of para. It returns false, with the offset of the "](" at which the
// total passed MaxLinkScan and the number of unclosed openings in para,
// when it did. Linear: the balancing ")" of every position comes from one
// pass with a stack.
func linkScan(para []byte, scanned *int) (int, int, bool) {
	// bal[i]: "(" minus ")" in para[:i], escaped ones not counted.
	bal := make([]int, len(para)+1)
	for i := 0; i < len(para); i++ {
		d := 0
		if para[i] == '\\' && i+1 < len(para) {
			bal[i+1] = bal[i]
			i++
			bal[i+1] = bal[i]
			continue
		}
		switch para[i] {
		case '(':
			d = 1
		case ')':
			d = -1
		}
		bal[i+1] = bal[i] + d
	}
	// next[k]: the first j > k with bal[j] < bal[k] (the ")" closing a
	// destination that starts at k ends just before j), or len(para)+1.
	next := make([]int, len(bal))
	var st []int
	for j := range bal {
		for len(st) > 0 && bal[j] < bal[st[len(st)-1]] {
			next[st[len(st)-1]] = j
			st = st[:len(st)-1]
		}
		st = append(st, j)
	}
	for _, k := range st {
		next[k] = len(para) + 1
	}
	unclosed, at := 0, -1
	for p := 0; p+1 < len(para); p++ {
		if para[p] == '\\' {
			p++
			continue
		}
		if para[p] != ']' || para[p+1] != '(' {
			continue
		}
		k := p + 2 // the destination starts after "]("
		end := next[k]
		if end > len(para) {
			unclosed++
		}
		*scanned += end - k
		if *scanned > MaxLinkScan && at < 0 {
			at = p
		}
	}
	return max(at, 0), unclosed, at < 0
}

// indent returns the column of the first non-blank byte of l (a tab
// advances to the next multiple of 4, as CommonMark's tab stops).
func indent(l []byte) int {
	col := 0
	for _, c := range l {
		switch c {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return col
		}
	}
	return col
}

func leading(l []byte) int {
	return len(l) - len(bytes.TrimLeft(l, " \t"))
}

// listMarker reports whether l (after its indentation) starts a list
// item, and the width of the marker with the one space after it:
// "-", "+", "*", or 1 to 9 digits and "." or ")" (CommonMark "List items").
func listMarker(l []byte) (int, bool) {
	s := bytes.TrimLeft(l, " \t")
	if len(s) == 0 {
		return 0, false
	}
	w := 0
	switch {
	case s[0] == '-' || s[0] == '+' || s[0] == '*':
		w = 1
	case s[0] >= '0' && s[0] <= '9':
		for w < len(s) && w < 9 && s[w] >= '0' && s[w] <= '9' {
			w++
		}
		if w >= len(s) || (s[w] != '.' && s[w] != ')') {
			return 0, false
		}
		w++
	default:
		return 0, false
	}
	if w == len(s) {
		return w, true // an empty item
	}
	if s[w] != ' ' && s[w] != '\t' {
		return 0, false
	}
	return w + 1, true
}

// fenceOpen returns the fence (``` or ~~~, as long as it is written) that
// s opens, or nil.
func fenceOpen(s []byte) []byte {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(s) && s[n] == c {
			n++
		}
		if n >= 3 {
			if c == '`' && bytes.IndexByte(s[n:], '`') >= 0 {
				return nil // an inline code span, not a fence
			}
			return s[:n]
		}
	}
	return nil
}

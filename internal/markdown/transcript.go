package markdown

import (
	"fmt"
	"strconv"
	"strings"
)

// Command is one "$ " line of a console block and the output the block
// says it prints.
type Command struct {
	// Line is the 0-based index of the "$ " line among the block's lines.
	Line int
	// Text is the command as written, after "$ " ("go run ./examples/x").
	Text string
	// Expected holds the lines after the command up to the next "$ " line
	// or the end of the block, with trailing blank lines dropped.
	Expected []string
}

// ParseTranscript splits the lines of a console block into commands. Every
// line that starts with "$ " (or is exactly "$") starts a command; the lines
// after it, up to the next such line, are its expected output. Text before
// the first command is an error (the returned error's message names the
// 0-based line index through *TranscriptError), and so is a line holding
// a terminal escape sequence (ESC): the real output is compared without
// them (StripANSI), and a page must not show one raw.
func ParseTranscript(lines []string) ([]Command, error) {
	var cmds []Command
	for i, l := range lines {
		if containsEscape(l) {
			return nil, &TranscriptError{Line: i, Msg: fmt.Sprintf("%q holds a terminal escape sequence (ESC, \\x1b); write the text a reader sees: bookgen strips escapes from the real output before comparing", clip(l))}
		}
		if l == "$" || strings.HasPrefix(l, "$ ") {
			text := strings.TrimSpace(strings.TrimPrefix(l, "$"))
			if text == "" {
				return nil, &TranscriptError{Line: i, Msg: "empty command after $"}
			}
			cmds = append(cmds, Command{Line: i, Text: text})
			continue
		}
		if len(cmds) == 0 {
			if strings.TrimSpace(l) == "" {
				continue
			}
			return nil, &TranscriptError{Line: i, Msg: fmt.Sprintf("%q comes before the first command; a console block starts with a \"$ go run ...\" or \"$ go test ...\" line", clip(l))}
		}
		c := &cmds[len(cmds)-1]
		c.Expected = append(c.Expected, l)
	}
	for i := range cmds {
		cmds[i].Expected = TrimTrailingBlank(cmds[i].Expected)
	}
	return cmds, nil
}

// TranscriptAttr is the info-string attribute that makes a console block a
// transcript whatever it holds ("```console transcript"): its commands are
// run and every one that bookgen cannot run is an error, as in a book
// that sets [bookgen] strict-console.
const TranscriptAttr = "transcript"

// IsTranscript reports whether the lines of a console block read as a
// transcript bookgen runs: at least one command line ("$ " and the
// command, see ParseTranscript) is "go run ..." or "go test ...". Other
// console blocks ("$ cargo run", a shell session, output with no "$"
// line) are shown as they are. A block that holds one go command is a
// transcript whole: its other commands, or text before its first "$"
// line, are ParseTranscript's and verify's errors, never skipped.
func IsTranscript(lines []string) bool {
	for _, l := range lines {
		if l != "$" && !strings.HasPrefix(l, "$ ") {
			continue
		}
		f := strings.Fields(l[1:])
		if len(f) >= 2 && f[0] == "go" && (f[1] == "run" || f[1] == "test") {
			return true
		}
	}
	return false
}

// TranscriptError is a malformed console block: Line is the 0-based index
// of the offending line in the block.
type TranscriptError struct {
	Line int
	Msg  string
}

func (e *TranscriptError) Error() string { return e.Msg }

// TrimTrailingBlank returns ls without its trailing lines that are empty or
// white space only (the same backing array).
func TrimTrailingBlank(ls []string) []string {
	for len(ls) > 0 && strings.TrimSpace(ls[len(ls)-1]) == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

func clip(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

// OutputLines splits a command's output into the lines a transcript is
// compared with: terminal escape sequences removed (StripANSI), trailing
// white space of each line and trailing blank lines dropped; no lines for
// empty output. The page's run panel (theme/run.js, outputLines) applies
// the same rule; testdata/match.json holds the cases both must pass.
func OutputLines(out string) []string {
	out = StripANSI(out)
	if out == "" {
		return nil
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	return TrimTrailingBlank(lines)
}

// AnyLines is the expected-output line that matches any number of output
// lines, including none.
const AnyLines = "..."

// AnyText, inside an expected line, matches any text within one line.
const AnyText = "[..]"

// MatchLine reports whether an actual output line matches an expected
// line: equal after trimming trailing white space, where each "[..]" in the
// expected line stands for any run of characters (possibly empty).
func MatchLine(expected, actual string) bool {
	expected = strings.TrimRight(expected, " \t\r")
	actual = strings.TrimRight(actual, " \t\r")
	parts := strings.Split(expected, AnyText)
	if len(parts) == 1 {
		return expected == actual
	}
	if !strings.HasPrefix(actual, parts[0]) {
		return false
	}
	actual = actual[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(actual, p)
		if i < 0 {
			return false
		}
		actual = actual[i+len(p):]
	}
	return len(actual) >= len(last) && strings.HasSuffix(actual, last)
}

func isAnyLines(l string) bool { return strings.TrimSpace(l) == AnyLines }

// Edit is one line of a diff between expected and actual output.
type Edit struct {
	Op byte // ' ' matched, '-' expected only, '+' actual only
	// Expected is the index in the expected lines (for ' ' on an
	// expected line and '-'); -1 for lines absorbed by "..." and '+'.
	Expected int
	Text     string
}

// Matches reports whether actual matches expected as Compare does, without
// computing the alignment: in one pass when expected has no "..." line,
// and otherwise by the usual wildcard match (each "..." absorbs any run
// of lines; on a mismatch the last "..." takes one line more), which
// needs no table. A cached transcript is checked this way on every
// rebuild.
func Matches(expected, actual []string) bool {
	expected = TrimTrailingBlank(expected)
	actual = TrimTrailingBlank(actual)
	i, j := 0, 0
	star, mark := -1, 0 // the last "..." seen, and the actual line it absorbs up to
	for j < len(actual) {
		switch {
		case i < len(expected) && isAnyLines(expected[i]):
			star, mark = i, j
			i++
		case i < len(expected) && MatchLine(expected[i], actual[j]):
			i++
			j++
		case star >= 0:
			mark++
			i, j = star+1, mark
		default:
			return false
		}
	}
	for i < len(expected) && isAnyLines(expected[i]) {
		i++
	}
	return i == len(expected)
}

// Compare matches actual output lines against expected lines (see
// MatchLine and AnyLines) and returns whether they match, and an alignment
// of the two with the fewest '-' and '+' lines. Lines absorbed by "..." are
// shown as matched. Trailing blank lines of both sides are ignored.
func Compare(expected, actual []string) (ok bool, diff []Edit) {
	expected = TrimTrailingBlank(expected)
	actual = TrimTrailingBlank(actual)
	n, m := len(expected), len(actual)
	// cost[i][j] is the fewest edits aligning expected[i:] with actual[j:].
	cost := make([][]int32, n+1)
	for i := range cost {
		cost[i] = make([]int32, m+1)
	}
	for i := n; i >= 0; i-- {
		for j := m; j >= 0; j-- {
			if i == n {
				cost[i][j] = int32(m - j)
				continue
			}
			if isAnyLines(expected[i]) {
				c := cost[i+1][j]
				if j < m && cost[i][j+1] < c {
					c = cost[i][j+1]
				}
				cost[i][j] = c
				continue
			}
			c := cost[i+1][j] + 1
			if j < m {
				if cost[i][j+1]+1 < c {
					c = cost[i][j+1] + 1
				}
				if MatchLine(expected[i], actual[j]) && cost[i+1][j+1] < c {
					c = cost[i+1][j+1]
				}
			}
			cost[i][j] = c
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && isAnyLines(expected[i]):
			if j < m && cost[i][j+1] == cost[i][j] {
				diff = append(diff, Edit{' ', -1, actual[j]})
				j++
			} else {
				i++
			}
		case i < n && j < m && MatchLine(expected[i], actual[j]) && cost[i+1][j+1] == cost[i][j]:
			diff = append(diff, Edit{' ', i, actual[j]})
			i++
			j++
		case i < n && cost[i+1][j]+1 == cost[i][j]:
			diff = append(diff, Edit{'-', i, expected[i]})
			i++
		default:
			diff = append(diff, Edit{'+', -1, actual[j]})
			j++
		}
	}
	return cost[0][0] == 0, diff
}

// FirstDifference returns the index of the expected line where diff first
// departs from the expectation: the first '-' line, or the expected line
// before which the first '+' line appears. It returns len(expected) when
// the only differences are extra actual lines after the last expected one,
// and -1 when there is no difference.
func FirstDifference(diff []Edit, nExpected int) int {
	next := 0
	for _, e := range diff {
		switch e.Op {
		case '-':
			return e.Expected
		case '+':
			return next
		default:
			if e.Expected >= 0 {
				next = e.Expected + 1
			}
		}
	}
	return -1
}

// FormatDiff renders diff unified-style ("-expected", "+actual", " both"),
// keeping context lines around changes and eliding long unchanged runs.
func FormatDiff(diff []Edit, context int) string {
	changed := make([]bool, len(diff))
	for i, e := range diff {
		if e.Op != ' ' {
			for k := max(0, i-context); k <= min(len(diff)-1, i+context); k++ {
				changed[k] = true
			}
		}
	}
	var b strings.Builder
	b.WriteString("--- expected\n+++ actual\n")
	elided := false
	for i, e := range diff {
		if !changed[i] {
			if !elided {
				b.WriteString("@@ ... @@\n")
				elided = true
			}
			continue
		}
		elided = false
		b.WriteByte(e.Op)
		b.WriteString(strings.TrimRight(e.Text, " \t\r"))
		b.WriteByte('\n')
	}
	return b.String()
}

// WhitespaceHint returns a note for a diff whose expected and actual lines
// differ only in white space (a tab printed where the transcript has
// spaces, which a diff does not show), or "" when no '-' line of diff
// matches a '+' line once runs of blanks are made one space.
func WhitespaceHint(diff []Edit) string {
	squash := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for _, m := range diff {
		if m.Op != '-' {
			continue
		}
		for _, p := range diff {
			if p.Op == '+' && MatchLine(squash(m.Text), squash(p.Text)) {
				return fmt.Sprintf("note: expected line %q and actual line %q differ only in white space (tabs or runs of spaces)", m.Text, p.Text)
			}
		}
	}
	return ""
}

// exitStatusLine returns N when l is "exit status N".
func exitStatusLine(l string) (int, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(l), "exit status ")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil
}

// ExitAccepted reports whether a command that exited with code may pass
// given its expected output. Code 0 always may. A non-zero code may only
// when an expected line reads "exit status N" (N > 0): the line "go run"
// prints when the program it ran fails (go run itself then exits with 1,
// whatever N was). Because the output must match too, a transcript of a
// failing program shows its real exit status, in the words a reader's
// terminal shows; a failure that prints no such line (a build error) can
// never pass.
func ExitAccepted(code int, expected []string) bool {
	if code == 0 {
		return true
	}
	for _, l := range expected {
		if n, ok := exitStatusLine(l); ok && n > 0 {
			return true
		}
	}
	return false
}

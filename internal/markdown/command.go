package markdown

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// This file is the grammar of a transcript's command lines: how bookgen
// splits one into words (it runs commands without a shell) and which
// packages a go run or go test line names.

// ErrShellSyntax is returned by SplitCommand for text that needs a shell
// (pipes, redirections, substitutions, globbing, variables, several
// commands): bookgen runs commands without one.
var ErrShellSyntax = errors.New("shell syntax is not supported")

// SplitCommand splits a command line into words the way a POSIX shell
// would for simple words: blanks separate words, '...' quotes literally,
// "..." quotes with \" \\ \$ \` escapes, and a backslash outside quotes
// escapes the next character. Unquoted | & ; < > ( ) $ ` * ? [ ~ and a
// leading NAME=value are refused with ErrShellSyntax, because no shell
// interprets them.
func SplitCommand(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("trailing backslash in %q", s)
			}
			i++
			w.WriteByte(s[i])
			inWord = true
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				switch {
				case s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0:
					i++
					w.WriteByte(s[i])
				case s[i] == '$' || s[i] == '`':
					return nil, fmt.Errorf("%w: %q substitutes inside \"...\" in %q", ErrShellSyntax, s[i], s)
				default:
					w.WriteByte(s[i])
				}
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
			inWord = true
		case strings.IndexByte("|&;<>()$`*?[~#", c) >= 0:
			if c == '#' && inWord {
				w.WriteByte(c)
				continue
			}
			if c == '~' && inWord {
				w.WriteByte(c)
				continue
			}
			return nil, fmt.Errorf("%w: unquoted %q in %q", ErrShellSyntax, c, s)
		case c == '=' && len(words) == 0 && inWord && isName(w.String()):
			return nil, fmt.Errorf("%w: environment assignment %s= in %q", ErrShellSyntax, w.String(), s)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range s {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// valueFlags are go build and go test flags that take a separate value.
var valueFlags = map[string]bool{
	"C": true, "o": true, "p": true, "tags": true, "ldflags": true, "gcflags": true, "asmflags": true,
	"mod": true, "modfile": true, "overlay": true, "pgo": true, "buildmode": true, "compiler": true,
	"installsuffix": true, "pkgdir": true, "toolexec": true, "exec": true, "coverpkg": true, "covermode": true,
	"run": true, "skip": true, "bench": true, "benchtime": true, "count": true, "cpu": true, "parallel": true,
	"timeout": true, "list": true, "shuffle": true, "coverprofile": true, "cpuprofile": true, "memprofile": true,
	"blockprofile": true, "mutexprofile": true, "outputdir": true, "trace": true, "fuzz": true, "fuzztime": true,
	"fuzzminimizetime": true, "vet": true, "memprofilerate": true, "blockprofilerate": true, "mutexprofilefraction": true,
}

// PackageArgs returns the packages (or .go files) a "go run" or "go test"
// command builds: for run, the first argument that is not a flag (or the
// run of .go files starting there); for test, every argument before -args
// that is not a flag or a flag's value, "." when there is none.
func PackageArgs(words []string) []string {
	var out []string
	args := words[2:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-args" || a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") {
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && valueFlags[name] {
				i++
			}
			continue
		}
		if words[1] == "run" {
			if strings.HasSuffix(a, ".go") {
				for ; i < len(args) && strings.HasSuffix(args[i], ".go"); i++ {
					out = append(out, args[i])
				}
				return out
			}
			return []string{a}
		}
		out = append(out, a)
	}
	if len(out) == 0 && words[1] == "test" {
		out = []string{"."}
	}
	return out
}

// RunArgs splits a transcript command ("go run ./examples/x -d2 a") into
// the package it runs and the arguments the program gets (["-d2", "a"]);
// ok is false for any other command.
func RunArgs(text string) (pkg string, args []string, ok bool) {
	w, err := SplitCommand(text)
	if err != nil || len(w) < 3 || w[0] != "go" || w[1] != "run" {
		return "", nil, false
	}
	pk := PackageArgs(w)
	if len(pk) != 1 || strings.HasSuffix(pk[0], ".go") {
		return "", nil, false
	}
	for i := 2; i < len(w); i++ {
		if w[i] == pk[0] {
			return "./" + path.Clean(pk[0]), append([]string{}, w[i+1:]...), true
		}
	}
	return "", nil, false
}

package render

import (
	"go/scanner"
	"go/token"
	"regexp"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// goLexer highlights Go with the standard library's go/scanner instead of
// chroma's regular-expression lexer for Go, which costs about half of a
// large book's build (it tries some thirty backtracking expressions at
// every token). The tokens it returns are the ones chroma's Go lexer
// (lexers/go.go of chroma v2) returns for the same text, so the HTML is
// byte for byte the same: go/scanner finds each token's extent and kind,
// and the class is chosen by chroma's rules in chroma's order (keywords by
// their group, true/false/iota/nil, a builtin directly before "(", a type
// name, a name before "(" as a function, "//x" without a space as a
// preprocessor comment). Where the two could differ, the whole block is
// lexed by chroma instead:
//
//   - go/scanner reports an error (a snippet that is not Go, "\r", an
//     unterminated string or comment, a character that is no Go token);
//   - a name, or the character after "//", is not ASCII (chroma's \w and
//     \s are Unicode classes);
//   - a literal or operator is not exactly what chroma's expression for it
//     matches at that place (a hexadecimal float such as 0x1p-2). A number
//     that chroma splits (0o755 is "0" and the name "o755") is split the
//     same way.
//
// A raw string holding "{{" has its inside lexed by chroma's Go template
// lexer, as chroma's Go lexer does. TestGoLexerMatchesChroma compares the
// two on every Go file of the repository and of parts of GOROOT, and
// FuzzGoLexer on arbitrary text.
type goLexer struct{ chroma.Lexer }

// goChroma is chroma's Go lexer; goFast replaces it in writeCode.
var (
	goChroma = lexers.Get("go")
	goFast   = goLexer{goChroma}
)

// Tokenise implements chroma.Lexer.
func (l goLexer) Tokenise(options *chroma.TokeniseOptions, text string) (chroma.Iterator, error) {
	if options == nil || (options.State == "root" && !options.Nested) {
		if toks, ok := lexGo(text); ok {
			return chroma.Literator(toks...), nil
		}
	}
	return l.Lexer.Tokenise(options, text)
}

// The expressions of chroma's Go rules that lexGo checks a token against,
// anchored, in chroma's order where order matters.
var (
	goNumberRules = []struct {
		re  *regexp.Regexp
		typ chroma.TokenType
	}{
		{regexp.MustCompile(`^\d+i`), chroma.LiteralNumber},
		{regexp.MustCompile(`^\d+\.\d*([Ee][-+]\d+)?i`), chroma.LiteralNumber},
		{regexp.MustCompile(`^\.\d+([Ee][-+]\d+)?i`), chroma.LiteralNumber},
		{regexp.MustCompile(`^\d+[Ee][-+]\d+i`), chroma.LiteralNumber},
		{regexp.MustCompile(`^\d+(\.\d+[eE][+\-]?\d+|\.\d*|[eE][+\-]?\d+)`), chroma.LiteralNumberFloat},
		{regexp.MustCompile(`^\.\d+([eE][+\-]?\d+)?`), chroma.LiteralNumberFloat},
		{regexp.MustCompile(`^0[0-7]+`), chroma.LiteralNumberOct},
		{regexp.MustCompile(`^0[xX][0-9a-fA-F_]+`), chroma.LiteralNumberHex},
		{regexp.MustCompile(`^0b[01_]+`), chroma.LiteralNumberBin},
		{regexp.MustCompile(`^(0|[1-9][0-9_]*)`), chroma.LiteralNumberInteger},
	}
	goCharRule     = regexp.MustCompile(`^'(\\['"\\abfnrtv]|\\x[0-9a-fA-F]{2}|\\[0-7]{1,3}|\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}|[^\\])'`)
	goStringRule   = regexp.MustCompile(`^"(\\\\|\\"|[^"])*"`)
	goOperatorRule = regexp.MustCompile(`^(<<=|>>=|<<|>>|<=|>=|&\^=|&\^|\+=|-=|\*=|/=|%=|&=|\|=|&&|\|\||<-|\+\+|--|==|!=|:=|\.\.\.|[+\-*/%&])`)
	goCommentML    = regexp.MustCompile(`^/(\\\n)?[*](.|\n)*?[*](\\\n)?/`)
	goTemplate     = chroma.TypeRemappingLexer(lexers.Get("go-text-template"), chroma.TypeMapping{{From: chroma.Other, To: chroma.LiteralString}})
)

// goPunctuation is chroma's [|^<>=!()\[\]{}.,;:~].
const goPunctuation = "|^<>=!()[]{}.,;:~"

// The words of chroma's Go rules, by the class they get.
var (
	goWords = func() map[string]chroma.TokenType {
		m := map[string]chroma.TokenType{}
		for _, w := range strings.Fields("import package") {
			m[w] = chroma.KeywordNamespace
		}
		for _, w := range strings.Fields("var func struct map chan type interface const") {
			m[w] = chroma.KeywordDeclaration
		}
		for _, w := range strings.Fields("break default select case defer go else goto switch fallthrough if range continue for return") {
			m[w] = chroma.Keyword
		}
		for _, w := range strings.Fields("true false iota nil") {
			m[w] = chroma.KeywordConstant
		}
		return m
	}()
	goBuiltinCall = set("uint uint8 uint16 uint32 uint64 int int8 int16 int32 int64 float float32 float64 complex64 complex128 byte rune string bool error uintptr print println panic recover close complex real imag len cap append copy delete new make clear min max")
	goTypes       = set("uint uint8 uint16 uint32 uint64 int int8 int16 int32 int64 float float32 float64 complex64 complex128 byte rune string bool error uintptr any")
)

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// goTok is one token of go/scanner: its byte extent in the text and kind.
type goTok struct {
	start, end int
	tok        token.Token
}

// lexGo returns chroma's Go tokens for text, or false where it cannot be
// sure they are chroma's (see goLexer).
func lexGo(text string) ([]chroma.Token, bool) {
	if strings.IndexByte(text, '\r') >= 0 {
		return nil, false
	}
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(text))
	var s scanner.Scanner
	bad := false
	s.Init(file, []byte(text), func(token.Position, string) { bad = true }, scanner.ScanComments)
	var toks []goTok
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.SEMICOLON && lit != ";" {
			continue // inserted at a newline or the end: no text
		}
		start := file.Offset(pos)
		end := start + len(lit)
		if lit == "" {
			end = start + len(tok.String())
		}
		toks = append(toks, goTok{start, end, tok})
	}
	if bad {
		return nil, false
	}
	out := make([]chroma.Token, 0, 2*len(toks)+1)
	emit := func(t chroma.TokenType, v string) {
		if v != "" {
			out = append(out, chroma.Token{Type: t, Value: v})
		}
	}
	at := 0
	for i, t := range toks {
		if t.start < at {
			return nil, false
		}
		if gap := text[at:t.start]; gap != "" {
			if strings.Trim(gap, " \t\n") != "" {
				return nil, false
			}
			emit(chroma.TextWhitespace, gap)
		}
		v := text[t.start:t.end]
		rest := text[t.start:]
		switch {
		case t.tok == token.COMMENT:
			if strings.HasPrefix(v, "//") {
				typ := chroma.CommentSingle
				if len(v) > 2 {
					c := v[2]
					if c >= 0x80 {
						return nil, false
					}
					if !strings.ContainsRune(" \t\n\r\f\v", rune(c)) {
						typ = chroma.CommentPreproc
					}
				}
				emit(typ, v)
			} else {
				if len(goCommentML.FindString(rest)) != len(v) {
					return nil, false
				}
				emit(chroma.CommentMultiline, v)
			}
		case t.tok == token.IDENT || t.tok.IsKeyword():
			for j := 0; j < len(v); j++ {
				if v[j] >= 0x80 {
					return nil, false
				}
			}
			next := nextTok(toks, i)
			call := next != nil && next.tok == token.LPAREN
			switch typ, ok := goWords[v]; {
			case ok:
				emit(typ, v)
			case call && next.start == t.end && goBuiltinCall[v]:
				emit(chroma.NameBuiltin, v)
			case goTypes[v]:
				emit(chroma.KeywordType, v)
			case call:
				emit(chroma.NameFunction, v)
			default:
				emit(chroma.NameOther, v)
			}
		case t.tok == token.INT || t.tok == token.FLOAT || t.tok == token.IMAG:
			if !lexNumber(emit, text, t.start, t.end, nextTok(toks, i)) {
				return nil, false
			}
		case t.tok == token.CHAR:
			if len(goCharRule.FindString(rest)) != len(v) {
				return nil, false
			}
			emit(chroma.LiteralStringChar, v)
		case t.tok == token.STRING && v[0] == '`':
			emit(chroma.LiteralString, "`")
			inner := v[1 : len(v)-1]
			if strings.Contains(inner, "{{") {
				it, err := goTemplate.Tokenise(&chroma.TokeniseOptions{State: "root", Nested: true}, inner)
				if err != nil {
					return nil, false
				}
				for tk := it(); tk != chroma.EOF; tk = it() {
					emit(tk.Type, tk.Value)
				}
			} else {
				emitRawString(emit, inner)
			}
			emit(chroma.LiteralString, "`")
		case t.tok == token.STRING:
			if len(goStringRule.FindString(rest)) != len(v) {
				return nil, false
			}
			emit(chroma.LiteralString, v)
		default: // operators and punctuation
			for p := t.start; p < t.end; {
				if m := goOperatorRule.FindString(text[p:]); m != "" {
					emit(chroma.Operator, m)
					p += len(m)
				} else if strings.IndexByte(goPunctuation, text[p]) >= 0 {
					emit(chroma.Punctuation, text[p:p+1])
					p++
				} else {
					return nil, false
				}
				if p > t.end {
					return nil, false // chroma's operator runs into the next token
				}
			}
		}
		at = t.end
	}
	if gap := text[at:]; gap != "" {
		if strings.Trim(gap, " \t\n") != "" {
			return nil, false
		}
		emit(chroma.TextWhitespace, gap)
	}
	return out, true
}

// lexNumber emits the number literal text[start:end] as chroma's rules
// split it: a literal such as 0o755 or 1_000.5 that chroma's number
// expressions match only in part is chroma's number for the part, then a
// name (o755) or another number (.5), tried in chroma's order. It reports
// false when chroma could read further than the literal or class a piece
// otherwise (a keyword, a type, a function name before "(").
func lexNumber(emit func(chroma.TokenType, string), text string, start, end int, next *goTok) bool {
	for p := start; p < end; {
		rest := text[p:]
		matched := false
		for _, r := range goNumberRules {
			if m := r.re.FindString(rest); m != "" {
				emit(r.typ, m)
				p += len(m)
				matched = true
				break
			}
		}
		if !matched {
			n := 0
			for n < len(rest) && (rest[n] == '_' || rest[n] >= 'a' && rest[n] <= 'z' || rest[n] >= 'A' && rest[n] <= 'Z' || n > 0 && rest[n] >= '0' && rest[n] <= '9') {
				n++
			}
			w := rest[:n]
			_, word := goWords[w]
			if n == 0 || word || goTypes[w] || goBuiltinCall[w] || p+n == end && next != nil && next.tok == token.LPAREN {
				return false
			}
			emit(chroma.NameOther, w)
			p += n
		}
		if p > end {
			return false
		}
	}
	return true
}

// emitRawString emits a raw string's inside as chroma's Go template lexer
// does when it holds no "{{": runs of text and single "{", as strings.
func emitRawString(emit func(chroma.TokenType, string), s string) {
	for s != "" {
		n := strings.IndexByte(s, '{')
		switch n {
		case -1:
			n = len(s)
		case 0:
			n = 1
		}
		emit(chroma.LiteralString, s[:n])
		s = s[n:]
	}
}

// nextTok returns the token after toks[i], nil at the end.
func nextTok(toks []goTok, i int) *goTok {
	if i+1 < len(toks) {
		return &toks[i+1]
	}
	return nil
}

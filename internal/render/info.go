package render

import "github.com/ownership-book/ownership/internal/markdown"

// parseInfo reads a fenced block's info string with markdown.ParseInfo (the
// same reading the verifier uses) and keeps what changes the page: ignore
// (a visible note), linenos, hl_lines ("2-4,7" or "2-4 7" when quoted) and
// the lines to hide (rust blocks, hidelines=PREFIX).
// No attribute reaches the page itself.
func parseInfo(info string) codeInfo {
	lang, attrs := markdown.ParseInfo(info)
	ci := codeInfo{Lang: lang}
	// "ignore" is bookgen's on go and console blocks; on a rust block it
	// is rustdoc's (mdBook's "do not test"), and bookgen checks no rust.
	if lang == "go" || lang == "console" {
		_, ci.Ignore = attrs["ignore"]
	}
	if lang == "rust" {
		ci.HideRust = true
	} else if p := attrs["hidelines"]; p != "" {
		ci.HidePrefix = p
	}
	_, ci.LineNos = attrs["linenos"]
	if v, ok := attrs["hl_lines"]; ok {
		ci.HLLines = parseHLLines(v)
	}
	return ci
}

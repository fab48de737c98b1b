package render

import "github.com/ownership-book/ownership/internal/verify"

// parseInfo reads a fenced block's info string with verify.ParseInfo (the
// same reading the verifier uses) and keeps what changes the page: ignore
// (a visible note), linenos and hl_lines ("2-4,7" or "2-4 7" when quoted).
// No attribute reaches the page itself.
func parseInfo(info string) codeInfo {
	lang, attrs := verify.ParseInfo(info)
	ci := codeInfo{Lang: lang}
	_, ci.Ignore = attrs["ignore"]
	_, ci.LineNos = attrs["linenos"]
	if v, ok := attrs["hl_lines"]; ok {
		ci.HLLines = parseHLLines(v)
	}
	return ci
}

package render

import "strings"

// parseInfo reads a fenced block's info string: a language followed by
// attributes separated by spaces or commas ("go ignore", "go,ignore",
// "console timeout=2s", "go hl_lines=3-5 linenos"). Attributes never reach
// the page; only ignore, linenos and hl_lines change how the block looks.
func parseInfo(info string) codeInfo {
	fields := strings.FieldsFunc(info, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' })
	var ci codeInfo
	if len(fields) == 0 {
		return ci
	}
	ci.Lang = strings.ToLower(fields[0])
	for i := 1; i < len(fields); i++ {
		key, val, _ := strings.Cut(fields[i], "=")
		val = strings.Trim(val, `"'`)
		switch key {
		case "ignore":
			ci.Ignore = true
		case "linenos":
			ci.LineNos = true
		case "hl_lines":
			// "hl_lines=1 3-5" may have been split at the space.
			for i+1 < len(fields) && !strings.Contains(fields[i+1], "=") && isRange(fields[i+1]) {
				i++
				val += " " + strings.Trim(fields[i], `"'`)
			}
			ci.HLLines = parseHLLines(val)
		}
	}
	return ci
}

func isRange(s string) bool {
	s = strings.Trim(s, `"'`)
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

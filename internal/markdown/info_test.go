package markdown

import (
	"reflect"
	"testing"
)

func TestParseInfo(t *testing.T) {
	tests := []struct {
		info  string
		lang  string
		attrs map[string]string
	}{
		{"", "", map[string]string{}},
		{"go", "go", map[string]string{}},
		{"Go ignore", "go", map[string]string{"ignore": ""}},
		{"go,ignore", "go", map[string]string{"ignore": ""}},
		{"console timeout=120s", "console", map[string]string{"timeout": "120s"}},
		{"  go   hl_lines=\"1 3-5\"  linenos ", "go", map[string]string{"hl_lines": "1 3-5", "linenos": ""}},
		{"go hl_lines='2,4'", "go", map[string]string{"hl_lines": "2,4"}},
		{"go\tx=1 x=2", "go", map[string]string{"x": "2"}},
		{"go =v", "go", map[string]string{}},
	}
	for _, tt := range tests {
		lang, attrs := ParseInfo(tt.info)
		if lang != tt.lang || !reflect.DeepEqual(attrs, tt.attrs) {
			t.Errorf("ParseInfo(%q) = %q, %v; want %q, %v", tt.info, lang, attrs, tt.lang, tt.attrs)
		}
	}
}

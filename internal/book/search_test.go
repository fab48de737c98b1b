package book

import "testing"

// TestSearchEnabled is mdBook's chapter_settings_priority
// (crates/mdbook-html/src/html_handlebars/search.rs): the keys sorted as
// paths, each that is the chapter or a folder above it setting enable in
// turn.
func TestSearchEnabled(t *testing.T) {
	c, err := ParseConfig([]byte(`[output.html.search.chapter]
"cli/watch.md" = { enable = true }
"cli" = { enable = false }
"cli/inner/foo.md" = { enable = false }
"cli/inner" = { enable = true }
"foo" = {}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"foo.md", true},
		{"cli/watch.md", true},
		{"cli/index.md", false},
		{"cli/README.md", false},
		{"cli/inner/index.md", true},
		{"cli/inner/foo.md", false},
		{"client.md", true}, // whole components only
	} {
		if got := c.SearchEnabled(tc.path); got != tc.want {
			t.Errorf("SearchEnabled(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

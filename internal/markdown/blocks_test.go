package markdown

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestFindBlocks(t *testing.T) {
	md := strings.Join([]string{
		"# Title",                // 1
		"",                       // 2
		"```go",                  // 3
		"package p",              // 4
		"```",                    // 5
		"",                       // 6
		"~~~~console timeout=5s", // 7
		"$ go run ./x",           // 8
		"```",                    // 9  (not a closing fence: ~~~~ opened)
		"~~~~",                   // 10
		"",                       // 11
		"- item",                 // 12
		"",                       // 13
		"  ````go ignore",        // 14
		"  x := 1",               // 15
		"  ````",                 // 16
		"",                       // 17
		"> ```Console",           // 18
		"> $ go test ./y",        // 19
		"> ```",                  // 20
		"",                       // 21
		"    ```go",              // 22 indented code block, not a fence
		"    not a fence",        // 23
		"",                       // 24
		"```",                    // 25 no info string
		"plain",                  // 26
		"```",                    // 27
		"",                       // 28
		"```go hl_lines=\"1 2\"", // 29 unclosed: runs to the end
		"a",                      // 30
	}, "\n")
	got := FindBlocks([]byte(md))
	var summary []string
	for _, b := range got {
		summary = append(summary, fmt.Sprintf("%s %v @%d %q %v %q", b.Lang, b.Attrs, b.Line, b.Lines, b.LineNos, b.Prefixes))
	}
	want := []string{
		`go map[] @3 ["package p"] [4] [""]`,
		"console map[timeout:5s] @7 [\"$ go run ./x\" \"```\"] [8 9] [\"\" \"\"]",
		`go map[ignore:] @14 ["x := 1"] [15] ["  "]`,
		`console map[] @18 ["$ go test ./y"] [19] ["> "]`,
		` map[] @25 ["plain"] [26] [""]`,
		`go map[hl_lines:1 2] @29 ["a"] [30] [""]`,
	}
	if !reflect.DeepEqual(summary, want) {
		t.Errorf("FindBlocks:\n%s\nwant:\n%s", strings.Join(summary, "\n"), strings.Join(want, "\n"))
	}
}

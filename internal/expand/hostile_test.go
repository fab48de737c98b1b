package expand

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/diag"
)

// fanOut returns files f0.md ... f<levels-1>.md under book/, each of which
// but the last includes the next one `width` times: f0.md expands to
// width^(levels-1) copies of the last file.
func fanOut(levels, width int) map[string]string {
	files := map[string]string{}
	for i := 0; i < levels; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "level %d\n", i)
		for j := 0; j < width && i < levels-1; j++ {
			fmt.Fprintf(&b, "{{#include f%d.md}}\n", i+1)
		}
		files[fmt.Sprintf("book/f%d.md", i)] = b.String()
	}
	return files
}

// TestIncludeFanOutIsBounded checks that includes of Markdown files that
// each include the next ten times (8 files, 8 levels: 10^7 includes) stop
// at MaxIncludes with an error naming the chain of includes, instead of
// growing without bound.
func TestIncludeFanOutIsBounded(t *testing.T) {
	b, ch := bookWith(t, "# Ch\n{{#include f0.md}}\n", fanOut(8, 10))
	_, err := Expand(b, ch)
	errs := diag.All(err)
	if len(errs) != 1 {
		t.Fatalf("got %d errors, want 1: %v", len(errs), err)
	}
	e := errs[0]
	if !strings.Contains(e.Msg, fmt.Sprintf("more than %d includes in one chapter", MaxIncludes)) {
		t.Errorf("err = %v, want the include limit", e)
	}
	if !strings.HasPrefix(e.File, "book/f") || !strings.Contains(e.Detail, "included from book/f0.md:2") || !strings.HasSuffix(e.Detail, "included from book/ch.md:2") {
		t.Errorf("err = %v, want it at an included file with the chain down from book/ch.md:2", e)
	}
}

// TestIncludeSizeIsBounded checks that a chapter whose includes add up to
// more than MaxExpandedBytes is refused, naming the include that crossed
// the limit.
func TestIncludeSizeIsBounded(t *testing.T) {
	big := strings.Repeat(strings.Repeat("x", 1023)+"\n", 1024) // 1 MiB
	var ch strings.Builder
	for i := 0; i < MaxExpandedBytes>>20+1; i++ {
		ch.WriteString("{{#include big.txt}}\n")
	}
	b, it := bookWith(t, ch.String(), map[string]string{"book/big.txt": big})
	_, err := Expand(b, it)
	want := fmt.Sprintf("book/ch.md:%d: the chapter's includes add up to more than %d MiB", MaxExpandedBytes>>20+1, MaxExpandedBytes>>20)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

// TestExpandHonoursContext checks that expansion stops with the context's
// error once it is done.
func TestExpandHonoursContext(t *testing.T) {
	b, ch := bookWith(t, "# Ch\n{{#include f0.md}}\n", fanOut(3, 2))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ExpandContext(ctx, b, ch); !errors.Is(err, context.Canceled) {
		t.Errorf("ExpandContext = %v, want context.Canceled", err)
	}
	if _, err := AllContext(ctx, b); !errors.Is(err, context.Canceled) {
		t.Errorf("AllContext = %v, want context.Canceled", err)
	}
}

// TestUnclosedFenceInIncludedMarkdown checks that an included Markdown
// file that opens a code fence and never closes it is an error at the
// fence's line in that file (with the include in the detail), while
// closed fences of every form are accepted.
func TestUnclosedFenceInIncludedMarkdown(t *testing.T) {
	files := map[string]string{
		"book/open.md":       "# Part\n\ntext\n```go\nx := 1\n",
		"book/open-tilde.md": "~~~~\ncode\n~~~\n",
		"book/open-empty.md": "text\n\n```\n",
		"book/closed.md":     "```go\nx\n```\n\n~~~~\n```\n~~~~~\n\n> ```\n> quoted\n\nafter\n\n```\n```\n",
		"book/indented.md":   "para\n\n    ```\n    not a fence\n",
	}
	for _, tc := range []struct{ file, want string }{
		{"open.md", "book/open.md:4: code fence opened here is not closed in book/open.md"},
		{"open-tilde.md", "book/open-tilde.md:1: code fence opened here is not closed"},
		{"open-empty.md", "book/open-empty.md:3: code fence opened here is not closed"},
		{"closed.md", ""},
		{"indented.md", ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, ch := bookWith(t, "# Ch\n\n{{#include "+tc.file+"}}\n\nThe rest of the chapter.\n", files)
			d, err := Expand(b, ch)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Expand: %v", err)
				}
				if !strings.HasSuffix(string(d.Markdown), "The rest of the chapter.\n") {
					t.Errorf("Markdown = %q", d.Markdown)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "included from book/ch.md:3") {
				t.Fatalf("err = %v, want %q included from book/ch.md:3", err, tc.want)
			}
		})
	}
}

// TestHugeIncludeRefusedBeforeReading checks that an included file larger
// than MaxExpandedBytes (a sparse 1 GiB file) is refused from its size,
// without being read: the error names the file, its size and the limit,
// does not suggest that files include each other, and the expansion
// allocates a small part of the file's size.
func TestHugeIncludeRefusedBeforeReading(t *testing.T) {
	b, ch := bookWith(t, "# Ch\n\n{{#include big.txt}}\n", map[string]string{"book/big.txt": "x"})
	if err := os.Truncate(filepath.Join(b.Dir, "big.txt"), 1<<30); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Expand(b, ch)
	runtime.ReadMemStats(&after)
	want := fmt.Sprintf("book/ch.md:3: included file book/big.txt is 1.0 GiB, more than the %d MiB a chapter may hold with its includes", MaxExpandedBytes>>20)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if strings.Contains(err.Error(), "each other") {
		t.Errorf("err = %v suggests an include cycle for one large file", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("expansion allocated %d MiB for a refused file", alloc>>20)
	}
}

// TestIncludeCrossingTheLimitOnce checks that one include that brings a
// chapter past MaxExpandedBytes (a file just under the limit, included
// after some text of its own) is named with its size, without the hint
// about files including each other that fits repeated includes.
func TestIncludeCrossingTheLimitOnce(t *testing.T) {
	big := strings.Repeat(strings.Repeat("x", 1023)+"\n", MaxExpandedBytes>>10-1)
	b, ch := bookWith(t, "# Ch\n\n{{#include a.txt}}\n{{#include big.txt}}\n", map[string]string{"book/big.txt": big, "book/a.txt": strings.Repeat("y\n", 2048)})
	_, err := Expand(b, ch)
	if err == nil || !strings.Contains(err.Error(), "book/ch.md:4: the chapter's includes add up to more than 16 MiB with book/big.txt (16.0 MiB)") || strings.Contains(err.Error(), "each other") {
		t.Fatalf("err = %v", err)
	}
}

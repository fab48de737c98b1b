package book

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownership-book/ownership/internal/diag"
	"github.com/ownership-book/ownership/internal/markdown"
)

// writeTree creates files (slash paths relative to dir) with their contents.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const goodTOML = `[book]
title = "Ownership"
authors = ["A", "B"]
description = "d"

[output.html]
site-url = "https://example.org/book"
git-repository-url = "https://github.com/o/r"
edit-url-template = "https://github.com/o/r/edit/main/{path}"

[bookgen]
timeout = "2m"
`

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"book/book.toml":   goodTOML,
		"book/SUMMARY.md":  "# Summary\n[Intro](intro.md)\n# Part\n- [One](one.md)\n    - [Sub](sub/two.md)\n- [Later]()\n[End](end.md)\n",
		"book/intro.md":    "# Intro\n",
		"book/one.md":      "# One\n",
		"book/sub/two.md":  "# Two\n",
		"book/end.md":      "# End\n",
		"book/unlisted.md": "not read",
	})
	before := snapshot(t, dir)
	b, err := Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("Load changed the tree:\n%s\nwant:\n%s", after, before)
	}
	c := b.Config
	if c.Title != "Ownership" || strings.Join(c.Authors, ",") != "A,B" || c.Language != "en" ||
		c.SiteURL != "https://example.org/book/" || c.Repository != "https://github.com/o/r" ||
		c.Timeout != "2m" || !strings.Contains(c.EditURLTemplate, "{path}") {
		t.Errorf("Config = %+v", c)
	}
	if b.Title != "Summary" || b.Root != dir || b.Dir != filepath.Join(dir, "book") {
		t.Errorf("Title %q Root %q Dir %q", b.Title, b.Root, b.Dir)
	}
	var files []string
	for _, ch := range b.Chapters {
		files = append(files, ch.File())
		if string(ch.Source) == "" {
			t.Errorf("%s: empty Source", ch.File())
		}
	}
	if got, want := strings.Join(files, " "), "book/intro.md book/one.md book/sub/two.md book/end.md"; got != want {
		t.Errorf("Chapters = %s, want %s", got, want)
	}
	if string(b.Chapters[2].Source) != "# Two\n" {
		t.Errorf("sub/two.md Source = %q", b.Chapters[2].Source)
	}
}

func snapshot(t *testing.T, dir string) string {
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(p + " " + fi.ModTime().String() + "\n")
		return nil
	})
	return b.String()
}

// TestLoadDropsBOM checks that a byte order mark (which some editors
// write) does not turn SUMMARY.md's title or a chapter's first heading
// into text.
func TestLoadDropsBOM(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"book/SUMMARY.md": "\ufeff# Summary\n- [A](a.md)\n",
		"book/a.md":       "\ufeff# A\n",
	})
	b, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b.Title != "Summary" || len(b.Chapters) != 1 || string(b.Chapters[0].Source) != "# A\n" {
		t.Errorf("Title %q, chapters %d, Source %q; want Summary, 1, \"# A\\n\"", b.Title, len(b.Chapters), b.Chapters[0].Source)
	}
}

func TestLoadDefaultsWithoutTOML(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"book/SUMMARY.md": "- [A](a.md)\n", "book/a.md": "x"})
	b, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b.Config.Language != "en" || b.Config.Timeout != DefaultTimeout {
		t.Errorf("Config = %+v", b.Config)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string // each error's "file:line: msg" prefix or substring
	}{
		{
			name:  "missing chapter files are all reported",
			files: map[string]string{"book/SUMMARY.md": "- [A](a.md)\n- [B](x.md)\n- [C](y/z.md)\n", "book/a.md": "a"},
			want:  []string{"book/SUMMARY.md:2: chapter file book/x.md does not exist", "book/SUMMARY.md:3: chapter file book/y/z.md does not exist"},
		},
		{
			name:  "invalid UTF-8",
			files: map[string]string{"book/SUMMARY.md": "- [A](a.md)\n", "book/a.md": "ok\nstill ok\nbad \xff here\n"},
			want:  []string{"book/a.md:3: invalid UTF-8 (byte 5 of the line)"},
		},
		{
			name:  "summary missing",
			files: map[string]string{"book/book.toml": ""},
			want:  []string{"book/SUMMARY.md: does not exist"},
		},
		{
			name:  "summary malformed",
			files: map[string]string{"book/SUMMARY.md": "- [A](a.md)\n- [A2](a.md)\n", "book/a.md": ""},
			want:  []string{"book/SUMMARY.md:2: chapter file book/a.md is already listed at line 1"},
		},
		{
			name:  "src leaves the repository",
			files: map[string]string{"book/book.toml": "[book]\ntitle = \"X\"\nsrc = \"../..\"\n"},
			want:  []string{"book/book.toml:3: src \"../..\" leaves the repository root"},
		},
		{
			name:  "src is absolute",
			files: map[string]string{"book.toml": "[book]\nsrc = \"/etc\"\n"},
			want:  []string{"book.toml:2: src \"/etc\" is an absolute path"},
		},
		{
			name:  "src names no folder",
			files: map[string]string{"book.toml": "[book]\n\nsrc = \"docs\"\n"},
			want:  []string{"book.toml:3: the book's source folder docs/ does not exist"},
		},
		{
			name:  "mdBook layout without src/",
			files: map[string]string{"book.toml": "[book]\n", "SUMMARY.md": "- [A](a.md)\n"},
			want:  []string{"book.toml: the book's source folder src/ does not exist"},
		},
		{
			name:  "bookgen layout with mdBook's src/ inside book/",
			files: map[string]string{"book/book.toml": "[book]\n", "book/src/SUMMARY.md": "- [A](a.md)\n"},
			want:  []string{"book/SUMMARY.md: does not exist, but book/src/SUMMARY.md does: set src = \"src\""},
		},
		{
			name:  "mdBook layout errors name src/",
			files: map[string]string{"book.toml": "", "src/SUMMARY.md": "- [A](a.md)\n- [B](../b.md)\n"},
			want:  []string{"src/SUMMARY.md:2: link target \"../b.md\" escapes src/"},
		},
		{
			name:  "chapter is a directory",
			files: map[string]string{"book/SUMMARY.md": "- [A](d.md)\n", "book/d.md/x": ""},
			want:  []string{"book/SUMMARY.md:1: chapter file book/d.md is not a regular file"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tt.files)
			b, err := Load(dir)
			if err == nil {
				t.Fatalf("Load succeeded: %+v", b)
			}
			errs := diag.All(err)
			if len(errs) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(tt.want), err)
			}
			for i, e := range errs {
				if !strings.Contains(e.Error(), tt.want[i]) {
					t.Errorf("error %d = %q, want it to contain %q", i, e.Error(), tt.want[i])
				}
			}
		})
	}
}

// TestLoadLayouts loads a book in each layout: bookgen's (book/, with or
// without [book] src) and mdBook's (book.toml at the root, chapters in
// src/ or [book] src, beside mdBook's output folder book/).
func TestLoadLayouts(t *testing.T) {
	tests := []struct {
		name             string
		files            map[string]string
		layout           Layout
		src, conf, first string // Book.Src, Book.ConfigFile, Chapters[0].File()
	}{
		{"bookgen", map[string]string{"book/SUMMARY.md": "- [A](a.md)\n", "book/a.md": "a"}, BookgenLayout, "book", "book/book.toml", "book/a.md"},
		{"bookgen with src", map[string]string{"book/book.toml": "[book]\nsrc = \"src/\"\n", "book/src/SUMMARY.md": "- [A](a.md)\n", "book/src/a.md": "a"}, BookgenLayout, "book/src", "book/book.toml", "book/src/a.md"},
		{"mdBook", map[string]string{"book.toml": "[book]\ntitle = \"T\"\n", "src/SUMMARY.md": "[I](README.md)\n- [B](a/b.md)\n", "src/README.md": "i", "src/a/b.md": "b", "book/index.html": "mdBook's output"}, MdBookLayout, "src", "book.toml", "src/README.md"},
		{"mdBook with src", map[string]string{"book.toml": "[book]\nsrc = \"docs\"\n", "docs/SUMMARY.md": "- [A](a.md)\n", "docs/a.md": "a"}, MdBookLayout, "docs", "book.toml", "docs/a.md"},
		{"mdBook at the root", map[string]string{"book.toml": "[book]\nsrc = \".\"\n", "SUMMARY.md": "- [A](a.md)\n", "a.md": "a"}, MdBookLayout, ".", "book.toml", "a.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tt.files)
			b, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if b.Layout != tt.layout || b.Src != tt.src || b.ConfigFile != tt.conf || b.SummaryFile != path.Join(tt.src, "SUMMARY.md") {
				t.Errorf("layout %v, Src %q, ConfigFile %q, SummaryFile %q; want %v, %q, %q", b.Layout, b.Src, b.ConfigFile, b.SummaryFile, tt.layout, tt.src, tt.conf)
			}
			if got := b.Chapters[0].File(); got != tt.first {
				t.Errorf("first chapter %s, want %s", got, tt.first)
			}
			if want := filepath.Join(b.Root, filepath.FromSlash(tt.src)); b.Dir != want {
				t.Errorf("Dir %s, want %s", b.Dir, want)
			}
		})
	}
}

func TestLoadRefusesSymlinkOutsideRepo(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.md": "s"})
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"book/SUMMARY.md": "- [A](a.md)\n"})
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "book", "a.md")); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir)
	var de *diag.Error
	if !errors.As(err, &de) || de.Line != 1 || !strings.Contains(de.Msg, "outside the repository") {
		t.Fatalf("err = %v, want outside-the-repository error at SUMMARY.md:1", err)
	}
}

// TestConfigSpec runs testdata/config: each case is a book.toml and either
// what ParseConfig reads from it (see configOutline) or the error it
// returns ("book/book.toml:LINE: " and a substring of the message). A
// case's env file holds environment variables, NAME=value a line, set over
// book.toml as the build sets os.Environ's.
func TestConfigSpec(t *testing.T) {
	for _, c := range specCases(t, "testdata/config") {
		t.Run(c.Name, func(t *testing.T) {
			var env []envOverride
			if e, ok := c.Files["env"]; ok {
				env = envOverrides(strings.Split(strings.TrimRight(e, "\n"), "\n"))
			}
			cfg, err := parseConfig([]byte(c.File(t, "book.toml")), ConfigFile, env)
			if want, ok := c.Files["error"]; ok {
				// One line of want per error, in order; each line is a
				// prefix of its error's "file:line: message".
				all := diag.All(err)
				wl := strings.Split(strings.TrimRight(want, "\n"), "\n")
				if len(all) != len(wl) {
					t.Fatalf("%s\nerr = %v, want %d errors:\n%s", c.Comment, err, len(wl), want)
				}
				for i, w := range wl {
					if !strings.HasPrefix(all[i].Error(), w) {
						t.Errorf("%s\nerror %d = %s\nwant %s", c.Comment, i+1, all[i].Error(), w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nParseConfig: %v", c.Comment, err)
			}
			got := strings.Split(strings.TrimRight(configOutline(cfg), "\n"), "\n")
			want := strings.Split(strings.TrimRight(c.File(t, "want"), "\n"), "\n")
			if len(got) != len(want) {
				t.Fatalf("%s\ngot:\n%s\nwant:\n%s", c.Comment, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			for i := range got {
				// A warning line matches when it starts with the expected text.
				if got[i] != want[i] && !(strings.HasPrefix(want[i], "warning ") && strings.HasPrefix(got[i], want[i])) {
					t.Errorf("%s\nline %d = %q, want %q", c.Comment, i+1, got[i], want[i])
				}
			}
		})
	}
}

// configOutline lists what differs from the default Config, one line each.
func configOutline(c *Config) string {
	var b strings.Builder
	if c.Title != "" {
		fmt.Fprintf(&b, "title: %s\n", c.Title)
	}
	if c.Description != "" {
		fmt.Fprintf(&b, "description: %s\n", c.Description)
	}
	if c.SiteURL != "" {
		fmt.Fprintf(&b, "site-url: %s\n", c.SiteURL)
	}
	if m := c.Markdown; m != (markdown.Features{}) {
		fmt.Fprintf(&b, "markdown off: smart-punctuation=%v definition-lists=%v admonitions=%v\n", m.NoSmartPunctuation, m.NoDefinitionLists, m.NoAdmonitions)
	}
	if c.SitePath != "/" {
		fmt.Fprintf(&b, "site-path: %s\n", c.SitePath)
	}
	for l, p := range c.HideLines {
		fmt.Fprintf(&b, "hidelines %s=%s\n", l, p)
	}
	if c.Src != "" {
		fmt.Fprintf(&b, "src: %s @%d\n", c.Src, c.SrcLine)
	}
	if len(c.WasmTags) > 0 {
		fmt.Fprintf(&b, "wasm-tags: %s\n", strings.Join(c.WasmTags, " "))
	}
	for _, r := range c.Redirects {
		fmt.Fprintf(&b, "redirect %s -> %s @%d\n", r.From, r.To, r.Line)
	}
	for _, sc := range c.SearchChapters {
		on := "unset"
		if sc.Enable != nil {
			on = fmt.Sprint(*sc.Enable)
		}
		fmt.Fprintf(&b, "search-chapter %s enable=%s @%d\n", sc.Path, on, sc.Line)
	}
	for _, r := range c.FragmentRedirects {
		fmt.Fprintf(&b, "redirect %s%s -> %s @%d\n", r.From, r.Fragment, r.To, r.Line)
	}
	for _, w := range c.Warnings {
		fmt.Fprintf(&b, "warning %s:%d: %s\n", w.File, w.Line, w.Msg)
	}
	return b.String()
}

package site

import (
	"bytes"
	"html/template"
	"io"
	"io/fs"
	"testing"

	"github.com/ownership-book/ownership/theme"
)

// TestExecuteSplicedEqualsExecute: splicing the content into the page the
// template wrote around a probe gives the bytes executing the template with
// the content gives, for the built-in theme and for templates that put the
// content where html/template escapes it, twice, or nowhere.
func TestExecuteSplicedEqualsExecute(t *testing.T) {
	builtin, err := fs.ReadFile(theme.FS, "page.html")
	if err != nil {
		t.Fatal(err)
	}
	content := []byte("<section id=\"a\">\n<p>Epochs &amp; fencing: \"tokens\" <code>&lt;T&gt;</code> é 🙂</p>\n<script>var x = 1 < 2;</script>\n</section>\n")
	for name, text := range map[string]string{
		"built-in":     string(builtin),
		"text":         `<main>{{.Content}}</main>`,
		"attribute":    `<div title="{{.Content}}">x</div>`,
		"script":       `<script>var c = {{.Content}};</script>`,
		"textarea":     `<textarea>{{.Content}}</textarea>`,
		"twice":        `<main>{{.Content}}</main><aside>{{.Content}}</aside>`,
		"nowhere":      `<main>{{.Title}}</main>`,
		"printf":       `<main>{{printf "%s" .Content}}</main>`,
		"url":          `<a href="{{.Content}}">x</a>`,
		"after probe?": `<main>{{.Content}}</main><p>bookgen-content-probe</p>`,
	} {
		tmpl, err := template.New("page.html").Parse(text)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d := &pageData{Title: "T", IsPrint: true}
		d.Content = template.HTML(content)
		want, err := execute(tmpl, d, "print.html")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got bytes.Buffer
		write := func(w io.Writer) error { _, err := w.Write(content); return err }
		if err := executeSpliced(&got, tmpl, &pageData{Title: "T", IsPrint: true}, write, "print.html"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: spliced page differs:\n%s\nwant:\n%s", name, got.Bytes(), want)
		}
	}
}

// TestStreamedPrintEqualsExecute: print.html written piece by piece
// (writePrint, as a build writes it to disk) is byte for byte the page the
// template gives with the whole book as its content, with and without the
// print cache of an incremental build.
func TestStreamedPrintEqualsExecute(t *testing.T) {
	b, pages := bigBook(t, 40)
	tmpl := parseTheme(t)
	a := assets{css: "assets/book.css", js: "assets/book.js", search: "assets/search.json"}
	for _, pc := range []*printCache{nil, {}} {
		d, body := printParts(b, pages, a, pc)
		var content bytes.Buffer
		if err := body(&content); err != nil {
			t.Fatal(err)
		}
		d.Content = template.HTML(content.String())
		want, err := execute(tmpl, d, "print.html")
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := writePrint(&got, tmpl, b, pages, a, pc); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("print cache %v: the streamed print page (%d bytes) differs from the executed one (%d bytes)", pc != nil, got.Len(), len(want))
		}
		if !bytes.Contains(want, []byte(`aria-label="Chapter &lt;30&gt;"`)) {
			t.Errorf("the print page lacks a chapter's title")
		}
	}
}

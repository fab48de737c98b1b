package site

import (
	"bytes"
	"html/template"
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
		got, err := executeSpliced(tmpl, &pageData{Title: "T", IsPrint: true}, content, "print.html")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: spliced page differs:\n%s\nwant:\n%s", name, got, want)
		}
	}
}

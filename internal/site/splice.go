package site

import (
	"bytes"
	"html/template"
	"io"
)

// contentProbe stands for a page's content while the template runs in
// executeSpliced. It holds the characters every escaping context of
// html/template other than element text changes ("<", "&", quotes, a
// newline, a non-ASCII letter), so that finding it unchanged, once, in
// the output shows the template wrote the content verbatim there.
const contentProbe = "bookgen-content-probe<&\"'>\n\u00e9</bookgen-content-probe>"

// executeSpliced writes to w what execute gives with d.Content set to
// what content writes, without passing the content (print.html: the whole
// book, up to 150 MB) through the template engine or holding it in memory:
// the template runs with contentProbe as the content, then w gets the page
// up to the probe, the content as content writes it, and the rest. The
// bytes are those execute gives: html/template writes template.HTML in
// element text verbatim, and in any other context (an attribute, a
// script, a comment that drops it) the probe does not come out unchanged
// exactly once, and the page is then executed with the content itself.
func executeSpliced(w io.Writer, tmpl *template.Template, d *pageData, content func(io.Writer) error, sitePath string) error {
	d.Content = contentProbe
	page, err := execute(tmpl, d, sitePath)
	if err != nil {
		return err
	}
	probe := []byte(contentProbe)
	if i := bytes.Index(page, probe); i >= 0 && bytes.Count(page[i+len(probe):], probe) == 0 {
		if _, err := w.Write(page[:i]); err != nil {
			return err
		}
		if err := content(w); err != nil {
			return err
		}
		_, err := w.Write(page[i+len(probe):])
		return err
	}
	var whole bytes.Buffer
	if err := content(&whole); err != nil {
		return err
	}
	d.Content = template.HTML(whole.String())
	if page, err = execute(tmpl, d, sitePath); err != nil {
		return err
	}
	_, err = w.Write(page)
	return err
}

package site

import (
	"bytes"
	"html/template"
)

// contentProbe stands for a page's content while the template runs in
// executeSpliced. It holds the characters every escaping context of
// html/template other than element text changes ("<", "&", quotes, a
// newline, a non-ASCII letter), so that finding it unchanged, once, in
// the output shows the template wrote the content verbatim there.
const contentProbe = "bookgen-content-probe<&\"'>\n\u00e9</bookgen-content-probe>"

// executeSpliced is execute with d.Content = content, without passing the
// content (print.html: the whole book, megabytes) through the template
// engine: the template runs with contentProbe as the content and the
// content is put where the probe came out. The result is the same bytes
// execute gives: html/template writes template.HTML in element text
// verbatim, and in any other context (an attribute, a script, a comment
// that drops it) the probe does not come out unchanged exactly once, and
// the page is then executed with the content itself.
func executeSpliced(tmpl *template.Template, d *pageData, content []byte, sitePath string) ([]byte, error) {
	d.Content = contentProbe
	out, err := execute(tmpl, d, sitePath)
	if err != nil {
		return nil, err
	}
	probe := []byte(contentProbe)
	if i := bytes.Index(out, probe); i >= 0 && bytes.Count(out[i+len(probe):], probe) == 0 {
		page := make([]byte, 0, len(out)-len(probe)+len(content))
		page = append(page, out[:i]...)
		page = append(page, content...)
		return append(page, out[i+len(probe):]...), nil
	}
	d.Content = template.HTML(content)
	return execute(tmpl, d, sitePath)
}

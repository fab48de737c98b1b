// Package theme holds bookgen's default theme: the page template
// (page.html, Go html/template), the stylesheet (book.css), the script
// (book.js) and files copied verbatim to the site root (static/).
//
// The site stage reads the theme from the repository's theme/ folder when
// it exists, so that `bookgen serve` picks up edits without a rebuild of
// bookgen, and falls back to this embedded copy (for books without one).
package theme

import "embed"

// FS is the embedded theme: page.html, book.css, book.js and static/.
//
//go:embed page.html book.css book.js static
var FS embed.FS

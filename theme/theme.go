// Package theme holds bookgen's default theme: the page template
// (page.html, Go html/template), the stylesheet (book.css), the script
// (book.js), the script run before the first paint (theme.js), the run
// panels' script (run.js, page and Web Worker in one file), vendored
// libraries copied to assets/vendor/ (vendor/, each in a folder named after
// its version, with its licence) and files copied verbatim to the site root
// (static/).
//
// The site stage reads the theme from the repository's theme/ folder when
// it exists, so that `bookgen serve` picks up edits without a rebuild of
// bookgen, and falls back to this embedded copy (for books without one).
package theme

import "embed"

// FS is the embedded theme: page.html, book.css, book.js, theme.js, run.js,
// vendor/ and static/.
//
//go:embed page.html book.css book.js theme.js run.js vendor static
var FS embed.FS

package site

import (
	"fmt"
	"os"

	"github.com/ownership-book/ownership/internal/render"
)

// writeRunFiles copies the files the pages' run panels load (each
// program's WebAssembly binary and the wasm_exec.js of the toolchain that
// built it, render.Page.Files) into the site, each once. Their names hold
// a hash of their content, so assets/* may be cached forever.
func writeRunFiles(out siteFiles, pages []*render.Page) error {
	for _, pg := range pages {
		for _, f := range pg.Files {
			if out.has(f.Name) {
				continue
			}
			if w, ok := out.(*inPlace); ok && w.keepHashed(f.Name) {
				continue
			}
			data, err := os.ReadFile(f.Source)
			if err != nil {
				return fmt.Errorf("%s: %v (a program built for the run panels; run bookgen build again)", f.Name, err)
			}
			if err := out.add(f.Name, data); err != nil {
				return err
			}
		}
	}
	return nil
}

// keepHashed counts the file name as written, without reading it, when
// the previous build of an incremental site has it: its name holds the
// hash of its content, so it is the same file. A program's binary weighs
// megabytes; bookgen serve's rebuild after a prose edit reads none.
func (w *inPlace) keepHashed(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.inc.sums[name]; !ok || w.names[name] {
		return false
	}
	w.names[name] = true
	return true
}

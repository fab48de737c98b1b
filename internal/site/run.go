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

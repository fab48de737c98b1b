package book

import "strings"

// Scratch reports whether name, a file's base name, is an editor's or a
// tool's temporary or backup file, which is never part of the book: the
// site stage does not copy it and bookgen serve does not rebuild when it
// changes. This is the one list both use.
//
//   - Emacs: backups "name~", auto-save files "#name#", lock files ".#name"
//   - Vim: swap files ".name.swp" (".swo", ".swn" when one exists already),
//     ".name.swx", and "4913", the file Vim creates to test whether a
//     folder is writable
//   - backups ending in ".bck" or ".bak" (many editors' "keep a backup"
//     setting)
//   - JetBrains IDEs' safe write: "name___jb_tmp___", "name___jb_old___",
//     "name___jb_bak___"
//   - GNU sed -i: "sed" plus six letters or digits, renamed over the file
//
// Every name starting with "." is also hidden from the site and the
// watcher, by their own rule; the dot-prefixed forms are listed here so
// that the list is whole.
func Scratch(name string) bool {
	switch {
	case name == "4913",
		strings.HasSuffix(name, "~"),
		strings.HasPrefix(name, "#"),
		strings.HasPrefix(name, ".#"),
		strings.HasSuffix(name, ".swp"), strings.HasSuffix(name, ".swo"), strings.HasSuffix(name, ".swn"), strings.HasSuffix(name, ".swx"),
		strings.HasSuffix(name, ".bck"), strings.HasSuffix(name, ".bak"),
		strings.HasSuffix(name, "___jb_tmp___"), strings.HasSuffix(name, "___jb_old___"), strings.HasSuffix(name, "___jb_bak___"):
		return true
	}
	if rest, ok := strings.CutPrefix(name, "sed"); ok && len(rest) == 6 {
		for _, c := range rest {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return false
			}
		}
		return true
	}
	return false
}

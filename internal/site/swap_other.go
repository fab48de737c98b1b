//go:build !linux

package site

import "errors"

// exchange is unavailable: replaceDir falls back to two renames.
func exchange(a, b string) error { return errors.New("no atomic exchange on this system") }

// processRuns is unknown here: a staging folder with an owner is kept.
func processRuns(pid int) bool { return true }

package book

import (
	"testing"

	"github.com/ownership-book/ownership/internal/spectest"
)

// specCases reads the spec-as-data cases of dir (see internal/spectest).
func specCases(t *testing.T, dir string) []*spectest.Case { return spectest.Load(t, dir) }

package composed

import (
	"testing"

	"github.com/ownership-book/ownership/examples/raymond"
)

// BenchmarkExplore measures the exhaustive check at the default bounds on a
// three-node line.
func BenchmarkExplore(b *testing.B) {
	for b.Loop() {
		Explore(raymond.Line(3), 0, Bounds{Requests: 1, Dups: 1, Losses: 1, Revokes: 1}, Correct, 0)
	}
}

package calc

import "testing"

func TestNext(t *testing.T) {
	if got := Next(3); got != 4 {
		t.Fatalf("Next(3) = %d, want 4", got)
	}
}

// TestAllSkipped passes without checking anything: each of its subtests,
// nested ones too, skips.
func TestAllSkipped(t *testing.T) {
	t.Run("small", func(t *testing.T) { t.Skip("not today") })
	t.Run("large", func(t *testing.T) {
		t.Run("huge", func(t *testing.T) { t.Skip("not today") })
	})
}

// FuzzNoSeeds has no seed corpus: go test runs it with no input.
func FuzzNoSeeds(f *testing.F) {
	f.Fuzz(func(t *testing.T, e int) {
		if Next(e) <= e && e < 1<<62 {
			t.Fatal("Next fell")
		}
	})
}

func ExampleNext() {
	Next(1)
	// Output:
}

// Command zombie shows the zombie writer twice: A owns an actor at epoch 41
// and pauses without noticing (a long garbage-collection pause, a stopped
// VM); the coordinator, suspecting A, revokes the actor for B, which acquires
// it at epoch 42 and writes; then A wakes and sends the write it had pending,
// still stamped 41. Against storage without a fence, A's late write lands on
// top of B's and B's update is lost. Against storage that keeps the highest
// epoch it has seen and refuses older ones, A's write is refused and B's
// stands.
//
// The owner record moves by the package's own transitions (Revoke,
// Acquire); the storage's answers are computed, not printed by hand. By
// default it prints both timelines; -figure prints them as one D2 sequence
// diagram (the shared steps, then each ending), which the chapter draws.
//
//	go run ./examples/ownership/zombie
//	go run ./examples/ownership/zombie -figure
//
// Reference: Martin Kleppmann, "How to do distributed locking" (2016), the
// paused lock holder and the fencing token; chapter "Ownership: epochs and
// fencing".
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/ownership-book/ownership/examples/ownership"
)

func main() {
	figure := flag.Bool("figure", false, "print the two runs as a D2 sequence diagram")
	flag.Parse()
	runs, err := both()
	if err != nil {
		fmt.Fprintln(os.Stderr, "zombie:", err)
		os.Exit(1)
	}
	if *figure {
		if err := writeD2(os.Stdout, runs); err != nil {
			fmt.Fprintln(os.Stderr, "zombie:", err)
			os.Exit(1)
		}
		return
	}
	writeText(os.Stdout, runs)
}

// storage is the resource server that holds key x. With fence set it keeps
// the highest epoch it has seen and refuses a write stamped with an older
// one (the "highest seen" server of the chapter: it needs no access to the
// owner record); without, it accepts every write.
type storage struct {
	fence   bool
	highest ownership.Epoch
	x       string
}

// write applies "x = v" stamped with epoch e and returns the answer.
func (s *storage) write(v string, e ownership.Epoch) string {
	if s.fence && e < s.highest {
		return fmt.Sprintf("refused: epoch %d < %d", e, s.highest)
	}
	if e > s.highest {
		s.highest = e
	}
	s.x = v
	return "accepted"
}

// step is one event of a run: a message from one participant to another
// (to == from for something a participant does alone) and, for a request,
// its answer.
type step struct {
	from, to string
	what     string
	answer   string
}

// run is one version of the story.
type run struct {
	title string
	steps []step
	tail  int // index of the first step that depends on the fence
}

// participants in the order the figure draws them, with their labels.
var participants = [][2]string{{"A", "node A"}, {"record", "owner record"}, {"B", "node B"}, {"storage", "storage"}}

// both plays the story against storage without and with a fence.
func both() ([]run, error) {
	var runs []run
	for _, fence := range []bool{false, true} {
		r, err := play(fence)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// play runs the story once.
func play(fence bool) (run, error) {
	r := run{title: "Without a fence"}
	if fence {
		r.title = "With a fence"
	}
	st := &storage{fence: fence}
	var rec ownership.State = ownership.Owned{Owner: "A", Epoch: 41}
	aEpoch := rec.(ownership.Owned).Epoch // the epoch A's token carries
	add := func(from, to, what, answer string) { r.steps = append(r.steps, step{from, to, what, answer}) }

	add("A", "storage", fmt.Sprintf("write x = a1 (epoch %d)", aEpoch), st.write("a1", aEpoch))
	add("A", "A", "pauses, unaware", "")

	rec, err := ownership.Revoke(rec, "B")
	if err != nil {
		return r, err
	}
	add("record", "record", "A suspected: Revoke -> "+rec.String(), "")
	rec, err = ownership.Acquire(rec, "B")
	if err != nil {
		return r, err
	}
	bEpoch := ownership.CurrentEpoch(rec)
	add("B", "record", "Acquire", fmt.Sprintf("%s: token epoch %d", rec, bEpoch))
	add("B", "storage", fmt.Sprintf("write x = b1 (epoch %d)", bEpoch), st.write("b1", bEpoch))

	// A wakes and sends the write it had pending, with the token it holds.
	stale := !ownership.MayMutate(rec, "A", aEpoch)
	add("A", "storage", fmt.Sprintf("wakes: write x = a2 (epoch %d)", aEpoch), st.write("a2", aEpoch))
	r.tail = len(r.steps) - 1 // where the two runs may part
	outcome := "B's write stands"
	if st.x != "b1" {
		outcome = "B's write is lost"
	}
	if !stale {
		return r, fmt.Errorf("the epoch-%d token of A still has authority in %s", aEpoch, rec)
	}
	add("storage", "storage", fmt.Sprintf("x = %s: %s", st.x, outcome), "")
	return r, nil
}

// writeText prints the runs as timelines.
func writeText(w io.Writer, runs []run) {
	for i, r := range runs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s:\n", r.title)
		for _, s := range r.steps {
			line := s.what
			if s.to != s.from {
				line = fmt.Sprintf("-> %-8s %s", s.to, s.what)
			}
			if s.answer != "" {
				line += ": " + s.answer
			}
			fmt.Fprintf(w, "  %-8s %s\n", s.from, line)
		}
	}
}

// writeD2 prints the runs as one D2 sequence diagram: the steps both runs
// share, then each run's own ending in a group named after it (UML's "alt"
// fragment). It fails if the runs differ before their endings, since the
// figure would then hide a difference.
func writeD2(w io.Writer, runs []run) error {
	common := runs[0].steps[:runs[0].tail]
	for _, r := range runs[1:] {
		if r.tail != runs[0].tail || !slices.Equal(r.steps[:r.tail], common) {
			return fmt.Errorf("%q and %q differ before their endings", runs[0].title, r.title)
		}
	}
	fmt.Fprintln(w, "shape: sequence_diagram")
	for _, p := range participants {
		fmt.Fprintf(w, "%s: %s\n", p[0], quote(p[1]))
	}
	msgs := func(indent string, steps []step) {
		for _, s := range steps {
			fmt.Fprintf(w, "%s%s -> %s: %s\n", indent, s.from, s.to, quote(s.what))
			if s.answer != "" {
				fmt.Fprintf(w, "%s%s -> %s: %s\n", indent, s.to, s.from, quote(s.answer))
			}
		}
	}
	msgs("", common)
	for i, r := range runs {
		fmt.Fprintf(w, "ending%d: %s {\n", i+1, quote(r.title))
		msgs("  ", r.steps[r.tail:])
		fmt.Fprintln(w, "}")
	}
	return nil
}

// quote returns s as a D2 double-quoted string.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// Command zombie replays the zombie writer of Martin Kleppmann's "How to do
// distributed locking" (2016) against the model Chubby cell of package
// chubby: client 1 acquires the lock (generation 33) and pauses for longer
// than its lease; client 2 acquires (generation 34) and writes; client 1
// wakes up and sends the write it had prepared. Each row protects the file
// server differently and says what became of client 1's write. Output is
// deterministic.
//
//	go run ./examples/chubby/zombie                  # the table
//	go run ./examples/chubby/zombie -timeline KEY    # one row, step by step
//	go run ./examples/chubby/zombie -d2 KEY          # one row as a D2 sequence diagram
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ownership-book/ownership/examples/chubby"
)

func main() {
	timeline := flag.String("timeline", "", "print the timeline of the row with this key")
	d2 := flag.String("d2", "", "print the row with this key as a D2 sequence diagram")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "zombie: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	var err error
	switch {
	case *timeline != "" && *d2 != "":
		err = errors.New("give -timeline or -d2, not both")
	case *timeline != "":
		err = printTimeline(os.Stdout, *timeline)
	case *d2 != "":
		err = printD2(os.Stdout, *d2)
	default:
		err = run(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "zombie:", err)
		os.Exit(1)
	}
}

// The network delay of every write, and the lease (Chubby's default).
const (
	delay = 10 * time.Millisecond
	lease = chubby.DefaultLease
)

// row is one way of protecting the server, with the pause of client 1 and
// how long client 2 works before its first write.
type row struct {
	key       string
	scheme    chubby.Scheme
	lockDelay time.Duration
	pause     time.Duration
	think     time.Duration
	noNotice  bool // the ownership coordinator sends the server no fence notice
}

var rows = []row{
	{"unchecked", chubby.SchemeUnchecked, 0, 20 * time.Second, 0, false},
	{"lockdelay-short", chubby.SchemeLockDelay, time.Minute, 20 * time.Second, 0, false},
	{"lockdelay-long", chubby.SchemeLockDelay, time.Minute, 90 * time.Second, 0, false},
	{"cell", chubby.SchemeSequencerAtCell, 0, 20 * time.Second, 0, false},
	{"newest", chubby.SchemeSequencerNewest, 0, 20 * time.Second, 0, false},
	{"ownership", chubby.SchemeOwnership, 0, 20 * time.Second, 0, false},
	{"cell-slow", chubby.SchemeSequencerAtCell, 0, 20 * time.Second, 15 * time.Second, false},
	{"newest-slow", chubby.SchemeSequencerNewest, 0, 20 * time.Second, 15 * time.Second, false},
	{"ownership-slow", chubby.SchemeOwnership, 0, 20 * time.Second, 15 * time.Second, false},
	{"ownership-quiet", chubby.SchemeOwnership, 0, 20 * time.Second, 15 * time.Second, true},
}

// protection names the row's protection: its scheme, and whether the
// ownership coordinator's fence notice is left out.
func (r row) protection() string {
	if r.noNotice {
		return r.scheme.String() + ", no notice"
	}
	return r.scheme.String()
}

func (r row) scenario() chubby.Scenario {
	c2 := []chubby.Step{{Kind: chubby.Send, D: delay, Data: "B"}}
	if r.think > 0 {
		c2 = append([]chubby.Step{{Kind: chubby.Work, D: r.think}}, c2...)
	}
	return chubby.Scenario{
		Scheme:     r.scheme,
		Lease:      lease,
		LockDelay:  r.lockDelay,
		FenceDelay: delay,
		NoNotice:   r.noNotice,
		Clients: [][]chubby.Step{
			{{Kind: chubby.Pause, D: r.pause}, {Kind: chubby.Send, D: delay, Data: "A"}},
			c2,
		},
	}
}

func find(key string) (row, error) {
	var keys []string
	for _, r := range rows {
		if r.key == key {
			return r, nil
		}
		keys = append(keys, r.key)
	}
	return row{}, fmt.Errorf("no row %q (rows: %s)", key, strings.Join(keys, ", "))
}

// verdict says what became of client 1's write "A".
func verdict(res chubby.Result) (fate, result string) {
	for _, w := range res.Refused {
		if w.Data == "A" {
			return "refused", "refused"
		}
	}
	switch {
	case res.Regressed:
		return "applied", "overwritten"
	case res.Late > 0:
		return "applied", "late"
	}
	return "applied", "safe"
}

const rowFormat = "  %-15s %-31s %-10s %-6s %-9s %-10s %-8s %s\n"

func run(w io.Writer) error {
	fmt.Fprintf(w, "The zombie writer: client 1 acquires %s (generation 33) at 0s and pauses;\n", chubby.Lock)
	fmt.Fprintf(w, "client 2 waits for the lock, works for \"think\", then writes B; client 1 wakes and\n")
	fmt.Fprintf(w, "sends A, prepared before its pause. Lease %s, every message takes %s.\n\n", d(lease), d(delay))
	fmt.Fprintf(w, rowFormat, "key", "protection", "lock-delay", "pause", "think", "A arrives", "A is", "verdict")
	for _, r := range rows {
		res, err := chubby.Run(r.scenario())
		if err != nil {
			return fmt.Errorf("row %s: %w", r.key, err)
		}
		var arrived time.Duration
		for _, x := range append(res.Applied, res.Refused...) {
			if x.Data == "A" {
				arrived = x.Arrived
			}
		}
		fate, v := verdict(res)
		fmt.Fprintf(w, rowFormat, r.key, r.protection(), d(r.lockDelay), d(r.pause), d(r.think), d(arrived), fate, v)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "overwritten: A was applied after B, a write of generation 34.")
	fmt.Fprintln(w, "late:        A was applied while client 2 held generation 34, before B arrived.")
	fmt.Fprintln(w, "safe:        A was applied before anyone else held the lock.")
	return nil
}

var d = chubby.FormatDuration

func lastValue(res chubby.Result) (string, bool) {
	if len(res.Applied) == 0 {
		return "", false
	}
	return res.Applied[len(res.Applied)-1].Data, true
}

func printTimeline(w io.Writer, key string) error {
	r, err := find(key)
	if err != nil {
		return err
	}
	res, err := chubby.Run(r.scenario())
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %s, lock-delay %s, client 1 pauses %s, client 2 thinks %s\n", r.key, r.protection(), d(r.lockDelay), d(r.pause), d(r.think))
	for _, t := range res.Trace {
		who := t.From
		if t.To != "" {
			who += " -> " + t.To
		}
		fmt.Fprintf(w, "  %-8s %-26s %s\n", d(t.At), who, t.Text)
	}
	if last, ok := lastValue(res); ok {
		fmt.Fprintf(w, "The file server ends with %s.\n", last)
	}
	return nil
}

// labelWidth is the longest line, in characters, of a label of the
// figure: longer ones are broken at spaces, so that the diagram's
// lifelines stay close enough together for a page's column.
const labelWidth = 34

// wrap breaks s at spaces into lines of at most width characters (a
// longer word keeps a line of its own).
func wrap(s string, width int) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return strings.Join(append(lines, line), "\n")
}

// printD2 draws the row's trace as a D2 sequence diagram: one lifeline per
// participant, messages in the order they arrived, notes for what happens
// at one participant.
func printD2(w io.Writer, key string) error {
	r, err := find(key)
	if err != nil {
		return err
	}
	res, err := chubby.Run(r.scenario())
	if err != nil {
		return err
	}
	ids := map[string]string{
		"client 1": "c1", "client 2": "c2",
		chubby.CellName: "cell", chubby.CoordinatorName: "coord", chubby.ServerName: "server",
	}
	order := []string{"client 1", chubby.CellName, chubby.CoordinatorName, "client 2", chubby.ServerName}
	used := map[string]bool{}
	for _, t := range res.Trace {
		used[t.From] = true
		if t.To != "" {
			used[t.To] = true
		}
	}
	fmt.Fprintln(w, "shape: sequence_diagram")
	for _, p := range order {
		if used[p] {
			fmt.Fprintf(w, "%s: %q\n", ids[p], p)
		}
	}
	for i, t := range res.Trace {
		label := wrap(fmt.Sprintf("%s: %s", d(t.At), t.Text), labelWidth)
		if t.To == "" {
			fmt.Fprintf(w, "%s.n%d: %q\n", ids[t.From], i, label)
			continue
		}
		fmt.Fprintf(w, "%s -> %s: %q\n", ids[t.From], ids[t.To], label)
	}
	return nil
}

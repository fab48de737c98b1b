package service

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/ownership"
)

// A floor only rises, and a refused burn changes nothing on disk.
// Reference: chapter "The ownership service", section "Restarting with
// an empty registry".
func TestFloorIsMonotoneAndDurable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "floor")
	f, err := OpenFloor(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Get("x") != 0 {
		t.Fatalf("empty floor of x = %d", f.Get("x"))
	}
	for _, e := range []ownership.Epoch{1, 2, 5} {
		if err := f.Burn("x", e); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Burn("y", 7); err != nil {
		t.Fatal(err)
	}
	disk := readFile(t, path)
	for _, e := range []ownership.Epoch{5, 4, 0} {
		if err := f.Burn("x", e); !errors.Is(err, ErrFloorBackwards) {
			t.Fatalf("Burn(x, %d) at floor 5: %v, want ErrFloorBackwards", e, err)
		}
	}
	if got := readFile(t, path); got != disk {
		t.Fatalf("a refused burn rewrote the file: %q -> %q", disk, got)
	}
	if want := "ownership epoch floor v2\nx 5\ny 7\nend 2 crc32c 3b673afd\n"; disk != want {
		t.Fatalf("file %q, want %q", disk, want)
	}
	g, err := OpenFloor(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Get("x") != 5 || g.Get("y") != 7 {
		t.Fatalf("reopened floor: x=%d y=%d, want 5 and 7", g.Get("x"), g.Get("y"))
	}
}

// A file that is not a floor is refused with its path and line, never read
// as an empty (zero) floor.
func TestCorruptFloorNamesFileAndLine(t *testing.T) {
	const h, end = "ownership epoch floor v2\n", "end 9 crc32c 00000000\n"
	cases := map[string]string{
		"":                                ":1: empty file",
		"hello\n":                         ":1: header",
		"ownership epoch floor v1\nx 5\n": ":1: header",
		h + "x\n" + end:                   ":2: want \"actor epoch\"",
		h + "x -1\n" + end:                ":2: epoch \"-1\" is not a number",
		h + "x 1\nx 2\n" + end:            ":3: actor x appears twice",
		h + "x/y 1\n" + end:               ":2: actor name",
		h + "x 1\ny 1 2\n" + end:          ":3: want",
		h + "x 1\n":                       ":3: no end line",
		h + "x 1\n" + end:                 ":3: end line",
		h + "x 1\nend 1 crc32c 00000000":  ":3: no newline at the end",
		h + "x 1\n" + end + "y 2\n":       ":5: no end line",
	}
	for content, want := range cases {
		path := filepath.Join(t.TempDir(), "floor")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := OpenFloor(path, nil)
		if !errors.Is(err, ErrCorruptFloor) || !strings.Contains(err.Error(), path+want) {
			t.Errorf("OpenFloor(%q) = %v; want ErrCorruptFloor with %q", content, err, path+want)
		}
	}
}

// A registry that forgets its floor moves epochs backwards: after the
// restart, the actor's epoch is below a token already issued, and that old
// token passes the fence check again. With the floor, the new life starts
// above it and the old token stays stale.
// Reference: chapter "The ownership service", section "Restarting with
// an empty registry".
func TestForgettingRegistryMovesEpochsBackwards(t *testing.T) {
	ctx := context.Background()
	run := func(dir string) (*LocalRegistry, ownership.Token) {
		f, err := OpenFloor(filepath.Join(dir, "floor"), nil)
		if err != nil {
			t.Fatal(err)
		}
		r := NewLocalRegistry(f, nil)
		s, err := r.Apply(ctx, Request{Op: OpCreate, Actor: "x", To: "A"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.Apply(ctx, Request{Op: ownership.OpAcquire, Actor: "x", Caller: "A", Epoch: ownership.CurrentEpoch(s.State)})
		if err != nil {
			t.Fatal(err)
		}
		return r, res.Token
	}
	handover := func(r *LocalRegistry, from, to ownership.NodeID, e ownership.Epoch) ownership.Token {
		for _, req := range []Request{
			{Op: ownership.OpBeginTransfer, Actor: "x", Caller: from, To: to, Epoch: e},
			{Op: ownership.OpCompleteRelease, Actor: "x", Caller: from, Epoch: e},
		} {
			if _, err := r.Apply(ctx, req); err != nil {
				t.Fatal(err)
			}
		}
		res, err := r.Apply(ctx, Request{Op: ownership.OpAcquire, Actor: "x", Caller: to, Epoch: e + 1})
		if err != nil {
			t.Fatal(err)
		}
		return res.Token
	}
	dir := t.TempDir()
	r1, _ := run(dir)
	tokB := handover(r1, "A", "B", 1)
	handover(r1, "B", "A", 2) // B's token (epoch 2) is now stale
	stale, _ := r1.Read(ctx, "x")
	if stale.ValidFence(tokB.Epoch) {
		t.Fatal("B's token passes before any restart")
	}

	forgot, _ := run(t.TempDir()) // the floor is lost: a new life from nothing
	a, _ := forgot.Read(ctx, "x")
	if !a.ValidFence(tokB.Epoch) {
		t.Fatalf("forgetting registry at %v: B's stale token unexpectedly fails", a.State())
	}
	t.Logf("forgetting registry: epoch went from 3 back to %d; stale %v passes the fence", a.CurrentEpoch(), tokB)

	kept, _ := run(dir) // the floor survives: the new life starts above 3
	k, _ := kept.Read(ctx, "x")
	if k.CurrentEpoch() != 4 || k.ValidFence(tokB.Epoch) {
		t.Fatalf("registry with its floor at %v: want epoch 4 and B's token stale", k.State())
	}
}

// ---- The SIGKILL test ----

// TestHelperProcess is the child of TestEpochFloorSurvivesSIGKILLAtEveryPoint.
// It runs a LocalRegistry over the floor in OWNERD_FLOOR and applies one
// request per stdin line ("create x A", "acquire x A 1", "begin x A 1 B",
// "release x A 1"), answering each with "ok <state JSON>" or "err <error>"
// once the state is visible. If OWNERD_CRASH_AT names a CrashPoint, the
// OWNERD_CRASH_AFTER'th burn stops there: it prints "CRASH-POINT <point>"
// and sleeps until the parent kills it with SIGKILL.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("OWNERD_HELPER") != "1" {
		return
	}
	at := CrashPoint(os.Getenv("OWNERD_CRASH_AT"))
	after, _ := strconv.Atoi(os.Getenv("OWNERD_CRASH_AFTER"))
	burns := 0
	hook := func(p CrashPoint) {
		if p == PointBeforeBurn {
			burns++
		}
		if p == at && burns == after {
			fmt.Printf("CRASH-POINT %s\n", p)
			for {
				time.Sleep(time.Hour) // wait for SIGKILL
			}
		}
	}
	f, err := OpenFloor(os.Getenv("OWNERD_FLOOR"), hook)
	if err != nil {
		fmt.Printf("err %v\n", err)
		os.Exit(1)
	}
	r := NewLocalRegistry(f, hook)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		req, err := parseHelperLine(sc.Text())
		if err == nil {
			var res Result
			if res, err = r.Apply(context.Background(), req); err == nil {
				b, _ := json.Marshal(ToWire(res.State))
				fmt.Printf("ok %s\n", b)
				continue
			}
		}
		fmt.Printf("err %v\n", err)
	}
	os.Exit(0)
}

func parseHelperLine(line string) (Request, error) {
	f := strings.Fields(line)
	epoch := func(i int) ownership.Epoch {
		e, _ := strconv.ParseUint(f[i], 10, 64)
		return ownership.Epoch(e)
	}
	switch {
	case len(f) == 3 && f[0] == "create":
		return Request{Op: OpCreate, Actor: ownership.ActorID(f[1]), To: ownership.NodeID(f[2])}, nil
	case len(f) == 4 && f[0] == "acquire":
		return Request{Op: ownership.OpAcquire, Actor: ownership.ActorID(f[1]), Caller: ownership.NodeID(f[2]), Epoch: epoch(3)}, nil
	case len(f) == 5 && f[0] == "begin":
		return Request{Op: ownership.OpBeginTransfer, Actor: ownership.ActorID(f[1]), Caller: ownership.NodeID(f[2]), Epoch: epoch(3), To: ownership.NodeID(f[4])}, nil
	case len(f) == 4 && f[0] == "release":
		return Request{Op: ownership.OpCompleteRelease, Actor: ownership.ActorID(f[1]), Caller: ownership.NodeID(f[2]), Epoch: epoch(3)}, nil
	}
	return Request{}, fmt.Errorf("bad line %q", line)
}

// child is one life of the helper process.
type child struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	crash CrashPoint // where this life stopped, after send returns crashed
}

func startChild(t *testing.T, floor string, at CrashPoint, after int) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "OWNERD_HELPER=1", "OWNERD_FLOOR="+floor,
		"OWNERD_CRASH_AT="+string(at), fmt.Sprintf("OWNERD_CRASH_AFTER=%d", after))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, in: in, out: bufio.NewReader(out)}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return c
}

// send applies one line and returns the visible state, or crashed=true if
// the child stopped at its crash point instead.
func (c *child) send(t *testing.T, line string) (s ownership.State, crashed bool) {
	t.Helper()
	if _, err := fmt.Fprintln(c.in, line); err != nil {
		t.Fatalf("writing %q: %v", line, err)
	}
	reply, err := c.out.ReadString('\n')
	if err != nil {
		t.Fatalf("reading reply to %q: %v", line, err)
	}
	reply = strings.TrimSpace(reply)
	switch {
	case strings.HasPrefix(reply, "CRASH-POINT "):
		c.crash = CrashPoint(strings.TrimPrefix(reply, "CRASH-POINT "))
		return nil, true
	case strings.HasPrefix(reply, "ok "):
		var w WireState
		if err := json.Unmarshal([]byte(strings.TrimPrefix(reply, "ok ")), &w); err != nil {
			t.Fatal(err)
		}
		s, err := w.State()
		if err != nil {
			t.Fatal(err)
		}
		return s, false
	}
	t.Fatalf("%q: child answered %q", line, reply)
	return nil, false
}

// kill sends SIGKILL and checks that the child died of it.
func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.cmd.Wait()
	ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child exit %v, want killed by SIGKILL", c.cmd.ProcessState)
	}
}

// nextLine is the request that moves a handover on from s.
func nextLine(s ownership.State) string {
	other := map[ownership.NodeID]ownership.NodeID{"A": "B", "B": "A"}
	switch s := s.(type) {
	case ownership.Owned:
		return fmt.Sprintf("begin x %s %d %s", s.Owner, s.Epoch, other[s.Owner])
	case ownership.Transferring:
		return fmt.Sprintf("release x %s %d", s.From, s.OldEpoch)
	case ownership.Unowned:
		return fmt.Sprintf("acquire x %s %d", s.IntendedOwner, s.Epoch)
	}
	panic(s)
}

// The starting epoch comes from a durable floor, and each new epoch is
// fsynced there before any state carrying it can be read. A real child is
// killed with SIGKILL at every point between the burn and the answer (and
// at each step inside the burn), during the first burn of its life (Create)
// and during a later one (BeginTransfer), then restarted: across all lives
// the visible epochs never repeat, and each crash skips at most one epoch,
// exactly one when the crash came after the burn reached the file.
// Skipping is the safe failure: epochs must rise, not rise by one.
// Reference: chapter "The ownership service", section "Burn before visible".
func TestEpochFloorSurvivesSIGKILLAtEveryPoint(t *testing.T) {
	floor := filepath.Join(t.TempDir(), "floor")
	var visible []ownership.Epoch // every new epoch seen, in order
	last := ownership.Epoch(0)    // newest epoch a caller has seen
	see := func(s ownership.State) {
		if e := ownership.CurrentEpoch(s); e != last {
			if e < last {
				t.Fatalf("epoch went backwards: %d after %d (visible %v)", e, last, visible)
			}
			if slices.Contains(visible, e) {
				t.Fatalf("epoch %d reused (visible %v)", e, visible)
			}
			visible = append(visible, e)
			last = e
		}
	}
	crashes, skipped := 0, 0
	for _, at := range CrashPoints {
		for _, after := range []int{1, 2} {
			c := startChild(t, floor, at, after)
			s, crashed := c.send(t, "create x A")
			for i := 0; !crashed && i < 8; i++ {
				see(s)
				s, crashed = c.send(t, nextLine(s))
			}
			if !crashed || c.crash != at {
				t.Fatalf("life crashing at %s after burn %d: did not stop there (stopped at %q)", at, after, c.crash)
			}
			c.kill(t)
			crashes++

			f, err := OpenFloor(floor, nil)
			if err != nil {
				t.Fatalf("after SIGKILL at %s: %v", at, err)
			}
			landed := slices.Index(CrashPoints, at) >= slices.Index(CrashPoints, PointRenamed)
			want := last
			if landed {
				want = last + 1
			}
			if got := f.Get("x"); got != want {
				t.Fatalf("after SIGKILL at %s (burn %d): floor %d, want %d (last visible epoch %d)", at, after, got, want, last)
			}
			// The next life starts at floor+1: it skips the burnt epoch if
			// the burn landed, and never reuses a visible one.
			r := startChild(t, floor, "", 0)
			s, _ = r.send(t, "create x A")
			first := ownership.CurrentEpoch(s)
			if first <= last || first > last+2 {
				t.Fatalf("after SIGKILL at %s: next life starts at epoch %d, last visible %d; want %d or %d", at, first, last, last+1, last+2)
			}
			if landed != (first == last+2) {
				t.Fatalf("after SIGKILL at %s: next life starts at %d after %d; skipped=%v, want %v", at, first, last, first == last+2, landed)
			}
			if first == last+2 {
				skipped++
			}
			see(s)
			s, _ = r.send(t, nextLine(s)) // acquire, so the next life's floor is this one's
			see(s)
			r.in.Close()
			r.cmd.Wait()
		}
	}
	t.Logf("%d SIGKILLs at %d points, %d epochs skipped; visible epochs %v", crashes, len(CrashPoints), skipped, visible)
	if want := 2 * (len(CrashPoints) - slices.Index(CrashPoints, PointRenamed)); skipped != want {
		t.Fatalf("skipped %d epochs, want %d", skipped, want)
	}
}

// A burn that fails (here: the temporary file cannot be created) refuses
// the transition, and so does every retry until a burn reaches the disk:
// an epoch is never visible while the file may still hold a lower floor.
// Before the fix, the failed burn raised the floor in memory only, the retry
// skipped the burn, and epoch 2 became visible with 1 on disk, so the next
// life reused epoch 2.
// Reference: chapter "The ownership service", section "Burn before visible".
func TestFailedBurnIsRetriedBeforeTheEpochIsVisible(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "floor")
	f, err := OpenFloor(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := NewLocalRegistry(f, nil)
	onDisk := func() ownership.Epoch {
		g, err := OpenFloor(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return g.Get("x")
	}
	if _, err := r.Apply(ctx, Request{Op: OpCreate, Actor: "x", To: "A"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Apply(ctx, Request{Op: ownership.OpAcquire, Actor: "x", Caller: "A", Epoch: 1}); err != nil {
		t.Fatal(err)
	}
	// A directory where the temporary file goes makes every write fail.
	if err := os.Mkdir(path+".tmp", 0o755); err != nil {
		t.Fatal(err)
	}
	begin := Request{Op: ownership.OpBeginTransfer, Actor: "x", Caller: "A", To: "B", Epoch: 1}
	for try := 1; try <= 2; try++ {
		_, err := r.Apply(ctx, begin)
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("try %d with the floor unwritable: %v; want ErrUnavailable", try, err)
		}
		a, _ := r.Read(ctx, "x")
		if got, disk := a.CurrentEpoch(), onDisk(); got > disk {
			t.Fatalf("try %d: epoch %d visible with floor %d on disk", try, got, disk)
		}
	}
	if err := os.Remove(path + ".tmp"); err != nil {
		t.Fatal(err)
	}
	res, err := r.Apply(ctx, begin)
	if err != nil {
		t.Fatal(err)
	}
	if got, disk := ownership.CurrentEpoch(res.State), onDisk(); got != 2 || disk < got {
		t.Fatalf("after the disk recovered: epoch %d visible, floor %d on disk; want 2 and at least 2", got, disk)
	}
}

// A floor at MaxEpoch leaves no epoch for a new life: Create is refused as
// exhausted, never wrapped around to epoch 0.
func TestCreateAtMaxEpochFloorIsExhausted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "floor")
	f, err := OpenFloor(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Burn("x", ownership.MaxEpoch); err != nil {
		t.Fatal(err)
	}
	r := NewLocalRegistry(f, nil)
	res, err := r.Apply(context.Background(), Request{Op: OpCreate, Actor: "x", To: "A"})
	if !errors.Is(err, ownership.ErrEpochExhausted) {
		t.Fatalf("Create above floor MaxEpoch = %v, %v; want ErrEpochExhausted", res.State, err)
	}
	if _, err := r.Read(context.Background(), "x"); !errors.Is(err, ErrUnknownActor) {
		t.Fatalf("x after the refused Create: %v; want unknown", err)
	}
}

// A floor file damaged after it was written (cut short at a line boundary
// or inside a line, a digit changed, a line too long to scan) is refused
// with its path and line. Read as it stands, each would give a floor lower
// than the one burnt.
func TestDamagedFloorIsRefusedNotReadLower(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "floor")
	f, err := OpenFloor(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []struct {
		a ownership.ActorID
		e ownership.Epoch
	}{{"x", 42}, {"y", 7}, {"z", 1000}} {
		if err := f.Burn(b.a, b.e); err != nil {
			t.Fatal(err)
		}
	}
	good := readFile(t, path)
	lines := strings.SplitAfter(good, "\n")
	cases := map[string]string{
		"last actor line cut off": strings.Join(lines[:3], ""),
		"cut inside a line":       good[:strings.Index(good, "1000")+2],
		"digit changed":           strings.Replace(good, "x 42", "x 12", 1),
		"line too long":           lines[0] + "x 4" + strings.Repeat("2", 70000) + "\n" + strings.Join(lines[1:], ""),
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "floor")
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			g, err := OpenFloor(p, nil)
			if err == nil {
				t.Fatalf("damaged floor read as x=%d y=%d z=%d; want ErrCorruptFloor", g.Get("x"), g.Get("y"), g.Get("z"))
			}
			if !errors.Is(err, ErrCorruptFloor) || !strings.Contains(err.Error(), p+":") {
				t.Fatalf("error %v; want ErrCorruptFloor naming %s and a line", err, p)
			}
		})
	}
	if g, err := OpenFloor(path, nil); err != nil || g.Get("x") != 42 || g.Get("z") != 1000 {
		t.Fatalf("undamaged floor: %v", err)
	}
}

// Burns from many goroutines, for several actors, are serialised: every
// one lands, and the file ends with each actor's highest epoch.
func TestConcurrentBurnsAllLand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "floor")
	f, err := OpenFloor(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	actors := []ownership.ActorID{"p", "q", "r", "s"}
	const per = 10
	var wg sync.WaitGroup
	for _, a := range actors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e := ownership.Epoch(1); e <= per; e++ {
				if err := f.Burn(a, e); err != nil {
					t.Errorf("Burn(%s, %d): %v", a, e, err)
				}
			}
		}()
	}
	wg.Wait()
	g, err := OpenFloor(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range actors {
		if g.Get(a) != per || f.Durable(a) != per {
			t.Errorf("actor %s: %d on disk, %d durable in memory; want %d", a, g.Get(a), f.Durable(a), per)
		}
	}
	t.Logf("%d concurrent burns", len(actors)*per)
}

// An actor name that could not be read back from the floor file (a space,
// a newline) is refused before anything is written, by Burn and by both
// registries' Create: otherwise one bad Create, made in process, would
// leave a floor that no later start could read.
func TestActorNameThatBreaksTheFloorIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "floor")
	f, err := OpenFloor(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Burn("x", 1); err != nil {
		t.Fatal(err)
	}
	disk := readFile(t, path)
	r := NewLocalRegistry(f, nil)
	m := NewMachine()
	for _, a := range []ownership.ActorID{"a b", "y 9\nz", "", "ä"} {
		if err := f.Burn(a, 5); !errors.Is(err, ErrMalformed) {
			t.Errorf("Burn(%q) = %v; want ErrMalformed", a, err)
		}
		if _, err := r.Apply(context.Background(), Request{Op: OpCreate, Actor: a, To: "A"}); !errors.Is(err, ErrMalformed) {
			t.Errorf("LocalRegistry Create(%q) = %v; want ErrMalformed", a, err)
		}
		if out := m.Apply(mustJSON(Request{Op: OpCreate, Actor: a, To: "A"})); !containsError(out) {
			t.Errorf("Machine Create(%q) = %s; want refused", a, out)
		}
	}
	if got := readFile(t, path); got != disk {
		t.Fatalf("floor rewritten: %q", got)
	}
	if _, err := OpenFloor(path, nil); err != nil {
		t.Fatal(err)
	}
}

package cluster_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStreamdDamagedVoter damages one voter's data directory while it is
// down, in four ways, and restarts it on it with its usual command line:
//
//   - log-byte: every copy, in its Raft log file (raft.db), of the last
//     append's bytes has one byte changed (an entry after the newest
//     snapshot, so that it is applied from the log on restart);
//   - log-truncated: the Raft log file cut to half its length;
//   - snapshot-byte: one byte changed in the middle of the newest
//     snapshot's state file (state.bin);
//   - snapshot-truncated: the newest snapshot's state file cut in half.
//
// Each time the voter must either refuse to start, with an error that names
// the damaged file (or its snapshot's directory), or start and end up with
// the same state as the leader (equal applied index and state digest, which
// covers every acknowledged append): it never serves silently lost or
// changed data. Between cases its data directory is put back from a copy
// taken before the damage. Reference: Raft §5.4 (State Machine Safety);
// the data a voter acknowledged is what its log and snapshot must prove
// they still hold.
func TestStreamdDamagedVoter(t *testing.T) {
	c := newCluster(t, binary(t, "stream/streamd"), "A", "B", "C")
	for _, v := range c.voters {
		c.start(v)
	}
	ld := c.leader(20 * time.Second)
	put(t, ld.url, streamPath, "application/octet-stream", "", http.StatusCreated)
	n := 0
	appendSome := func(k int) string {
		var last string
		for range k {
			last = fmt.Sprintf("chunk-%05d|", n)
			n++
			put(t, c.leader(10*time.Second).url, streamPath, "application/octet-stream", last, http.StatusNoContent)
		}
		return last
	}
	victim := c.voters[2]
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir, last string) string // returns the damaged file
	}{
		{"log-byte", func(t *testing.T, dir, last string) string {
			// The log holds an append's bytes as they are or in base64
			// (JSON's form of a []byte); both are changed.
			f := filepath.Join(dir, "raft.db")
			b := readFile(t, f)
			changed := strings.Replace(last, "chunk", "chunK", 1)
			k := 0
			for _, enc := range []func(string) []byte{
				func(s string) []byte { return []byte(s) },
				func(s string) []byte { return []byte(base64.StdEncoding.EncodeToString([]byte(s))) },
			} {
				k += bytes.Count(b, enc(last))
				b = bytes.ReplaceAll(b, enc(last), enc(changed))
			}
			if k == 0 {
				t.Fatalf("%s does not hold the last append %q, as it is or in base64", f, last)
			}
			writeFile(t, f, b)
			return f
		}},
		{"log-truncated", func(t *testing.T, dir, _ string) string {
			f := filepath.Join(dir, "raft.db")
			b := readFile(t, f)
			writeFile(t, f, b[:len(b)/2])
			return f
		}},
		{"snapshot-byte", func(t *testing.T, dir, _ string) string {
			f := newestSnapshot(t, dir)
			b := readFile(t, f)
			b[len(b)/2] ^= 0x20
			writeFile(t, f, b)
			return f
		}},
		{"snapshot-truncated", func(t *testing.T, dir, _ string) string {
			f := newestSnapshot(t, dir)
			b := readFile(t, f)
			writeFile(t, f, b[:len(b)/2])
			return f
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Enough appends for a snapshot (threshold 64), then a few
			// that only the log holds.
			appendSome(100)
			time.Sleep(500 * time.Millisecond)
			last := appendSome(5)
			c.caughtUp(victim, 15*time.Second)
			c.kill(victim)
			backup := victim.dir + ".backup"
			os.RemoveAll(backup)
			if out, err := exec.Command("cp", "-a", victim.dir, backup).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v: %s", err, out)
			}
			t.Cleanup(func() { // a failed case leaves the voter restored and running
				if victim.cmd == nil {
					os.RemoveAll(victim.dir)
					os.Rename(backup, victim.dir)
					c.start(victim)
				}
			})
			damaged := tc.damage(t, victim.dir, last)
			appendSome(5) // the group moves on while the voter is down
			problem := startDamaged(c, victim, damaged)
			c.kill(victim)
			os.RemoveAll(victim.dir)
			if err := os.Rename(backup, victim.dir); err != nil {
				t.Fatal(err)
			}
			c.start(victim)
			c.caughtUp(victim, 15*time.Second)
			if problem != "" {
				t.Error(problem)
			}
		})
	}
}

// startDamaged starts v on its damaged data directory and returns "" if
// it either exits naming the damaged file (or its directory) or runs and
// reaches the leader's applied index with the leader's state digest, and a
// description of what it did otherwise.
func startDamaged(c *cluster, v *voter, damaged string) string {
	f, err := os.OpenFile(v.dir+".log", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	v.starts++
	mark := fmt.Sprintf("--- start %d (on a damaged %s)\n", v.starts, damaged)
	fmt.Fprint(f, mark)
	v.cmd = exec.Command(c.bin, v.args...)
	v.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	v.cmd.Stderr, v.cmd.Stdout, v.log = f, f, f
	if err := v.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	exited := make(chan error, 1)
	cmd := v.cmd
	go func() { exited <- cmd.Wait() }()
	output := func() string {
		b, _ := os.ReadFile(v.dir + ".log")
		s := string(b)
		return s[strings.LastIndex(s, mark)+len(mark):]
	}
	deadline := time.After(20 * time.Second)
	for {
		select {
		case err := <-exited:
			v.cmd = nil
			v.log.Close()
			out := output()
			if strings.Contains(out, damaged) || strings.Contains(out, filepath.Dir(damaged)) {
				c.t.Logf("voter %s refused to start on a damaged %s (%v): %s", v.id, filepath.Base(damaged), err, lastLines(out, 3))
				return ""
			}
			return fmt.Sprintf("voter %s exited (%v) on a damaged %s without naming it:\n%s", v.id, err, damaged, lastLines(out, 15))
		case <-deadline:
			lv, _ := c.view(c.leader(10*time.Second), true)
			w, err := c.view(v, true)
			return fmt.Sprintf("voter %s runs on a damaged %s and has not reached the leader's state after 20s: it has %+v (%v), the leader %+v\n%s",
				v.id, damaged, w, err, lv, lastLines(output(), 15))
		case <-time.After(100 * time.Millisecond):
		}
		w, err := c.view(v, true)
		if err != nil {
			continue
		}
		lv, lerr := c.view(c.leader(10*time.Second), true)
		if lerr == nil && w.Applied == lv.Applied && w.Digest == lv.Digest {
			c.t.Logf("voter %s started on a damaged %s and holds the leader's state (applied %d)", v.id, filepath.Base(damaged), w.Applied)
			// Kill it now, before Wait's goroutine and kill race.
			v.cmd.Process.Kill()
			<-exited
			v.cmd = nil
			v.log.Close()
			return ""
		}
	}
}

// newestSnapshot returns the state file of the snapshot with the highest
// index in a voter's data directory (hashicorp/raft's FileSnapshotStore:
// snapshots/<term>-<index>-<ms>/state.bin).
func newestSnapshot(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "snapshots"))
	if err != nil {
		t.Fatal(err)
	}
	type snap struct {
		term, index, ms uint64
		name            string
	}
	var snaps []snap
	for _, e := range ents {
		var s snap
		if _, err := fmt.Sscanf(e.Name(), "%d-%d-%d", &s.term, &s.index, &s.ms); err == nil {
			s.name = e.Name()
			snaps = append(snaps, s)
		}
	}
	if len(snaps) == 0 {
		t.Fatalf("no snapshot in %s", dir)
	}
	sort.Slice(snaps, func(i, j int) bool { return snaps[i].index < snaps[j].index })
	return filepath.Join(dir, "snapshots", snaps[len(snaps)-1].name, "state.bin")
}

func readFile(t *testing.T, f string) []byte {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, f string, b []byte) {
	t.Helper()
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStreamdLostDataDir: a voter of a running group loses its whole data
// directory and is started again with its usual command line (-peers,
// without -bootstrap, which only the group's first start takes). It must
// refuse to start, naming its data directory and saying how to bring it
// back (-join), instead of bootstrapping a second group next to the first:
// an empty voter grants its vote to any candidate, and with one more fault
// a candidate missing acknowledged appends can then win (Raft §5.4.1
// counts on every voter keeping its log). Started with -join instead while
// the group still counts it, it must refuse too, saying to remove it first.
// Then the voter is brought back as the messages say: removed from the
// group, started empty with -join, and it reaches the leader's state.
// Reference: etcd's initial cluster state ("new" against "existing").
func TestStreamdLostDataDir(t *testing.T) {
	c := newCluster(t, binary(t, "stream/streamd"), "A", "B", "C")
	for _, v := range c.voters {
		c.start(v)
	}
	ld := c.leader(20 * time.Second)
	put(t, ld.url, streamPath, "application/octet-stream", "", http.StatusCreated)
	for i := range 20 {
		put(t, c.leader(10*time.Second).url, streamPath, "application/octet-stream", fmt.Sprintf("chunk-%05d|", i), http.StatusNoContent)
	}
	victim := c.voters[2]
	if victim == c.leader(10*time.Second) {
		victim = c.voters[1]
	}
	c.caughtUp(victim, 15*time.Second)
	c.kill(victim)
	if err := os.RemoveAll(victim.dir); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(victim.dir+".log", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// refused starts the victim with args on its empty data directory and
	// requires it to exit within 15 s, its output holding every one of
	// wants.
	refused := func(args []string, wants ...string) {
		t.Helper()
		mark := fmt.Sprintf("--- start on an empty data directory: %q\n", args)
		fmt.Fprint(f, mark)
		cmd := exec.Command(c.bin, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		cmd.Stdout, cmd.Stderr = f, f
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			b, _ := os.ReadFile(victim.dir + ".log")
			out := string(b)
			out = out[strings.LastIndex(out, mark)+len(mark):]
			for _, want := range wants {
				if !strings.Contains(out, want) {
					t.Fatalf("voter %s exited (%v) on an empty data directory without naming %q:\n%s", victim.id, err, want, lastLines(out, 10))
				}
			}
			t.Logf("voter %s refused to start on an empty data directory (%v): %s", victim.id, err, lastLines(out, 2))
		case <-time.After(15 * time.Second):
			w, _ := c.view(victim, true)
			cmd.Process.Kill()
			<-exited
			t.Fatalf("voter %s started on an empty data directory in a running group that counts it, with %q (it reports %+v)", victim.id, args, w)
		}
	}
	// Its usual command line: it would bootstrap a second group.
	refused(victim.args, victim.dir, "-join")
	// With -join, before it is removed: the group still counts it, and it
	// would vote with an empty log.
	refused(append(dropFlag(victim.args, "-peers"), "-join", c.leader(10*time.Second).url), "DELETE /v1/cluster/voters/"+victim.id)
	// Brought back as the message says.
	req, _ := http.NewRequest(http.MethodDelete, c.leader(10*time.Second).url+"/v1/cluster/voters/"+victim.id, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE voter %s: %s", victim.id, resp.Status)
	}
	victim.args = append(dropFlag(victim.args, "-peers"), "-join", c.leader(10*time.Second).url)
	c.start(victim)
	c.caughtUp(victim, 20*time.Second)
}

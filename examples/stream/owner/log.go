package owner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Commit is one committed write: the Index-th commit of the database (1 is
// the first), made by the copy named Writer, setting Key to Value.
type Commit struct {
	Index  uint64
	Writer string
	Key    string
	Value  string
}

// record is one line of the local log or of the stream, newline-delimited
// JSON. Kinds:
//
//	stream: claim  {e, w, n}          a claim of epoch e by writer w, nonce n
//	stream: commit {e, s, i, w, k, v} commit i, sent in batch (e, s)
//	local:  commit {i, w, k, v}       a commit made or adopted by this copy
//	local:  claim  {e, n}             written and synced before a claim is sent
//	local:  owner  {e, i, o}          claim e won; stream holds commits <= i up to offset o
//	local:  ack    {i, o, e}          the stream holds commits <= i up to offset o;
//	                                  e is the highest epoch this copy read there
//	local:  inc    {x}                the incarnation token this copy follows
type record struct {
	T string `json:"t"`
	E uint64 `json:"e,omitempty"`
	S uint64 `json:"s,omitempty"`
	I uint64 `json:"i,omitempty"`
	W string `json:"w,omitempty"`
	N string `json:"n,omitempty"`
	K string `json:"k,omitempty"`
	V string `json:"v,omitempty"`
	O string `json:"o,omitempty"`
	X string `json:"x,omitempty"`
}

func (r record) commit() Commit { return Commit{Index: r.I, Writer: r.W, Key: r.K, Value: r.V} }

func encode(recs ...record) []byte {
	var b bytes.Buffer
	for _, r := range recs {
		line, _ := json.Marshal(r)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// decode parses newline-delimited records. A final line without its newline
// is a torn write and is ignored; any other bad line is an error naming it.
func decode(data []byte) ([]record, error) {
	var recs []record
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		var r record
		if err := json.Unmarshal(data[:i], &r); err != nil {
			return nil, fmt.Errorf("record %d: %v", n, err)
		}
		recs = append(recs, r)
		data = data[i+1:]
	}
	return recs, nil
}

// localLog is the copy's log file, dir/log. Every append is fsynced before
// it returns.
type localLog struct {
	path string
	f    *os.File
}

// openLocalLog opens (or creates) dir/log and returns its records. A torn
// final line, left by a crash during an append that therefore never
// returned, is cut off the file, and the cut is fsynced before any new
// append. A new log file's directory entry is fsynced too, so that a crash
// cannot take the file, and the commits fsynced into it, away.
func openLocalLog(dir string) (*localLog, []record, error) {
	path := filepath.Join(dir, "log")
	data, err := os.ReadFile(path)
	created := os.IsNotExist(err)
	if err != nil && !created {
		return nil, nil, err
	}
	recs, err := decode(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*localLog, []record, error) {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	if i := bytes.LastIndexByte(data, '\n'); i+1 < len(data) {
		// Drop a torn final line so that later appends start on a line.
		if err := f.Truncate(int64(i + 1)); err != nil {
			return fail(err)
		}
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	if created {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
		if err := syncDir(dir); err != nil {
			return fail(err)
		}
	}
	return &localLog{path: path, f: f}, recs, nil
}

func (l *localLog) append(recs ...record) error {
	if _, err := l.f.Write(encode(recs...)); err != nil {
		return fmt.Errorf("%s: %v", l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("%s: %v", l.path, err)
	}
	return nil
}

// rewrite replaces the whole log with recs atomically: write a temporary
// file and fsync it, rename it over the log, fsync the directory. If a step
// fails, the log is left as it was and stays open for appends.
func (l *localLog) rewrite(recs []record) error {
	tmp := l.path + ".tmp"
	if err := writeSynced(tmp, encode(recs...)); err != nil {
		return fmt.Errorf("%s: %v", tmp, err)
	}
	if err := os.Rename(tmp, l.path); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(l.path)); err != nil {
		return fmt.Errorf("%s: %v", l.path, err)
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	l.f.Close()
	l.f = f
	return nil
}

func (l *localLog) close() error { return l.f.Close() }

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir fsyncs a directory, making the entries created, renamed or
// removed in it durable. Tests replace it to watch the calls.
var syncDir = func(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// mkdirSynced makes dir and any missing parents, fsyncing the parent of
// each directory it made so that the new entries survive a crash.
func mkdirSynced(dir string) error {
	dir = filepath.Clean(dir)
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s: not a directory", dir)
		}
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := mkdirSynced(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return err
	}
	return syncDir(filepath.Dir(dir))
}

// readLines returns the non-empty lines of a small text file, nil if absent.
func readLines(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if t := bytes.TrimSpace(s.Bytes()); len(t) > 0 {
			lines = append(lines, string(t))
		}
	}
	return lines
}

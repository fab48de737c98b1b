package cluster_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestStreamdReplaceVoter replaces a dead voter the way streamd's README tells an
// operator to: voter C is killed for good, DELETE /v1/cluster/voters/C on a
// follower removes it (forwarded to the leader, hashicorp/raft
// RemoveServer), a new voter D started with -join and an empty data
// directory is added (AddVoter) and catches up, and then the group survives
// losing one of its original voters: D counts in the quorum. Reference:
// Ongaro, "Consensus: Bridging Theory and Practice", 2014, §4.1 (one server
// at a time).
func TestStreamdReplaceVoter(t *testing.T) {
	c := newCluster(t, binary(t, "stream/streamd"), "A", "B", "C", "D")
	a, b, cc, d := c.voters[0], c.voters[1], c.voters[2], c.voters[3]
	// D is not in the initial configuration: it joins through A.
	for _, v := range c.voters[:3] {
		v.args = dropPeer(v.args, "D")
	}
	d.args = append(dropFlag(d.args, "-peers"), "-join", a.url)
	for _, v := range c.voters[:3] {
		c.start(v)
	}
	c.leader(20 * time.Second)
	put(t, b.url, "/v1/stream/r", "application/octet-stream", "", http.StatusCreated)
	for i, v := range c.voters[:3] {
		put(t, v.url, "/v1/stream/r", "application/octet-stream", fmt.Sprintf("via-%s-%d|", v.id, i), http.StatusNoContent)
	}

	c.kill(cc)
	f := c.follower(c.leader(10 * time.Second))
	if f == cc {
		f = a
		if c.leader(time.Second) == a {
			f = b
		}
	}
	req, _ := http.NewRequest(http.MethodDelete, f.url+"/v1/cluster/voters/C", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), `"id": "C"`) {
		t.Fatalf("DELETE C through follower %s: %s\n%s", f.id, resp.Status, body)
	}

	c.start(d)
	c.caughtUp(d, 15*time.Second)
	w, err := c.view(a, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(voterIDs(t, a)); got != "[A B D]" {
		t.Fatalf("after replacing C by D, voter A's configuration is %s (view %+v)", got, w)
	}

	// The group now needs D: kill A (or B), the other and D carry on.
	ld := c.leader(10 * time.Second)
	victim := a
	if ld == a {
		victim = b
	}
	c.kill(victim)
	put(t, d.url, "/v1/stream/r", "application/octet-stream", "after-replace|", http.StatusNoContent)
	got := get(t, d.url, "/v1/stream/r?offset=-1")
	if want := "via-A-0|via-B-1|via-C-2|after-replace|"; got != want {
		t.Fatalf("stream r through D = %q, want %q", got, want)
	}
}

func voterIDs(t *testing.T, v *voter) []string {
	t.Helper()
	resp, err := http.Get(v.url + "/v1/cluster")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Voters []struct{ ID string } `json:"voters"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, v := range out.Voters {
		ids = append(ids, v.ID)
	}
	return ids
}

func dropFlag(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == name {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// dropPeer removes id from the -peers value.
func dropPeer(args []string, id string) []string {
	out := append([]string(nil), args...)
	for i := range out {
		if i > 0 && out[i-1] == "-peers" {
			var keep []string
			for _, p := range strings.Split(out[i], ",") {
				if !strings.HasPrefix(p, id+"=") {
					keep = append(keep, p)
				}
			}
			out[i] = strings.Join(keep, ",")
		}
	}
	return out
}

// put sends PUT (body "") or POST (body given) and checks the status.
func put(t *testing.T, base, path, ct, body string, want int) {
	t.Helper()
	method := http.MethodPut
	if body != "" {
		method = http.MethodPost
	}
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", ct)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("%s %s%s: %s, want %d: %s", method, base, path, resp.Status, want, b)
	}
}

func get(t *testing.T, base, path string) string {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s%s: %s: %s", base, path, resp.Status, b)
	}
	return string(b)
}

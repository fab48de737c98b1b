package node

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ownership-book/ownership/examples/replica"
)

// AdminPrefix is where a voter serves the group's membership:
//
//	GET    /v1/cluster                 this voter's view: {"id", "leader", "applied", "voters": [{"id", "raft", "url"}]}
//	GET    /v1/cluster?digest=1        the same with "digest": SHA-256 of this voter's state (its snapshot)
//	POST   /v1/cluster/voters          {"id": "D", "raft": "host:port"}: add voter D (hashicorp/raft AddVoter)
//	DELETE /v1/cluster/voters/<id>     remove voter id (hashicorp/raft RemoveServer)
//	POST   /v1/cluster/transfer        hand leadership to another voter (hashicorp/raft LeadershipTransfer)
//	POST   /v1/cluster/snapshot        snapshot this voter's state now and compact its log (any voter, not forwarded)
//
// A change runs on the leader: a follower forwards it there. It answers 200
// with the new view once the new configuration is committed; 400 for a
// malformed request; 503 with Retry-After when no leader is known or the
// change's outcome is unknown (read GET /v1/cluster before retrying). Like
// the streams, these endpoints have no authentication: serve them only on a
// network you trust.
const AdminPrefix = "/v1/cluster"

// VoterInfo is one voter in a ClusterView.
type VoterInfo struct {
	ID   string `json:"id"`
	Raft string `json:"raft"`          // Raft address its peers dial
	URL  string `json:"url,omitempty"` // HTTP base URL, once it has led
}

// ClusterView is the answer of GET /v1/cluster.
type ClusterView struct {
	ID     string `json:"id"`               // the voter that answered
	Leader string `json:"leader,omitempty"` // "" while none is known
	// Applied is the index of the last log entry this voter applied;
	// voters with the same Applied hold the same state (Raft §5.4, State
	// Machine Safety).
	Applied uint64 `json:"applied"`
	// Digest, when asked for, is the hex SHA-256 of this voter's streamed
	// snapshot (the directory and every stream): equal on voters with
	// equal Applied. It reads the whole state: ask only when diagnosing.
	Digest string      `json:"digest,omitempty"`
	Voters []VoterInfo `json:"voters"`
}

// AddRequest is the body of POST /v1/cluster/voters.
type AddRequest struct {
	ID   string `json:"id"`
	Raft string `json:"raft"`
}

func (c *Cluster) view(nd *Node) (ClusterView, error) {
	peers, err := nd.Group.Voters()
	if err != nil {
		return ClusterView{}, err
	}
	v := ClusterView{ID: nd.ID, Voters: []VoterInfo{}, Applied: nd.Group.Status().Applied}
	v.Leader, _ = nd.Group.Leader()
	urls := nd.m.URLs()
	for _, p := range peers {
		u := urls[p.ID]
		if u == "" && c.byID[p.ID] != nil {
			u = c.byID[p.ID].URL
		}
		v.Voters = append(v.Voters, VoterInfo{ID: p.ID, Raft: p.Address, URL: u})
	}
	return v, nil
}

func (c *Cluster) admin(nd *Node) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimSuffix(r.URL.Path, "/")
		switch {
		case path == AdminPrefix && (r.Method == http.MethodGet || r.Method == http.MethodHead):
			v, err := c.view(nd)
			if err == nil && r.URL.Query().Get("digest") != "" {
				v.Digest, err = nd.digest()
			}
			if err != nil {
				adminError(w, http.StatusServiceUnavailable, "%v", err)
				return
			}
			writeJSON(w, v)
		case path == AdminPrefix+"/voters" && r.Method == http.MethodPost:
			body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
			if err != nil {
				adminError(w, http.StatusBadRequest, "reading body: %v", err)
				return
			}
			var req AddRequest
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&req); err != nil || req.ID == "" || req.Raft == "" {
				adminError(w, http.StatusBadRequest, `want {"id": "<voter ID>", "raft": "<host:port>"}, got %q`, body)
				return
			}
			c.change(w, r, nd, body, func(ctx context.Context) error { return nd.Group.AddVoter(ctx, req.ID, req.Raft) })
		case path == AdminPrefix+"/snapshot" && r.Method == http.MethodPost:
			if err := nd.Group.Snapshot(); err != nil {
				adminError(w, http.StatusConflict, "voter %s: snapshot: %v", nd.ID, err)
				return
			}
			v, err := c.view(nd)
			if err != nil {
				adminError(w, http.StatusServiceUnavailable, "%v", err)
				return
			}
			writeJSON(w, v)
		case path == AdminPrefix+"/transfer" && r.Method == http.MethodPost:
			c.change(w, r, nd, nil, nd.Group.TransferLeadership)
		case strings.HasPrefix(path, AdminPrefix+"/voters/") && r.Method == http.MethodDelete:
			id := strings.TrimPrefix(path, AdminPrefix+"/voters/")
			c.change(w, r, nd, nil, func(ctx context.Context) error {
				if err := nd.Group.RemoveVoter(ctx, id); err != nil {
					return err
				}
				_, err := nd.Group.Apply(ctx, encodeDir(dirEntry{ID: id}))
				return err
			})
		default:
			adminError(w, http.StatusNotFound, "no admin endpoint %s %s: see GET %s, POST %s/voters, DELETE %s/voters/<id>, POST %s/transfer, POST %s/snapshot",
				r.Method, r.URL.Path, AdminPrefix, AdminPrefix, AdminPrefix, AdminPrefix, AdminPrefix)
		}
	})
}

// change runs a membership change on the leader: here when nd leads, else
// forwarded once to the leader's URL (waited for up to electionWait when
// the leader is new).
func (c *Cluster) change(w http.ResponseWriter, r *http.Request, nd *Node, body []byte, do func(context.Context) error) {
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	err := do(ctx)
	var nl *replica.NotLeaderError
	switch {
	case err == nil:
		v, err := c.view(nd)
		if err != nil {
			adminError(w, http.StatusServiceUnavailable, "%v", err)
			return
		}
		writeJSON(w, v)
	case errors.As(err, &nl) && r.Header.Get(adminForwarded) == "":
		leader, lerr := nd.Group.WaitLeader(ctx)
		u, ok := c.awaitLeaderURL(nd, leader)
		if lerr != nil || !ok || leader == nd.ID {
			w.Header().Set("Retry-After", "1")
			adminError(w, http.StatusServiceUnavailable, "%v", err)
			return
		}
		req, _ := http.NewRequestWithContext(ctx, r.Method, u+r.URL.Path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(adminForwarded, nd.ID)
		resp, ferr := http.DefaultClient.Do(req)
		if ferr != nil {
			w.Header().Set("Retry-After", "1")
			adminError(w, http.StatusServiceUnavailable, "forward to leader %s at %s: %v", leader, u, ferr)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	default:
		w.Header().Set("Retry-After", "1")
		adminError(w, http.StatusServiceUnavailable, "%v", err)
	}
}

const adminForwarded = "Cluster-Forwarded-By"

// digest hashes the voter's snapshot, taken at some applied index; callers
// compare digests of voters that stopped applying (no writes in flight).
func (nd *Node) digest() (string, error) {
	h := sha256.New()
	if err := nd.m.CaptureSnapshot()(h); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	b, _ := json.MarshalIndent(v, "", "  ")
	w.Write(append(b, '\n'))
}

func adminError(w http.ResponseWriter, code int, format string, args ...any) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	fmt.Fprintf(w, format+"\n", args...)
}

// ErrStillVoter is wrapped by Start's error when a voter with no Raft
// state is to join a group that already counts it as a voter (see
// Options.Join). Its log is lost: remove it from the group first (DELETE
// AdminPrefix/voters/<id> on a running voter), then start it again.
var ErrStillVoter = errors.New("the group still counts this voter")

// JoinCheckFor bounds how long Start tries to read the group's
// configuration before a voter with no Raft state joins (Options.Join).
var JoinCheckFor = 30 * time.Second

// checkNotVoter asks the voter at base for the group's configuration and
// returns an error wrapping ErrStillVoter if it lists id, or an error
// naming base when no answer came within JoinCheckFor.
func checkNotVoter(base, id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), JoinCheckFor)
	defer cancel()
	u := strings.TrimSuffix(base, "/") + AdminPrefix
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return fmt.Errorf("join %s: %v", base, err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			var v ClusterView
			if resp.StatusCode == http.StatusOK {
				err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v)
			} else {
				msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
				err = fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(msg)))
			}
			resp.Body.Close()
			if err == nil {
				for _, p := range v.Voters {
					if p.ID == id {
						return fmt.Errorf("%w: voter %s (GET %s) lists voter %s at %s, and this voter has no Raft state: its log is lost, and it must not vote with an empty one",
							ErrStillVoter, v.ID, u, id, p.Raft)
					}
				}
				return nil
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("join %s: cannot read the group's configuration (last: %v); a voter with no Raft state starts only once the group shows it does not count it", base, last)
		case <-time.After(time.Second):
		}
	}
}

// Join asks the group through any of its voters (base URL) to add voter id
// at Raft address raft, retrying every second until a voter accepts or ctx
// ends. A voter started with no Peers and an empty Dir calls it to join a
// running group.
func Join(ctx context.Context, base, id, raft string) error {
	body, _ := json.Marshal(AddRequest{ID: id, Raft: raft})
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(base, "/")+AdminPrefix+"/voters", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			switch {
			case resp.StatusCode == http.StatusOK:
				return nil
			case resp.StatusCode == http.StatusBadRequest:
				return fmt.Errorf("join %s: %s", base, strings.TrimSpace(string(msg)))
			}
			err = fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(msg)))
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("join %s: %v (last: %v)", base, ctx.Err(), last)
		case <-time.After(time.Second):
		}
	}
}

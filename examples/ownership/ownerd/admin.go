package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/ownership-book/ownership/examples/replica"
)

// listenLoopback listens on addr, which must be a loopback address: the
// membership endpoints have no authentication of their own, so only
// someone logged in on the voter's host may reach them.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("%s is not a loopback address (127.0.0.0/8 or ::1): the membership endpoints are for the voter's own host", addr)
	}
	return net.Listen("tcp", addr)
}

type voterJSON struct {
	ID   string `json:"id"`
	Raft string `json:"raft"`
}

type viewJSON struct {
	ID     string      `json:"id"`
	Leader string      `json:"leader,omitempty"`
	Voters []voterJSON `json:"voters"`
}

// adminHandler serves a voter's membership, on its loopback admin address:
//
//	GET    /v1/cluster               {"id", "leader", "voters": [{"id", "raft"}]}
//	POST   /v1/cluster/voters        {"id": "v4", "raft": "host:port"}: hashicorp/raft AddVoter
//	DELETE /v1/cluster/voters/<id>   hashicorp/raft RemoveServer
//	POST   /v1/cluster/transfer      hashicorp/raft LeadershipTransfer
//
// A change runs on the leader only: another voter answers 421 Misdirected
// Request naming the leader (run the command on the leader's host), and a
// leader in the middle of a transfer 503 with Retry-After. 200 carries the
// new view once the change is committed.
func adminHandler(g *replica.Group) http.Handler {
	view := func(w http.ResponseWriter) {
		vs, err := g.Voters()
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		v := viewJSON{ID: g.ID(), Voters: []voterJSON{}}
		v.Leader, _ = g.Leader()
		for _, p := range vs {
			v.Voters = append(v.Voters, voterJSON{ID: p.ID, Raft: p.Address})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	change := func(w http.ResponseWriter, r *http.Request, do func(context.Context) error) {
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		err := do(ctx)
		var nl *replica.NotLeaderError
		switch {
		case err == nil:
			view(w)
		case errors.As(err, &nl):
			http.Error(w, fmt.Sprintf("%v: run the change on the leader's admin address", err), http.StatusMisdirectedRequest)
		case errors.Is(err, replica.ErrLeadershipTransfer):
			w.Header().Set("Retry-After", "1")
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		default:
			http.Error(w, fmt.Sprintf("%v (read GET /v1/cluster before retrying)", err), http.StatusServiceUnavailable)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimSuffix(r.URL.Path, "/")
		switch {
		case path == "/v1/cluster" && r.Method == http.MethodGet:
			view(w)
		case path == "/v1/cluster/voters" && r.Method == http.MethodPost:
			var req voterJSON
			dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&req); err != nil || req.ID == "" || req.Raft == "" {
				http.Error(w, `want {"id": "<voter ID>", "raft": "<host:port>"}`, http.StatusBadRequest)
				return
			}
			change(w, r, func(ctx context.Context) error { return g.AddVoter(ctx, req.ID, req.Raft) })
		case strings.HasPrefix(path, "/v1/cluster/voters/") && r.Method == http.MethodDelete:
			id := strings.TrimPrefix(path, "/v1/cluster/voters/")
			change(w, r, func(ctx context.Context) error { return g.RemoveVoter(ctx, id) })
		case path == "/v1/cluster/transfer" && r.Method == http.MethodPost:
			change(w, r, g.TransferLeadership)
		default:
			http.Error(w, "see GET /v1/cluster, POST /v1/cluster/voters, DELETE /v1/cluster/voters/<id>, POST /v1/cluster/transfer", http.StatusNotFound)
		}
	})
}

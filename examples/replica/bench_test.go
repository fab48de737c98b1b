package replica_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/replica"
	"github.com/ownership-book/ownership/examples/replica/replicatest"
)

// BenchmarkApply measures committed-and-applied commands per second: one
// proposer at a time (latency) and many at once (raft batches them into
// fewer log writes), on one or three voters, in memory or on disk.
//
//	go test -run '^$' -bench Apply ./examples/replica/
func BenchmarkApply(b *testing.B) {
	for _, bc := range []struct {
		name   string
		voters int
		disk   bool
	}{
		{"voters=1/mem", 1, false},
		{"voters=3/mem", 3, false},
		{"voters=1/disk", 1, true},
		{"voters=3/disk", 3, true},
	} {
		for _, parallel := range []bool{false, true} {
			name := bc.name + "/serial"
			if parallel {
				name = bc.name + "/parallel"
			}
			b.Run(name, func(b *testing.B) {
				// hashicorp/raft's default timing, as in production: a
				// slow fsync must not cost the leader its lease.
				opts := replicatest.Options{Voters: bc.voters, HeartbeatTimeout: time.Second,
					ElectionTimeout: time.Second, LeaderLeaseTimeout: 500 * time.Millisecond}
				if bc.disk {
					opts.Dir = b.TempDir()
				}
				c := replicatest.New(b, opts, func(string) replica.Machine { return &counter{} })
				ctx := context.Background()
				id, err := c.WaitLeader(ctx)
				if err != nil {
					b.Fatal(err)
				}
				g := c.Group(id)
				b.ResetTimer()
				if !parallel {
					for b.Loop() {
						if _, err := g.Apply(ctx, []byte("1")); err != nil {
							b.Fatal(err)
						}
					}
					return
				}
				var failed atomic.Int64
				b.SetParallelism(16)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := g.Apply(ctx, []byte("1")); err != nil {
							failed.Add(1)
						}
					}
				})
				if n := failed.Load(); n > 0 {
					b.Fatalf("%d of %d applies failed (leadership moved?)", n, b.N)
				}
			})
		}
	}
}

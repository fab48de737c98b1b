package replica_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ownership-book/ownership/examples/replica"
)

// counter is a Machine whose commands are decimal increments; Apply returns
// the new total.
type counter struct {
	mu    sync.Mutex
	total int
}

func (c *counter) Apply(cmd []byte) []byte {
	n, err := strconv.Atoi(string(cmd))
	if err != nil {
		return []byte("refused: " + err.Error()) // every voter refuses alike
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += n
	return []byte(strconv.Itoa(c.total))
}

func (c *counter) Snapshot() ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return []byte(strconv.Itoa(c.total)), nil
}

func (c *counter) Restore(b []byte) error {
	n, err := strconv.Atoi(string(b))
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total = n
	return nil
}

// One voter bootstraps a group of one, becomes its leader and applies
// commands; a linearizable read then sees them all.
func ExampleOpen() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, trans := raft.NewInmemTransport("A")
	m := &counter{}
	g, err := replica.Open(replica.Config{
		ID: "A", Transport: trans, Voters: []replica.Peer{{ID: "A", Address: "A"}},
		HeartbeatTimeout: 50 * time.Millisecond, ElectionTimeout: 50 * time.Millisecond,
		LeaderLeaseTimeout: 50 * time.Millisecond,
	}, m)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	leader, _ := g.WaitLeader(ctx)
	fmt.Println("leader:", leader)
	for _, cmd := range []string{"2", "3", "x"} {
		res, err := g.Apply(ctx, []byte(cmd))
		fmt.Printf("apply %s: %s %v\n", cmd, res, err)
	}
	if err := g.LeaderRead(ctx); err == nil {
		snap, _ := m.Snapshot()
		fmt.Println("read:", string(snap))
	}
	// Output:
	// leader: A
	// apply 2: 2 <nil>
	// apply 3: 5 <nil>
	// apply x: refused: strconv.Atoi: parsing "x": invalid syntax <nil>
	// read: 5
}

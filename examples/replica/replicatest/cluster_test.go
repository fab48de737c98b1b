package replicatest_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ownership-book/ownership/examples/replica"
	"github.com/ownership-book/ownership/examples/replica/replicatest"
)

type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) Apply([]byte) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return []byte(strconv.Itoa(c.n))
}
func (c *counter) Snapshot() ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return []byte(strconv.Itoa(c.n)), nil
}
func (c *counter) Restore(b []byte) error {
	n, err := strconv.Atoi(string(b))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n = n
	return err
}
func (c *counter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// A partition leaves the leader on the majority side (Raft §5.2: a leader
// needs a quorum); the minority voter catches up after Heal.
func TestPartitionMajorityKeepsLeader(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := replicatest.New(t, replicatest.Options{Voters: 5}, func(string) replica.Machine { return &counter{} })
	if got := c.IDs(); !slices.Equal(got, []string{"A", "B", "C", "D", "E"}) {
		t.Fatalf("IDs = %v", got)
	}
	c.Partition([]string{"A", "B"}, []string{"C", "D", "E"})
	for i := 0; i < 5; i++ {
		if _, err := c.Apply(ctx, []byte("inc")); err != nil {
			t.Fatal(err)
		}
	}
	leader, err := c.WaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if leader == "A" || leader == "B" {
		t.Fatalf("leader %s is on the minority side", leader)
	}
	for _, id := range []string{"A", "B"} {
		if n := c.Machine(id).(*counter).get(); n != 0 {
			t.Fatalf("minority voter %s applied %d commands during the partition", id, n)
		}
	}
	c.Heal()
	if err := c.WaitConverged(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range c.IDs() {
		if n := c.Machine(id).(*counter).get(); n != 5 {
			t.Errorf("voter %s counter = %d, want 5", id, n)
		}
	}
}

func TestKillRestartErrors(t *testing.T) {
	c := replicatest.New(t, replicatest.Options{Voters: 1}, func(string) replica.Machine { return &counter{} })
	if err := c.Kill("Z"); !errors.Is(err, replicatest.ErrUnknownVoter) {
		t.Errorf("Kill(Z): err = %v, want ErrUnknownVoter", err)
	}
	if err := c.Restart("A"); err == nil {
		t.Error("Restart of a running voter: no error")
	}
	if err := c.Kill("A"); err != nil {
		t.Fatal(err)
	}
	if c.Group("A") != nil || len(c.Running()) != 0 {
		t.Error("killed voter still running")
	}
	if err := c.Restart("A"); err != nil {
		t.Fatal(err)
	}
	if c.Group("A") == nil {
		t.Error("restarted voter has no Group")
	}
}

package replicatest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ownership-book/ownership/examples/replica"
	"github.com/ownership-book/ownership/examples/replica/replicatest"
)

// Kill the leader of three voters: the two left elect a new one, which holds
// every acknowledged command; the old leader, restarted, catches up.
func ExampleCluster() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// In a test, replicatest.New(t, …) also closes the cluster at the end.
	c, err := replicatest.Start(replicatest.Options{Voters: 3}, func(string) replica.Machine { return &counter{} })
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	for range 3 {
		if _, err := c.Apply(ctx, []byte("inc")); err != nil {
			fmt.Println(err)
			return
		}
	}
	old, _ := c.WaitLeader(ctx)
	c.Kill(old)
	next, m, err := c.LeaderRead(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("new leader differs:", next != old)
	fmt.Println("new leader's counter:", m.(*counter).get())
	c.Restart(old)
	c.WaitConverged(ctx)
	fmt.Println("restarted voter's counter:", c.Machine(old).(*counter).get())
	// Output:
	// new leader differs: true
	// new leader's counter: 3
	// restarted voter's counter: 3
}

package replica

import (
	"context"
	"errors"
	"testing"

	"github.com/hashicorp/raft"
)

type errFuture struct{ err error }

func (f errFuture) Error() error { return f.err }

// TestTransferIsNotNotLeader: while a leader hands over its leadership,
// hashicorp/raft refuses proposals with ErrLeadershipTransferInProgress.
// That is "retry in a moment", not "go to the leader": the voter still names
// itself as leader, so a NotLeaderError would send the client back to it.
// Reference: hashicorp/raft LeadershipTransfer; Ongaro's dissertation §3.10.
func TestTransferIsNotNotLeader(t *testing.T) {
	g := &Group{id: "A"}
	err := g.wait(context.Background(), errFuture{raft.ErrLeadershipTransferInProgress})
	if !errors.Is(err, ErrLeadershipTransfer) {
		t.Fatalf("transfer in progress: %v, want ErrLeadershipTransfer", err)
	}
	if errors.Is(err, ErrNotLeader) || errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("transfer in progress: %v matches ErrNotLeader or ErrOutcomeUnknown; nothing was proposed and the leader is not elsewhere yet", err)
	}
}

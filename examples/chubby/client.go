package chubby

import "time"

// LeaseState is what a client knows about its own session.
type LeaseState int

const (
	// LeaseValid: the local lease has not run out; the session is live.
	LeaseValid LeaseState = iota + 1
	// LeaseJeopardy: the local lease has run out and the grace period has
	// not; the client cannot tell whether the master has ended the session.
	LeaseJeopardy
	// LeaseExpired: the grace period has run out too; the client gives the
	// session up.
	LeaseExpired
)

func (s LeaseState) String() string {
	switch s {
	case LeaseValid:
		return "valid"
	case LeaseJeopardy:
		return "jeopardy"
	case LeaseExpired:
		return "expired"
	}
	return "unknown"
}

// ClientLease is a client's own, conservative view of its session lease
// (Burrows 2006, section 2.8). The client cannot know when the master
// computed the timeout it sends back, so it counts the lease from the moment
// it sent the KeepAlive: Timeout = sent + Lease is never later than the
// master's timeout when both clocks run at the same rate. When Timeout
// passes, the session is in jeopardy for Grace more; after that the client
// treats it as expired.
type ClientLease struct {
	Lease   time.Duration // the extension the master grants (Config.Lease)
	Grace   time.Duration // the grace period (DefaultGracePeriod)
	Timeout time.Duration // the local lease timeout
}

// Renewed records a successful KeepAlive that the client sent at sent.
func (l *ClientLease) Renewed(sent time.Duration) {
	l.Timeout = max(l.Timeout, sent+l.Lease)
}

// State returns the client's view of its session at now.
func (l ClientLease) State(now time.Duration) LeaseState {
	switch {
	case now < l.Timeout:
		return LeaseValid
	case now < l.Timeout+l.Grace:
		return LeaseJeopardy
	}
	return LeaseExpired
}

// Package service runs the ownership state machine (package ownership) as a
// network service over HTTPS. Two properties set it apart from a registry
// that lives in one process's memory:
//
//   - The caller is learned from the connection. The service speaks HTTPS with
//     mutual TLS; every node has a certificate naming it, issued by an
//     Authority generated at start-up, and the roster of node names is fixed
//     when the Server is built. A request's caller is the name in the
//     verified client certificate. No method takes a node name, and a
//     certificate that is not on the roster is refused during the TLS
//     handshake, before any method runs. Certificates have one role each:
//     a node's (Issue) only calls, a voter's server certificate
//     (IssueServer) only serves, and a voter's peer certificate (IssuePeer)
//     only speaks Raft to other voters (RaftTransport), so none can stand in
//     for another.
//   - Epochs never run backwards across restarts. A LocalRegistry keeps a
//     durable, monotone epoch Floor on disk and fsyncs each new epoch there
//     before any state carrying it can be read; it forgets who owned what,
//     and recreates an actor above its floor. A RaftRegistry keeps the whole
//     owner record: each transition is one Raft log entry, applied on every
//     voter once a quorum has stored it, so the log itself is the floor.
//
// The wire methods are the node-facing transitions (BeginTransfer,
// CompleteRelease, Acquire), a state read and a fencing-token check. The
// coordinator's transitions (Create, Abort, Revoke) are methods of Server in
// the same process, never routes.
//
// Store is a resource server in the manner of Chubby's sequencer check
// (Burrows, "The Chubby lock service for loosely-coupled distributed systems",
// OSDI 2006, section 2.4): a key-value store that accepts a write only with a
// token that passes the ownership service's fence check.
//
// Reference: chapter "The ownership service".
package service

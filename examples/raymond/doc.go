// Package raymond is Kerry Raymond's tree-based algorithm for distributed
// mutual exclusion (Kerry Raymond, "A Tree-Based Algorithm for Distributed
// Mutual Exclusion", ACM Transactions on Computer Systems 7(1), 1989) as a
// pure state machine, with a seeded simulator, the paper's invariants as
// checks, and a breadth-first search that finds the shortest run breaking
// them when the network duplicates or loses messages.
//
// This folder is a library. Its programs are examples/raymond/msgcount (the
// message-count tables), examples/raymond/nemesis (the negative controls) and
// examples/raymond/tree (the figure of a request being served).
//
// The core is in the style of etcd's raft package: Step takes one node's
// state and one event and returns the new state and the messages to send. It
// has no clock, no network and no goroutines; the simulator (Sim) and the
// search (Search) are the world around it. The names are the paper's: each
// node keeps HOLDER (Node.Holder), USING (Node.Using), REQUEST_Q
// (Node.RequestQ) and ASKED (Node.Asked); the messages are REQUEST and
// PRIVILEGE; and every event ends with the paper's two procedures,
// ASSIGN_PRIVILEGE and MAKE_REQUEST.
package raymond

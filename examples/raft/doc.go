// Package raft is a small pure model of Raft's election and commit rules,
// written for the book's Raft chapter to make the paper's rules executable:
// it is a library for teaching and checking, not a consensus engine (the
// book's services run on hashicorp/raft).
//
// The rules come from Diego Ongaro and John Ousterhout, "In Search of an
// Understandable Consensus Algorithm (Extended Version)", 2014, cited as
// "Raft §n". A Node is one server in the shape of etcd's raft package:
// messages in (Step), messages out, elections started by the caller
// (Campaign), no clock, no network, no goroutines. A Cluster joins Nodes
// with a network that loses and reorders messages, runs seeded random
// schedules (RunRandom) or every schedule up to small bounds (Explore), and
// checks the five properties of the paper's Figure 3 after every step
// (Checker). A Fault switches one rule off, for negative controls: the
// checks must then find a violation.
//
// Elect measures elections in simulated time (Raft §9.3), and Figure8
// replays the paper's Figure 8 with and without the rule of §5.4.2.
package raft

// Package check is an explicit-state model checker of the ownership protocol
// of package ownership: every interleaving of a few nodes, the owner record,
// a coordinator, a faulty network and two resource servers, explored breadth
// first up to chosen bounds, with the protocol's safety properties checked
// in every reachable state and on every transition.
//
// The model is of package ownership, not a copy of it: the record is an
// *ownership.Actor, requests are ownership.Commands applied with
// Actor.Apply, authority is Actor.MayMutate and the record-checking server
// calls ownership.ValidFence. Only a Mutation replaces one of those pieces,
// to show that the checker catches the bug it introduces.
//
// What is modelled (chapter "Ownership: epochs and fencing", section
// "Checked exhaustively"):
//
//   - the record: one actor, created Owned(A, 41), and its durable epoch
//     floor (the highest epoch ever burnt, as in the ownership service);
//   - each node's view: the token it holds (kept on disk, so it survives a
//     crash), a crashed flag, and its pending requests, the messages it has
//     in flight. A node reads the record and sends the request its role
//     calls for in one step, stamped with the epoch it read; a read acted
//     on later is a request the network delays;
//   - a bounded network: a multiset of requests (node to record) that
//     delivers them in any order (reordering is not budgeted: any order is
//     allowed) and, within budgets, duplicates and loses them. Writes go to
//     the servers directly; a delayed write is a node that writes later
//     with the token it kept;
//   - a coordinator that may Abort a transfer, Revoke to any node (a healthy
//     owner included) or restart the record (which forgets the actor and
//     re-creates it above its floor) at any moment, within a budget of
//     interruptions;
//   - two resource servers: one keeps only the highest epoch it has seen
//     (ownership.HighestSeen), the other checks each write against the
//     record (ownership.ValidFence).
package check

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ownership-book/ownership/examples/ownership"
)

// The model's constants: the actor's name, its first epoch (the chapter's
// running example) and the floor below it.
const (
	actorID    ownership.ActorID = "doc"
	firstEpoch ownership.Epoch   = 41
	firstFloor                   = firstEpoch - 1
	maxNodes                     = 3
	maxEpochs                    = 8 // epochs firstEpoch .. firstEpoch+maxEpochs-1 fit in the ghost arrays
)

// nodeNames are the nodes' names, by index.
var nodeNames = [maxNodes]ownership.NodeID{"A", "B", "C"}

// Server indexes.
const (
	highest  = 0 // keeps only the highest epoch it has seen
	checking = 1 // checks each write against the record
)

var serverNames = [2]string{"highest-epoch server", "record-checking server"}

// Bounds are the limits of one exhaustive run. The zero value of a budget
// allows none of that fault.
type Bounds struct {
	Nodes      int // 2 or 3
	Epochs     int // how many epochs after the first may be allocated (1..maxEpochs-1)
	Dup        int // messages the network may duplicate
	Loss       int // messages the network may lose
	Interrupts int // coordinator interventions: Abort, Revoke, record restart
	Crashes    int // node crashes
	InFlight   int // messages in the network at once
	// InOrder makes the network deliver requests in the order they were
	// sent, except for Reorder deliveries of a message ahead of an older
	// one. Without it any order is allowed.
	InOrder  bool
	Reorder  int
	Symmetry bool
}

// Mutation names a deliberate bug, or none.
type Mutation int

// The mutations. Each replaces one mechanism of the protocol.
const (
	Real Mutation = iota
	// EpochAtAcquire: the epoch the record fences with moves when the new
	// owner acquires, not when the handover begins (and not on Abort or
	// Revoke either).
	EpochAtAcquire
	// AbortToOldOwner: Abort hands the actor back to the outgoing owner at
	// its old epoch, Owned(From, OldEpoch), so its old token works again.
	AbortToOldOwner
	// AbortWithoutBurn: Abort allocates its epoch but does not burn it in
	// the durable floor before the state is visible.
	AbortWithoutBurn
	// FenceEquals: both servers accept a write only at exactly the epoch
	// they compare with (== instead of >=).
	FenceEquals
	// VolatileFloor: the epoch floor is kept in memory, so a record restart
	// re-creates the actor at its first epoch.
	VolatileFloor
	// NoRequestEpochs: the record ignores the epoch a request was issued at
	// (it applies a request whenever the state machine allows it).
	NoRequestEpochs
	// AbortReusesEpoch: Abort gives Unowned(NewEpoch, From), spending no
	// epoch of its own. Not in Mutations: see TestAbortReusingTheEpoch.
	AbortReusesEpoch
	numMutations
)

// Mutations lists every mutation except Real, in table order.
var Mutations = []Mutation{EpochAtAcquire, AbortToOldOwner, AbortWithoutBurn, FenceEquals, VolatileFloor, NoRequestEpochs}

func (m Mutation) String() string {
	return [...]string{
		"real model",
		"epoch allocated at Acquire",
		"Abort returns to the old owner",
		"Abort not raising the floor",
		"ValidFence with ==",
		"floor not durable",
		"requests without epochs",
		"Abort reusing the transfer's epoch",
	}[m]
}

// Property names a safety property the checker verifies.
type Property int

// The properties. The first six are the ownership invariants; the last
// three are about the resource servers.
const (
	OneMutator       Property = iota // at most one node may mutate; each server applies each epoch's writes from one node
	EpochsNeverFall                  // the current epoch never decreases
	OneOwnerPerEpoch                 // an epoch is owned by one node, ever
	StaleInert                       // a token below the current epoch neither may mutate nor passes ValidFence
	RefusalInert                     // a refused request changes nothing
	RequestEpoch                     // a request issued at epoch e has no effect once the current epoch is past e
	ServerOrder                      // no server applies a write at e after one at e' > e
	CheckingCurrent                  // the record-checking server applies no write below the record's current epoch
	OwnerAccepted                    // a write whose token may mutate on arrival is applied
	numProperties
)

func (p Property) String() string {
	return [...]string{
		"at most one node may mutate",
		"epochs never fall",
		"one owner per epoch",
		"stale tokens inert",
		"a refusal changes nothing",
		"no effect once the epoch is past",
		"writes applied in epoch order",
		"record-checking server admits no fenced write",
		"the owner's writes are applied",
	}[p]
}

// msgKind tells requests from writes.
type msgKind uint8

const (
	request msgKind = iota
	write
)

// msg is a request in flight (a Command from node from to the record) or a
// write (the epoch of from's token, to server; writes are not put in the
// network, see successors).
type msg struct {
	kind   msgKind
	from   int8
	server int8
	epoch  ownership.Epoch   // a write's token epoch
	cmd    ownership.Command // a request
}

func (m msg) String() string {
	if m.kind == request {
		return m.cmd.String()
	}
	return fmt.Sprintf("write %s@%d to the %s", nodeNames[m.from], m.epoch, serverNames[m.server])
}

// node is one node's view: the token it holds and whether it is down. Its
// pending requests are its messages in the network; what it last read of
// the record is the epoch those requests carry.
type node struct {
	token   ownership.Epoch // epoch of the token it holds (on disk, so it survives a crash); 0 if none
	crashed bool
}

// server is a resource server: the highest epoch it has applied a write at
// (for the highest-epoch server also the highest it has seen, since it
// accepts exactly the writes at or above it). Which node wrote at an epoch
// needs no memory of its own: the ghost ownerAt says who owned it.
type server struct {
	max ownership.Epoch
}

// State is one global state of the model.
type State struct {
	rec     *ownership.Actor
	floor   ownership.Epoch // durable highest epoch ever burnt
	nodes   [maxNodes]node
	net     []msg
	srv     [2]server
	ownerAt [maxEpochs]int8 // ghost: node index + 1 that ever owned each epoch
	dup     uint8           // budgets used
	loss    uint8
	intr    uint8
	crashes uint8
	reord   uint8
}

func slot(e ownership.Epoch) int { return int(e - firstEpoch) }

func (s *State) clone() *State {
	c := *s
	c.rec = s.rec.Clone()
	c.net = append([]msg(nil), s.net...)
	return &c
}

// initial is Owned(A, 41), with A holding its token and knowing it.
func initial() *State {
	rec, err := ownership.NewActor(actorID, ownership.Owned{Owner: nodeNames[0], Epoch: firstEpoch})
	if err != nil {
		panic(err)
	}
	s := &State{rec: rec, floor: firstEpoch}
	// Both servers were set up with the actor at epoch 41.
	s.srv[highest].max, s.srv[checking].max = firstEpoch, firstEpoch
	s.nodes[0] = node{token: firstEpoch}
	s.ownerAt[slot(firstEpoch)] = 1
	return s
}

// Violation is a property broken by a transition or in a state.
type Violation struct {
	Property Property
	Detail   string
}

// action is one step of the model, as data: kind, the node or message it
// concerns, and an argument (a target node, a server).
type action struct {
	kind actionKind
	node int8 // acting node, or -1
	arg  int8 // target node or server
	msg  int  // index into net for deliver, duplicate, lose
}

type actionKind uint8

const (
	actObserve actionKind = iota
	actRequest
	actWrite
	actCrash
	actRestart
	actAbort
	actRevoke
	actRecordRestart
	actDeliver
	actDuplicate
	actLose
)

// model is a Bounds and a Mutation: the transition relation.
type model struct {
	b   Bounds
	mut Mutation
}

func (m *model) maxEpoch() ownership.Epoch { return firstEpoch + ownership.Epoch(m.b.Epochs) }

// step is one successor: the action, the state it leads to, and the first
// property the transition broke, if any.
type step struct {
	act  action
	next *State
	bad  *Violation
	// note is set when the highest-epoch server applied a write below the
	// record's current epoch: allowed for it, and the contrast the chapter
	// draws with the record-checking server.
	note bool
}

// successors returns every step enabled in s.
func (m *model) successors(s *State) []step {
	var out []step
	add := func(a action, next *State, bad *Violation, note bool) {
		out = append(out, step{act: a, next: next, bad: bad, note: note})
	}
	cur := s.rec.CurrentEpoch()
	n := m.b.Nodes
	for i := 0; i < n; i++ {
		nd := s.nodes[i]
		if nd.crashed {
			c := s.clone()
			c.nodes[i].crashed = false
			add(action{kind: actRestart, node: int8(i)}, c, nil, false)
			continue
		}
		// Read the record. The owner takes its token; a node the record
		// gives a role (outgoing owner, intended owner, owner) sends the
		// request for the next step, stamped with the epoch it read. Reading
		// and sending are one step: a read acted on later is the same as a
		// request the network delays, which the network does.
		if isOwner(s.rec.State(), i) && nd.token != cur {
			c := s.clone()
			c.nodes[i].token = cur
			add(action{kind: actObserve, node: int8(i)}, c, nil, false)
		}
		for _, cmd := range requestsFor(s.rec.State(), i, n) {
			mm := msg{kind: request, from: int8(i), cmd: cmd}
			if c := s.send(m, mm); c != nil {
				add(action{kind: actRequest, node: int8(i), arg: int8(indexOf(cmd.To))}, c, nil, false)
			}
		}
		// Writes go straight to the server: a write delayed in the network
		// is the same as a node that pauses with its token and writes later,
		// which the interleavings already contain, and a lost or duplicated
		// write is one not made or made twice.
		if nd.token != 0 {
			for sv := int8(0); sv < 2; sv++ {
				c := s.clone()
				bad, note := m.deliverWrite(c, msg{kind: write, from: int8(i), server: sv, epoch: nd.token})
				if bad == nil && !note && c.srv == s.srv {
					continue // changes nothing: a self-loop
				}
				add(action{kind: actWrite, node: int8(i), arg: sv}, c, bad, note)
			}
		}
		if int(s.crashes) < m.b.Crashes {
			c := s.clone()
			c.crashes++
			c.nodes[i].crashed = true
			add(action{kind: actCrash, node: int8(i)}, c, nil, false)
		}
	}
	// The coordinator.
	if int(s.intr) < m.b.Interrupts && cur < m.maxEpoch() {
		if _, ok := s.rec.State().(ownership.Transferring); ok {
			c := s.clone()
			c.intr++
			bad := m.abort(c)
			add(action{kind: actAbort, node: -1}, c, orCheck(bad, m.checkEpochs(s, c)), false)
		}
		for j := 0; j < n; j++ {
			c := s.clone()
			c.intr++
			if _, err := c.rec.Apply(ownership.Command{Op: ownership.OpRevoke, To: nodeNames[j], Epoch: cur}); err != nil {
				panic(err)
			}
			m.burn(c, c.rec.CurrentEpoch())
			add(action{kind: actRevoke, node: -1, arg: int8(j)}, c, m.checkEpochs(s, c), false)
		}
	}
	if int(s.intr) < m.b.Interrupts && s.floor < m.maxEpoch() {
		for j := 0; j < n; j++ {
			c := s.clone()
			c.intr++
			m.restartRecord(c, j)
			add(action{kind: actRecordRestart, node: -1, arg: int8(j)}, c, m.checkEpochs(s, c), false)
		}
	}
	// The network.
	for k, mm := range s.net {
		if k > 0 && s.net[k-1] == mm {
			continue // identical copies: one representative
		}
		overtakes := m.b.InOrder && k > 0 // delivered ahead of an older message
		if overtakes && int(s.reord) >= m.b.Reorder {
			continue
		}
		c := s.clone()
		if overtakes {
			c.reord++
		}
		c.net = append(c.net[:k], c.net[k+1:]...)
		if bad, note, ok := m.deliver(s, c, mm); ok {
			add(action{kind: actDeliver, node: -1, msg: k}, c, bad, note)
		}
		if int(s.dup) < m.b.Dup && len(s.net) < m.b.InFlight {
			c := s.clone()
			c.dup++
			c.net = m.enqueue(c.net, mm)
			add(action{kind: actDuplicate, node: -1, msg: k}, c, nil, false)
		}
		if int(s.loss) < m.b.Loss {
			c := s.clone()
			c.loss++
			c.net = append(c.net[:k], c.net[k+1:]...)
			add(action{kind: actLose, node: -1, msg: k}, c, nil, false)
		}
	}
	return out
}

func orCheck(a, b *Violation) *Violation {
	if a != nil {
		return a
	}
	return b
}

func isOwner(s ownership.State, i int) bool {
	o, ok := s.(ownership.Owned)
	return ok && o.Owner == nodeNames[i]
}

func indexOf(n ownership.NodeID) int {
	for i, x := range nodeNames {
		if x == n {
			return i
		}
	}
	return -1
}

// requestsFor is what node i asks of the record when it reads view: the
// next step of a handover in its role, stamped with the view's current
// epoch.
func requestsFor(view ownership.State, i, n int) []ownership.Command {
	me := nodeNames[i]
	switch v := view.(type) {
	case ownership.Owned:
		if v.Owner != me {
			return nil
		}
		var out []ownership.Command
		for j := 0; j < n; j++ {
			if j != i {
				out = append(out, ownership.Command{Op: ownership.OpBeginTransfer, Caller: me, To: nodeNames[j], Epoch: v.Epoch})
			}
		}
		return out
	case ownership.Transferring:
		if v.From == me {
			return []ownership.Command{{Op: ownership.OpCompleteRelease, Caller: me, Epoch: v.NewEpoch}}
		}
	case ownership.Unowned:
		if v.IntendedOwner == me {
			return []ownership.Command{{Op: ownership.OpAcquire, Caller: me, Epoch: v.Epoch}}
		}
	}
	return nil
}

// send returns s with mm in flight, or nil if the network is full or the
// same message is already in flight (a second copy is the duplication
// budget's to make).
func (s *State) send(m *model, mm msg) *State {
	if len(s.net) >= m.b.InFlight {
		return nil
	}
	for _, x := range s.net {
		if x == mm {
			return nil
		}
	}
	c := s.clone()
	c.net = m.enqueue(c.net, mm)
	return c
}

// enqueue adds mm to the network: at the end when it keeps send order, in
// the canonical (sorted) place when it is a multiset.
func (m *model) enqueue(net []msg, mm msg) []msg {
	if m.b.InOrder {
		return append(net, mm)
	}
	return insertSorted(net, mm)
}

// insertSorted keeps the network in a canonical order: it is a multiset,
// and any message may be delivered next.
func insertSorted(net []msg, mm msg) []msg {
	i := len(net)
	for i > 0 && msgLess(mm, net[i-1]) {
		i--
	}
	net = append(net, msg{})
	copy(net[i+1:], net[i:])
	net[i] = mm
	return net
}

func msgLess(a, b msg) bool {
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	if a.from != b.from {
		return a.from < b.from
	}
	if a.server != b.server {
		return a.server < b.server
	}
	if a.epoch != b.epoch {
		return a.epoch < b.epoch
	}
	if a.cmd.Op != b.cmd.Op {
		return a.cmd.Op < b.cmd.Op
	}
	if a.cmd.To != b.cmd.To {
		return a.cmd.To < b.cmd.To
	}
	return a.cmd.Epoch < b.cmd.Epoch
}

// burn raises the durable floor to e: the service writes every allocated
// epoch down before the state that uses it is visible, which the model
// makes one atomic step.
func (m *model) burn(s *State, e ownership.Epoch) {
	if e > s.floor {
		s.floor = e
	}
}

// abort applies the coordinator's Abort to s, or the mutant's version.
func (m *model) abort(s *State) *Violation {
	cur := s.rec.CurrentEpoch()
	switch m.mut {
	case AbortToOldOwner:
		t := s.rec.State().(ownership.Transferring)
		s.rec = rebuild(s.rec, ownership.Owned{Owner: t.From, Epoch: t.OldEpoch})
		return nil
	case AbortReusesEpoch:
		t := s.rec.State().(ownership.Transferring)
		s.rec = rebuild(s.rec, ownership.Unowned{Epoch: t.NewEpoch, IntendedOwner: t.From})
		return nil
	case AbortWithoutBurn:
		if _, err := s.rec.Apply(ownership.Command{Op: ownership.OpAbort, Epoch: cur}); err != nil {
			panic(err)
		}
		return nil // the floor is not raised
	}
	if _, err := s.rec.Apply(ownership.Command{Op: ownership.OpAbort, Epoch: cur}); err != nil {
		panic(err)
	}
	m.burn(s, s.rec.CurrentEpoch())
	return nil
}

// rebuild returns an actor in state st with a's issued tokens, through the
// package's own decoder (which checks the shape rules). Only mutants use it.
func rebuild(a *ownership.Actor, st ownership.State) *ownership.Actor {
	b, err := a.MarshalBinary()
	if err != nil {
		panic(err)
	}
	var w map[string]json.RawMessage
	if err := json.Unmarshal(b, &w); err != nil {
		panic(err)
	}
	tmp, err := ownership.NewActor(a.ID(), st)
	if err != nil {
		panic(err)
	}
	tb, err := tmp.MarshalBinary()
	if err != nil {
		panic(err)
	}
	var tw map[string]json.RawMessage
	if err := json.Unmarshal(tb, &tw); err != nil {
		panic(err)
	}
	w["state"] = tw["state"]
	out, err := json.Marshal(w)
	if err != nil {
		panic(err)
	}
	var r ownership.Actor
	if err := r.UnmarshalBinary(out); err != nil {
		panic(fmt.Sprintf("rebuild %v: %v", st, err))
	}
	return &r
}

// restartRecord models the registry losing its in-memory record: the actor
// is created again, Unowned above the durable floor, with node j as its
// intended owner. With VolatileFloor the floor is lost too.
func (m *model) restartRecord(s *State, j int) {
	if m.mut == VolatileFloor {
		s.floor = firstFloor
	}
	e := s.floor + 1
	rec, err := ownership.NewActor(actorID, ownership.Unowned{Epoch: e, IntendedOwner: nodeNames[j]})
	if err != nil {
		panic(err)
	}
	s.rec = rec
	m.burn(s, e)
}

// checkEpochs checks what every transition must keep: the current epoch
// does not fall.
func (m *model) checkEpochs(before, after *State) *Violation {
	b, a := before.rec.CurrentEpoch(), after.rec.CurrentEpoch()
	if a < b {
		return &Violation{EpochsNeverFall, fmt.Sprintf("the current epoch fell from %d to %d", b, a)}
	}
	return nil
}

// deliver applies request mm, already removed from c.net, to c. It
// reports false when the delivery would allocate an epoch beyond the bound
// (the run is cut there). Requests never set the contrast note.
func (m *model) deliver(s, c *State, mm msg) (*Violation, bool, bool) {
	bad := m.deliverRequest(s, c, mm)
	if c.rec.CurrentEpoch() > m.maxEpoch() {
		return nil, false, false
	}
	return bad, false, true
}

func (m *model) deliverRequest(s, c *State, mm msg) *Violation {
	cmd := mm.cmd
	if m.mut == NoRequestEpochs {
		cmd.Epoch = c.rec.CurrentEpoch()
	}
	beforeState, beforeIssued := c.rec.State(), c.rec.Issued()
	cur := c.rec.CurrentEpoch()
	if _, err := c.rec.Apply(cmd); err != nil {
		if c.rec.State() != beforeState || !slices.Equal(c.rec.Issued(), beforeIssued) {
			return &Violation{RefusalInert, fmt.Sprintf("refused %v (%v) changed the record", mm.cmd, err)}
		}
		return nil
	}
	// The transition took effect: finish it (burn the floor, record the
	// owner) before reporting anything, so that a search that goes on past
	// a violation it is not looking for (run's accept) goes on from the
	// state the record really reached. The first violation is reported.
	var bad *Violation
	if mm.cmd.Epoch < cur {
		bad = &Violation{RequestEpoch, fmt.Sprintf("%v, issued at %d, took effect at %d", mm.cmd, mm.cmd.Epoch, cur)}
	}
	if mm.cmd.Op != ownership.OpCompleteRelease && mm.cmd.Op != ownership.OpAcquire {
		m.burn(c, c.rec.CurrentEpoch())
	}
	if o, ok := c.rec.State().(ownership.Owned); ok && mm.cmd.Op == ownership.OpAcquire {
		k := slot(o.Epoch)
		who := int8(indexOf(o.Owner) + 1)
		if prev := c.ownerAt[k]; prev != 0 && prev != who {
			if bad == nil {
				bad = &Violation{OneOwnerPerEpoch, fmt.Sprintf("epoch %d owned by %s and then by %s", o.Epoch, nodeNames[prev-1], o.Owner)}
			}
		} else {
			c.ownerAt[k] = who
		}
	}
	if v := m.checkEpochs(s, c); bad == nil {
		bad = v
	}
	return bad
}

// passes is the servers' comparison: ValidFence's >=, or the mutant's ==.
func (m *model) passes(e, against ownership.Epoch) bool {
	if m.mut == FenceEquals {
		return e == against
	}
	return e >= against
}

// fenceEpoch is the epoch the record-checking server compares with: the
// record's current epoch, or with EpochAtAcquire the epoch of the last
// acquisition.
func (m *model) fenceEpoch(st ownership.State) ownership.Epoch {
	if m.mut != EpochAtAcquire {
		return ownership.CurrentEpoch(st)
	}
	switch v := st.(type) {
	case ownership.Owned:
		return v.Epoch
	case ownership.Transferring:
		return v.OldEpoch
	case ownership.Unowned:
		return v.Epoch - 1
	}
	return 0
}

func (m *model) deliverWrite(c *State, mm msg) (*Violation, bool) {
	sv := &c.srv[mm.server]
	e := mm.epoch
	var ok bool
	switch {
	case m.mut == FenceEquals && mm.server == highest:
		ok = m.passes(e, sv.max)
	case mm.server == highest:
		h := ownership.HighestSeen{Highest: sv.max} // the package's own server
		ok = h.Admit(e) == nil
	case m.mut == EpochAtAcquire || m.mut == FenceEquals:
		ok = m.passes(e, m.fenceEpoch(c.rec.State()))
	default:
		ok = ownership.ValidFence(c.rec.State(), e) // the package's own check
	}
	tok := ownership.Token{Actor: actorID, Epoch: e, Holder: nodeNames[mm.from]}
	if !ok {
		if c.rec.MayMutate(tok) {
			return &Violation{OwnerAccepted, fmt.Sprintf("the %s refused %v, which may mutate", serverNames[mm.server], tok)}, false
		}
		return nil, false
	}
	cur := c.rec.CurrentEpoch()
	note := false
	if e < cur {
		if mm.server == checking {
			return &Violation{CheckingCurrent, fmt.Sprintf("the %s applied %s@%d with the record at %d", serverNames[checking], nodeNames[mm.from], e, cur)}, false
		}
		note = true
	}
	if e < sv.max {
		return &Violation{ServerOrder, fmt.Sprintf("the %s applied a write at %d after one at %d", serverNames[mm.server], e, sv.max)}, note
	}
	// One writer per epoch: a write at e must come from the node that owned
	// e (a token is only ever taken from the record by its owner).
	if owner := c.ownerAt[slot(e)]; owner != mm.from+1 {
		return &Violation{OneMutator, fmt.Sprintf("the %s applied a write at epoch %d from %s, which never owned it", serverNames[mm.server], e, nodeNames[mm.from])}, note
	}
	sv.max = e
	return nil, note
}

// checkState checks the invariants of one state.
func (m *model) checkState(s *State) *Violation {
	cur := s.rec.CurrentEpoch()
	mutators := 0
	for i := 0; i < m.b.Nodes; i++ {
		e := s.nodes[i].token
		if e == 0 {
			continue
		}
		tok := ownership.Token{Actor: actorID, Epoch: e, Holder: nodeNames[i]}
		if s.rec.MayMutate(tok) {
			mutators++
		}
		if e < cur && (s.rec.MayMutate(tok) || ownership.ValidFence(s.rec.State(), e)) {
			return &Violation{StaleInert, fmt.Sprintf("%v below the current epoch %d still counts", tok, cur)}
		}
	}
	if mutators > 1 {
		return &Violation{OneMutator, fmt.Sprintf("%d nodes may mutate in %v", mutators, s.rec.State())}
	}
	return nil
}

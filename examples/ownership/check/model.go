// Package check is an explicit-state model checker of the ownership protocol
// of package ownership: every interleaving of a few nodes, the owner record,
// a coordinator, a faulty network and two resource servers, explored breadth
// first up to chosen bounds, with the protocol's safety properties checked
// in every reachable state and on every transition.
//
// The model is of package ownership, not a copy of it: the record is an
// *ownership.Actor, requests are ownership.Commands applied with
// Actor.Apply, authority is Actor.MayMutate, the highest-epoch server is an
// ownership.HighestSeen and the record-checking server calls
// ownership.ValidFence. Only a Mutation replaces one of those pieces, to
// show whether the checker catches the bug it introduces.
//
// What is modelled (chapter "One owner at a time", section
// "Checked exhaustively"):
//
//   - the record: one actor, created Owned(A, 41), and its durable epoch
//     floor (the highest epoch ever written down, as in the ownership
//     service);
//   - each node's view: the token it holds (kept on disk, so it survives a
//     crash) and a crashed flag. A node reads the record and sends the
//     request its role calls for in one step, stamped with the epoch it
//     read; a read acted on later is a request the network delays. Within a
//     budget (Bounds.Rogue) a node also sends a request its role does not
//     call for (a confused or misinformed node), which the record must
//     refuse. The outgoing owner of a handover sends the incoming node a
//     grant naming the new epoch; a node that receives a grant passing
//     ValidFence asks to acquire at its epoch. A node holding a token sends
//     writes stamped with it to either server;
//   - a bounded network of messages: node requests, the coordinator's
//     commands, grants and writes, delivered in any order (or in send
//     order with a budget of overtakes) and, within budgets, duplicated
//     and lost;
//   - a coordinator that may send Abort or Revoke (to any node, a healthy
//     owner included) stamped with the epoch it read, or restart the record
//     (which forgets the actor and re-creates it above its floor), within a
//     budget of interruptions;
//   - two resource servers: one keeps only the highest epoch it has seen
//     (ownership.HighestSeen, kept in the state), the other checks each
//     write against the record (ownership.ValidFence);
//   - ghosts: who owned each epoch, whom each epoch was allocated for, and
//     every request ever issued, for the properties.
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
	Rogue      int // requests sent by a node the record gives no role in them
	InFlight   int // messages in the network at once
	// InOrder makes the network deliver messages in the order they were
	// sent, except for Reorder deliveries of a message ahead of an older
	// one. Without it any order is allowed.
	InOrder  bool
	Reorder  int
	Symmetry bool
}

// Mutation names a deliberate bug, or none.
type Mutation int

// The mutations. Each replaces one rule of the protocol.
const (
	Real Mutation = iota
	// EpochAtAcquire: the record-checking server compares with the epoch
	// of the last acquisition, as if the epoch moved when the new owner
	// acquires, not when the handover begins (or on Abort or Revoke).
	EpochAtAcquire
	// AbortToOldOwner: Abort hands the actor back to the outgoing owner at
	// its old epoch, Owned(From, OldEpoch), so its old token works again.
	AbortToOldOwner
	// AbortOwnedNewEpoch: Abort makes the outgoing owner the owner at the
	// transfer's new epoch, Owned(From, NewEpoch), without an Acquire.
	AbortOwnedNewEpoch
	// AbortReusesEpoch: Abort gives Unowned(NewEpoch, From), spending no
	// epoch of its own.
	AbortReusesEpoch
	// AbortWithoutFloor: Abort allocates its epoch but does not write it
	// to the durable floor before the state is visible.
	AbortWithoutFloor
	// FenceEquals: ValidFence, at the record-checking server, passes only
	// the current epoch itself (== instead of >=).
	FenceEquals
	// HighestEquals: HighestSeen admits only the highest epoch it has
	// seen itself (== instead of >=).
	HighestEquals
	// HighestForgets: HighestSeen admits as before but does not raise its
	// highest epoch to the one it admitted.
	HighestForgets
	// VolatileFloor: the epoch floor is kept in memory, so a record restart
	// re-creates the actor at its first epoch.
	VolatileFloor
	// NoRequestEpochs: Apply ignores the epoch a command was issued at (it
	// performs a command whenever the state machine allows it).
	NoRequestEpochs
	// AcquireAnyCaller: Acquire lets any node acquire an Unowned actor,
	// not only its intended owner.
	AcquireAnyCaller
	numMutations
)

// Mutations lists every mutation except Real, in table order.
var Mutations = []Mutation{EpochAtAcquire, AbortToOldOwner, AbortOwnedNewEpoch, AbortReusesEpoch, AbortWithoutFloor,
	FenceEquals, HighestEquals, HighestForgets, VolatileFloor, NoRequestEpochs, AcquireAnyCaller}

// Equivalent holds the mutations that change no reachable behaviour, each
// with the reason. WriteReport requires them to survive, every other
// mutation to be caught.
var Equivalent = map[Mutation]string{
	FenceEquals: "no write carries an epoch above the record's current one (every token comes from the record, and the floor keeps the epoch from falling), so == and >= agree on every write that arrives",
}

func (m Mutation) String() string {
	return [...]string{
		"real model",
		"epoch allocated at Acquire",
		"Abort returns to the old owner",
		"Abort gives Owned(A, 42)",
		"Abort reusing epoch 42",
		"Abort not raising the floor",
		"ValidFence with ==",
		"HighestSeen with ==",
		"HighestSeen not raising its max",
		"floor not durable",
		"requests without epochs",
		"Acquire by any node",
	}[m]
}

// Property names a safety property the checker verifies.
type Property int

// The properties. The first six are the ownership invariants, the seventh
// is about intent, the last four about the resource servers and grants.
const (
	OneMutator       Property = iota // at most one node may mutate; each server applies each epoch's writes from one node
	EpochsNeverFall                  // the current epoch never decreases
	OneOwnerPerEpoch                 // an epoch is owned by one node, ever
	StaleInert                       // a token below the current epoch neither may mutate nor passes ValidFence
	RefusalInert                     // a refused request changes nothing
	RequestEpoch                     // a request issued at epoch e has no effect once the current epoch is past e
	Intent                           // a transition happens only if its issuer asked for it at that epoch
	ServerOrder                      // no server applies a write at e after one at e' > e
	CheckingCurrent                  // the record-checking server applies no write below the record's current epoch
	OwnerAccepted                    // a write whose token may mutate on arrival is applied
	GrantFenced                      // a grant passes ValidFence only while the record names its node for its epoch
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
		"only what was asked, at its epoch",
		"writes applied in epoch order",
		"record-checking server admits no fenced write",
		"the owner's writes are applied",
		"an abandoned grant is fenced",
	}[p]
}

// msgKind tells the messages apart.
type msgKind uint8

const (
	request msgKind = iota // a node's Command to the record
	command                // the coordinator's Command to the record
	grant                  // from the outgoing owner to the incoming node, naming the new epoch
	write                  // a write to a server, stamped with the sender's token
)

// msg is a message in flight. from is the sending node (unused for
// commands); to is the server of a write or the node a grant is for.
type msg struct {
	kind  msgKind
	from  int8
	to    int8
	epoch ownership.Epoch   // a write's token epoch, a grant's epoch
	cmd   ownership.Command // a request or command
}

func (m msg) String() string {
	switch m.kind {
	case request, command:
		return m.cmd.String()
	case grant:
		return fmt.Sprintf("%s's grant for %d to %s", nodeNames[m.from], m.epoch, nodeNames[m.to])
	}
	return fmt.Sprintf("write %s@%d to the %s", nodeNames[m.from], m.epoch, serverNames[m.to])
}

// node is one node's view: the token it holds and whether it is down.
type node struct {
	token   ownership.Epoch // epoch of the token it holds (on disk, so it survives a crash); 0 if none
	crashed bool
}

// server is a resource server: max is the highest epoch it has applied a
// write at (a ghost, for ServerOrder); seen is the highest-epoch server's
// own state, the package's HighestSeen.
type server struct {
	max  ownership.Epoch
	seen ownership.HighestSeen
}

// intent is one request ever issued: op, the issuing node (-1: the
// coordinator), the node it names (-1: none) and its epoch.
type intent struct {
	op    ownership.Op
	who   int8
	to    int8
	epoch ownership.Epoch
}

// State is one global state of the model.
type State struct {
	rec     *ownership.Actor
	floor   ownership.Epoch // durable highest epoch ever allocated
	nodes   [maxNodes]node
	net     []msg
	srv     [2]server
	ownerAt [maxEpochs]int8 // ghost: node index + 1 that ever owned each epoch
	named   [maxEpochs]int8 // ghost: node index + 1 each epoch was allocated for
	asked   []intent        // ghost: every request issued, sorted
	dup     uint8           // budgets used
	loss    uint8
	intr    uint8
	crashes uint8
	reord   uint8
	rogue   uint8
}

func slot(e ownership.Epoch) int { return int(e - firstEpoch) }

func (s *State) clone() *State {
	c := *s
	c.rec = s.rec.Clone()
	c.net = append([]msg(nil), s.net...)
	c.asked = append([]intent(nil), s.asked...)
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
	for i := range s.srv {
		s.srv[i] = server{max: firstEpoch, seen: ownership.HighestSeen{Highest: firstEpoch}}
	}
	s.nodes[0] = node{token: firstEpoch}
	s.ownerAt[slot(firstEpoch)] = 1
	s.named[slot(firstEpoch)] = 1
	return s
}

func intentLess(a, b intent) int {
	switch {
	case a.op != b.op:
		return int(opCode[a.op]) - int(opCode[b.op])
	case a.who != b.who:
		return int(a.who) - int(b.who)
	case a.to != b.to:
		return int(a.to) - int(b.to)
	}
	return int(a.epoch) - int(b.epoch)
}

// ask records that a request was issued.
func (s *State) ask(in intent) {
	i, found := slices.BinarySearchFunc(s.asked, in, intentLess)
	if !found {
		s.asked = slices.Insert(s.asked, i, in)
	}
}

func (s *State) wasAsked(in intent) bool {
	_, found := slices.BinarySearchFunc(s.asked, in, intentLess)
	return found
}

// intentOf is the intent a command expresses, issued by node who (-1: the
// coordinator).
func intentOf(c ownership.Command, who int8) intent {
	to := int8(-1)
	if c.Op == ownership.OpBeginTransfer || c.Op == ownership.OpRevoke {
		to = int8(indexOf(c.To))
	}
	return intent{op: c.Op, who: who, to: to, epoch: c.Epoch}
}

// Violation is a property broken by a transition or in a state.
type Violation struct {
	Property Property
	Detail   string
}

// action is one step of the model, as data: kind, the node or message it
// concerns, and an argument (a target node, a server).
type action struct {
	kind  actionKind
	node  int8 // acting node, or -1
	arg   int8 // target node or server
	msg   int  // index into net for deliver, duplicate, lose
	rogue bool // a request outside the sender's role
}

type actionKind uint8

const (
	actObserve actionKind = iota
	actRequest
	actGrant
	actWrite
	actCrash
	actRestart
	actCommand
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
	view := s.rec.State()
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
		if isOwner(view, i) && nd.token != cur {
			c := s.clone()
			c.nodes[i].token = cur
			add(action{kind: actObserve, node: int8(i)}, c, nil, false)
		}
		for _, cmd := range requestsFor(view, i, n) {
			if c := s.send(m, msg{kind: request, from: int8(i), cmd: cmd}); c != nil {
				c.ask(intentOf(cmd, int8(i)))
				add(action{kind: actRequest, node: int8(i), arg: int8(indexOf(cmd.To))}, c, nil, false)
			}
		}
		if int(s.rogue) < m.b.Rogue {
			for _, cmd := range outOfRole(view, i, n) {
				if c := s.send(m, msg{kind: request, from: int8(i), cmd: cmd}); c != nil {
					c.rogue++
					c.ask(intentOf(cmd, int8(i)))
					add(action{kind: actRequest, node: int8(i), arg: int8(indexOf(cmd.To)), rogue: true}, c, nil, false)
				}
			}
		}
		// The outgoing owner tells the incoming node its epoch.
		if t, ok := view.(ownership.Transferring); ok && t.From == nodeNames[i] {
			if c := s.send(m, msg{kind: grant, from: int8(i), to: int8(indexOf(t.To)), epoch: t.NewEpoch}); c != nil {
				add(action{kind: actGrant, node: int8(i), arg: int8(indexOf(t.To))}, c, nil, false)
			}
		}
		if nd.token != 0 {
			for sv := int8(0); sv < 2; sv++ {
				if c := s.send(m, msg{kind: write, from: int8(i), to: sv, epoch: nd.token}); c != nil {
					add(action{kind: actWrite, node: int8(i), arg: sv}, c, nil, false)
				}
			}
		}
		if int(s.crashes) < m.b.Crashes {
			c := s.clone()
			c.crashes++
			c.nodes[i].crashed = true
			add(action{kind: actCrash, node: int8(i)}, c, nil, false)
		}
	}
	// The coordinator: its commands are messages to the record, stamped
	// with the epoch it read, like any node's.
	if int(s.intr) < m.b.Interrupts && cur < m.maxEpoch() {
		var cmds []ownership.Command
		if _, ok := view.(ownership.Transferring); ok {
			cmds = append(cmds, ownership.Command{Op: ownership.OpAbort, Epoch: cur})
		}
		for j := 0; j < n; j++ {
			cmds = append(cmds, ownership.Command{Op: ownership.OpRevoke, To: nodeNames[j], Epoch: cur})
		}
		for _, cmd := range cmds {
			if c := s.send(m, msg{kind: command, from: -1, cmd: cmd}); c != nil {
				c.intr++
				c.ask(intentOf(cmd, -1))
				add(action{kind: actCommand, node: -1, arg: int8(indexOf(cmd.To))}, c, nil, false)
			}
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

// phaseRequests is every request a node i could send in the phase view is
// in, whatever its role: BeginTransfer to each other node when Owned,
// CompleteRelease when Transferring, Acquire when Unowned, stamped with
// the view's current epoch.
func phaseRequests(view ownership.State, i, n int) []ownership.Command {
	me := nodeNames[i]
	e := ownership.CurrentEpoch(view)
	switch view.(type) {
	case ownership.Owned:
		var out []ownership.Command
		for j := 0; j < n; j++ {
			if j != i {
				out = append(out, ownership.Command{Op: ownership.OpBeginTransfer, Caller: me, To: nodeNames[j], Epoch: e})
			}
		}
		return out
	case ownership.Transferring:
		return []ownership.Command{{Op: ownership.OpCompleteRelease, Caller: me, Epoch: e}}
	case ownership.Unowned:
		return []ownership.Command{{Op: ownership.OpAcquire, Caller: me, Epoch: e}}
	}
	return nil
}

// inRole reports whether the record gives node i the part of sending a
// request in view: the owner, the outgoing owner, the intended owner.
func inRole(view ownership.State, i int) bool {
	me := nodeNames[i]
	switch v := view.(type) {
	case ownership.Owned:
		return v.Owner == me
	case ownership.Transferring:
		return v.From == me
	case ownership.Unowned:
		return v.IntendedOwner == me
	}
	return false
}

// requestsFor is what node i asks of the record when it reads view: the
// next step of a handover in its role, stamped with the view's current
// epoch.
func requestsFor(view ownership.State, i, n int) []ownership.Command {
	if !inRole(view, i) {
		return nil
	}
	return phaseRequests(view, i, n)
}

// outOfRole is what a node the record gives no part in view might send
// anyway, at the epoch it read (the Rogue budget).
func outOfRole(view ownership.State, i, n int) []ownership.Command {
	if inRole(view, i) {
		return nil
	}
	return phaseRequests(view, i, n)
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
	if a.to != b.to {
		return a.to < b.to
	}
	if a.epoch != b.epoch {
		return a.epoch < b.epoch
	}
	if a.cmd.Op != b.cmd.Op {
		return opCode[a.cmd.Op] < opCode[b.cmd.Op]
	}
	if a.cmd.Caller != b.cmd.Caller {
		return a.cmd.Caller < b.cmd.Caller
	}
	if a.cmd.To != b.cmd.To {
		return a.cmd.To < b.cmd.To
	}
	return a.cmd.Epoch < b.cmd.Epoch
}

// raiseFloor raises the durable floor to e: the service writes every allocated
// epoch down before the state that uses it is visible, which the model
// makes one atomic step.
func (m *model) raiseFloor(s *State, e ownership.Epoch) {
	if e > s.floor {
		s.floor = e
	}
}

// apply performs cmd on the record of s, or the mutant's version of it.
// A mutant changes one rule: every other check of Apply still runs, so a
// mutant transition is refused whenever the real one is.
func (m *model) apply(s *State, cmd ownership.Command) error {
	if m.mut == NoRequestEpochs {
		cmd.Epoch = s.rec.CurrentEpoch()
	}
	if m.mut == AcquireAnyCaller && cmd.Op == ownership.OpAcquire {
		if u, ok := s.rec.State().(ownership.Unowned); ok && u.IntendedOwner != cmd.Caller {
			// Name the caller, then let the real Acquire (state, epoch,
			// token) do the rest.
			trial := rebuild(s.rec, ownership.Unowned{Epoch: u.Epoch, IntendedOwner: cmd.Caller})
			if _, err := trial.Apply(cmd); err != nil {
				return err
			}
			s.rec = trial
			return nil
		}
	}
	if cmd.Op == ownership.OpAbort {
		t, isT := s.rec.State().(ownership.Transferring)
		var mutant ownership.State
		switch m.mut {
		case AbortToOldOwner:
			mutant = ownership.Owned{Owner: t.From, Epoch: t.OldEpoch}
		case AbortOwnedNewEpoch:
			mutant = ownership.Owned{Owner: t.From, Epoch: t.NewEpoch}
		case AbortReusesEpoch:
			mutant = ownership.Unowned{Epoch: t.NewEpoch, IntendedOwner: t.From}
		}
		if mutant != nil {
			if _, err := s.rec.Clone().Apply(cmd); err != nil {
				return err // refused where the real Abort is
			}
			if !isT {
				panic("check: Abort accepted outside Transferring")
			}
			s.rec = rebuild(s.rec, mutant)
			return nil
		}
	}
	_, err := s.rec.Apply(cmd)
	return err
}

// rebuild returns an actor in state st with a's issued tokens, through the
// package's own decoder (which checks the shape rules). An Owned state
// whose owner's token was not issued gets it issued, as Acquire would (the
// decoder admits no owner without its token). Only mutants use it.
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
	if o, ok := st.(ownership.Owned); ok {
		tok := ownership.Token{Actor: a.ID(), Epoch: o.Epoch, Holder: o.Owner}
		if !a.WasIssued(tok) {
			var issued, mine []json.RawMessage
			if err := json.Unmarshal(w["issued"], &issued); err != nil {
				panic(err)
			}
			if err := json.Unmarshal(tw["issued"], &mine); err != nil {
				panic(err)
			}
			if w["issued"], err = json.Marshal(append(issued, mine...)); err != nil {
				panic(err)
			}
		}
	}
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
	m.raiseFloor(s, e)
	if k := slot(e); s.named[k] == 0 {
		s.named[k] = int8(j + 1)
	}
}

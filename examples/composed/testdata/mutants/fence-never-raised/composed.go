package composed

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ownership-book/ownership/examples/ownership"
	"github.com/ownership-book/ownership/examples/raymond"
)

// Kind is a message's kind: Raymond's two, and a write to the resource.
type Kind uint8

// The messages of the composed system.
const (
	Request   Kind = iota + 1 // raymond REQUEST
	Privilege                 // raymond PRIVILEGE, carrying the new epoch
	Write                     // a critical-section write, carrying the writer's epoch
)

// Message is one message in flight. Epoch is what the message carries: the
// grant's epoch on a PRIVILEGE, the writer's epoch on a Write (0 in the
// mutant NoWriteEpoch). Tenure, on a Write, numbers the writer's holding
// of the privilege (1 for the first Acquire, 2 for the next, ...): it is
// kept for checking only, and no node or resource reads it.
type Message struct {
	Kind     Kind
	From, To raymond.NodeID // To is unused for a Write (it goes to the resource)
	Epoch    ownership.Epoch
	Tenure   int
}

// String formats m as PRIVILEGE(A->B, epoch 2), REQUEST(B->A) or
// WRITE(A, epoch 1).
func (m Message) String() string {
	switch m.Kind {
	case Request:
		return fmt.Sprintf("REQUEST(%s->%s)", m.From, m.To)
	case Privilege:
		if m.From == m.To {
			return fmt.Sprintf("PRIVILEGE(coordinator->%s, epoch %d)", m.To, m.Epoch)
		}
		if m.Epoch == 0 {
			return fmt.Sprintf("PRIVILEGE(%s->%s)", m.From, m.To)
		}
		return fmt.Sprintf("PRIVILEGE(%s->%s, epoch %d)", m.From, m.To, m.Epoch)
	}
	if m.Epoch == 0 {
		return fmt.Sprintf("WRITE(%s)", m.From)
	}
	return fmt.Sprintf("WRITE(%s, epoch %d)", m.From, m.Epoch)
}

// Mutant names a version of the system with one mechanism removed, for
// showing that the check finds what the mechanism prevents.
type Mutant uint8

const (
	// Correct is the composed system as designed.
	Correct Mutant = iota
	// NoWriteEpoch: a holder's writes carry no epoch, so the resource has
	// nothing to fence with and accepts every write. The PRIVILEGE keeps
	// its epoch. (The resource's fence removed.)
	NoWriteEpoch
	// NoBurn: the coordinator's recovery re-grants at the current epoch
	// instead of burning one (Revoke, and Abort likewise, keep the epoch).
	NoBurn
	// NoPrivilegeEpoch: the receiver of a PRIVILEGE ignores the epoch the
	// message carries and acquires whenever the record is Unowned naming
	// it; its token still takes the record's epoch and its writes still
	// carry it. (The message's epoch check removed, nothing else.)
	NoPrivilegeEpoch
	// NoMayMutate: a node in its critical section writes without asking
	// MayMutate, stamping the write with its token's epoch even after a
	// revoke has made that token stale. (The holder's own check removed.)
	NoMayMutate
)

// Mutants lists every mutant, in the order the check program prints them.
var Mutants = []Mutant{NoWriteEpoch, NoBurn, NoPrivilegeEpoch, NoMayMutate}

// String names the mutant.
func (m Mutant) String() string {
	switch m {
	case Correct:
		return "Composed"
	case NoWriteEpoch:
		return "mutant: writes without epoch"
	case NoBurn:
		return "mutant: recovery without burn"
	case NoPrivilegeEpoch:
		return "mutant: PRIVILEGE without epoch"
	case NoMayMutate:
		return "mutant: write without MayMutate"
	}
	return fmt.Sprintf("Mutant(%d)", uint8(m))
}

// Caught reports whether the exhaustive check at the default bounds finds a
// violation in m (the check program and the tests hold it to this). The two
// mutants it does not catch are equivalent for the properties checked: the
// receiver's token takes its epoch from the atomic record, not from the
// message, and Acquire already requires the record Unowned naming the
// receiver (NoPrivilegeEpoch); and the order of accepted writes is kept by
// the resource's fence alone, whatever a holder sends (NoMayMutate).
func (m Mutant) Caught() bool { return m == NoWriteEpoch || m == NoBurn }

// Bounds limit what can happen: requests per node, and how many messages the
// network may duplicate and lose and how many times the coordinator may
// revoke.
type Bounds struct {
	Requests, Dups, Losses, Revokes int
}

// ErrOutOfOrder is the safety violation: the resource accepted a write made
// under an older holding of the privilege than a write it had already
// accepted, so the old holder wrote while its successor held the privilege.
var ErrOutOfOrder = errors.New("the resource accepted a write out of ownership order")

// ErrTwoAuthorized: two nodes USING while the record says each may mutate
// (impossible by construction: MayMutate holds for one node at most).
var ErrTwoAuthorized = errors.New("two nodes in the critical section with authority")

// System is the composed state: Raymond's nodes, the ownership record of the
// privilege, each node's token epoch, the messages in flight, the resource,
// and the budgets left. Create one with New.
type System struct {
	Tree     raymond.Tree
	Mutant   Mutant
	Nodes    []raymond.Node
	Record   ownership.State
	Tokens   []ownership.Epoch // the epoch of each node's latest token (0: none)
	Tenures  []int             // the tenure of each node's latest token (checking only)
	Tenure   int               // tenures issued so far
	Wrote    []bool            // the node has written in its current critical section
	InFlight []Message         // sorted, so equal multisets encode equally

	// The resource: the highest epoch it has accepted (its fence), and, for
	// checking, the writer and tenure of the last write it accepted.
	Fence      ownership.Epoch
	LastWriter raymond.NodeID
	LastTenure int
	Broken     error // set by the first out-of-order acceptance

	Left                  []int
	Dups, Losses, Revokes int

	// Counters (not part of the state's identity): record transitions,
	// Raymond messages sent, and authorized critical-section entries.
	RecordWrites, Messages, Entries int
}

// New returns the initial system on tr: the privilege at holder, which owns
// the record at epoch 1 and holds its token.
func New(tr raymond.Tree, holder raymond.NodeID, b Bounds, mut Mutant) *System {
	s := &System{
		Tree: tr, Mutant: mut, Nodes: raymond.Initial(tr, holder),
		Record: ownership.Owned{Owner: name(holder), Epoch: 1},
		Tokens: make([]ownership.Epoch, tr.N()), Wrote: make([]bool, tr.N()),
		Left: make([]int, tr.N()), Dups: b.Dups, Losses: b.Losses, Revokes: b.Revokes,
		LastWriter: -1,
	}
	s.Tokens[holder] = 1
	s.Tenures = make([]int, tr.N())
	s.Tenures[holder], s.Tenure = 1, 1
	for i := range s.Left {
		s.Left[i] = b.Requests
	}
	return s
}

// name is the ownership NodeID of a Raymond node.
func name(id raymond.NodeID) ownership.NodeID { return ownership.NodeID(id.String()) }

// Clone returns a deep copy of s.
func (s *System) Clone() *System {
	c := *s
	c.Nodes = make([]raymond.Node, len(s.Nodes))
	for i, n := range s.Nodes {
		c.Nodes[i] = n.Clone()
	}
	c.Tokens = slices.Clone(s.Tokens)
	c.Tenures = slices.Clone(s.Tenures)
	c.Wrote = slices.Clone(s.Wrote)
	c.InFlight = slices.Clone(s.InFlight)
	c.Left = slices.Clone(s.Left)
	return &c
}

// Key is a canonical encoding of the state (counters excluded): equal keys
// exactly for equal states, up to a shift of every epoch (and of every
// tenure) by the same amount. The rules only compare epochs with each other
// and add one to them, so two states that differ by such a shift behave
// alike, and the search treats them as one.
func (s *System) Key() string {
	// The smallest epoch and tenure in use become 1; 0 keeps its meaning
	// (no token, no epoch carried, nothing accepted).
	minE := ownership.CurrentEpoch(s.Record)
	minT := s.Tenure
	for i, e := range s.Tokens {
		if e > 0 {
			minE = min(minE, e)
		}
		if t := s.Tenures[i]; t > 0 {
			minT = min(minT, t)
		}
	}
	if s.Fence > 0 {
		minE = min(minE, s.Fence)
	}
	if s.LastTenure > 0 {
		minT = min(minT, s.LastTenure)
	}
	for _, m := range s.InFlight {
		if m.Epoch > 0 {
			minE = min(minE, m.Epoch)
		}
		if m.Tenure > 0 {
			minT = min(minT, m.Tenure)
		}
	}
	ep := func(e ownership.Epoch) byte {
		if e == 0 {
			return 0
		}
		d := e - minE + 1
		if d > 255 {
			panic("composed: epoch span too wide for Key")
		}
		return byte(d)
	}
	tn := func(t int) byte {
		if t == 0 {
			return 0
		}
		return byte(t - minT + 1)
	}
	b := make([]byte, 0, 64+16*len(s.Nodes)+8*len(s.InFlight))
	for i, n := range s.Nodes {
		flags := byte(0)
		if n.Using {
			flags |= 1
		}
		if n.Asked {
			flags |= 2
		}
		if s.Wrote[i] {
			flags |= 4
		}
		b = append(b, byte(n.Holder), flags, ep(s.Tokens[i]), tn(s.Tenures[i]), byte(s.Left[i]), byte(len(n.RequestQ)))
		for _, x := range n.RequestQ {
			b = append(b, byte(x))
		}
	}
	switch r := s.Record.(type) {
	case ownership.Owned:
		b = append(b, 'O', r.Owner[0], ep(r.Epoch))
	case ownership.Unowned:
		b = append(b, 'U', r.IntendedOwner[0], ep(r.Epoch))
	case ownership.Transferring:
		b = append(b, 'T', r.From[0], r.To[0], ep(r.NewEpoch))
	}
	b = append(b, ep(s.Fence), byte(s.LastWriter+1), tn(s.LastTenure), tn(s.Tenure), byte(s.Dups), byte(s.Losses), byte(s.Revokes), byte(boolInt(s.Broken != nil)))
	for _, m := range s.InFlight {
		b = append(b, byte(m.Kind), byte(m.From), byte(m.To), ep(m.Epoch), tn(m.Tenure))
	}
	return string(b)
}

// decode is the inverse of Key for systems on tr with mutant mut. A
// decoded system's Broken is a bare ErrOutOfOrder (the key keeps only that
// it is set) and its counters are zero.
func decode(tr raymond.Tree, mut Mutant, k string) *System {
	b := []byte(k)
	n := tr.N()
	s := &System{Tree: tr, Mutant: mut, Nodes: make([]raymond.Node, n), Tokens: make([]ownership.Epoch, n), Tenures: make([]int, n), Wrote: make([]bool, n), Left: make([]int, n)}
	p := 0
	for i := range n {
		nd := raymond.Node{ID: raymond.NodeID(i), Holder: raymond.NodeID(b[p])}
		flags := b[p+1]
		nd.Using, nd.Asked, s.Wrote[i] = flags&1 != 0, flags&2 != 0, flags&4 != 0
		s.Tokens[i], s.Tenures[i], s.Left[i] = ownership.Epoch(b[p+2]), int(b[p+3]), int(b[p+4])
		q := int(b[p+5])
		p += 6
		for j := range q {
			nd.RequestQ = append(nd.RequestQ, raymond.NodeID(b[p+j]))
		}
		p += q
		s.Nodes[i] = nd
	}
	switch b[p] {
	case 'O':
		s.Record = ownership.Owned{Owner: ownership.NodeID(b[p+1 : p+2]), Epoch: ownership.Epoch(b[p+2])}
		p += 3
	case 'U':
		s.Record = ownership.Unowned{IntendedOwner: ownership.NodeID(b[p+1 : p+2]), Epoch: ownership.Epoch(b[p+2])}
		p += 3
	case 'T':
		e := ownership.Epoch(b[p+3])
		s.Record = ownership.Transferring{From: ownership.NodeID(b[p+1 : p+2]), To: ownership.NodeID(b[p+2 : p+3]), OldEpoch: e - 1, NewEpoch: e}
		p += 4
	}
	s.Fence, s.LastWriter, s.LastTenure, s.Tenure = ownership.Epoch(b[p]), raymond.NodeID(b[p+1])-1, int(b[p+2]), int(b[p+3])
	s.Dups, s.Losses, s.Revokes = int(b[p+4]), int(b[p+5]), int(b[p+6])
	if b[p+7] != 0 {
		s.Broken = ErrOutOfOrder
	}
	for p += 8; p < len(b); p += 5 {
		s.InFlight = append(s.InFlight, Message{Kind: Kind(b[p]), From: raymond.NodeID(b[p+1]), To: raymond.NodeID(b[p+2]), Epoch: ownership.Epoch(b[p+3]), Tenure: int(b[p+4])})
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func msgLess(a, b Message) int {
	for _, d := range []int{int(a.Kind) - int(b.Kind), int(a.From) - int(b.From), int(a.To) - int(b.To), int(a.Epoch) - int(b.Epoch), a.Tenure - b.Tenure} {
		if d != 0 {
			return d
		}
	}
	return 0
}

func (s *System) send(m Message) {
	i, _ := slices.BinarySearchFunc(s.InFlight, m, msgLess)
	s.InFlight = slices.Insert(s.InFlight, i, m)
}

// dead reports whether m can never again change anything when it arrives.
// A write is dead when its epoch is below the resource's fence. A PRIVILEGE
// is dead when its epoch is below the record's current epoch, or equal to it
// while the record is not Unowned at that epoch naming the message's
// receiver: the next record change allocates a newer epoch, so the receiver
// will refuse it forever. (Without the burn, a revoke can leave the epoch
// where it is, so the mutant NoBurn keeps the second kind; the mutant
// NoPrivilegeEpoch has no dead PRIVILEGEs, since its receivers do not read
// the message's epoch; the mutant NoWriteEpoch has no dead writes, since its
// resource cannot tell old from new.)
func (s *System) dead(m Message) bool {
	switch m.Kind {
	case Privilege:
		if s.Mutant == NoPrivilegeEpoch {
			return false
		}
		cur := ownership.CurrentEpoch(s.Record)
		if m.Epoch < cur {
			return true
		}
		u, ok := s.Record.(ownership.Unowned)
		return s.Mutant == Correct && m.Epoch == cur && !(ok && u.IntendedOwner == name(m.To))
	case Write:
		return s.Mutant != NoWriteEpoch && m.Epoch < s.Fence
	}
	return false
}

// collect drops dead messages from the network. Delivering, duplicating or
// losing a dead message changes nothing but the nemesis's budget, so every
// run that uses one is matched by a run that does not: dropping them keeps
// every reachable violation and shrinks the state space.
func (s *System) collect() {
	s.InFlight = slices.DeleteFunc(s.InFlight, s.dead)
}

// authorized reports whether node id may mutate now: its token's epoch is
// the record's owned epoch and it is the owner (ownership.MayMutate).
func (s *System) authorized(id raymond.NodeID) bool {
	return ownership.MayMutate(s.Record, name(id), s.Tokens[id])
}

// ANCHOR: step

// step feeds ev to node id through Raymond's rules and carries out what the
// node sends. A REQUEST goes out as it is. A PRIVILEGE to Y is first a
// handover on the record: BeginTransfer(id -> Y) allocates the next epoch and
// CompleteRelease(id) leaves the record Unowned(epoch, Y); the message
// carries that epoch. If the record refuses (the coordinator has revoked id's
// ownership), nothing is sent: id no longer has a privilege to give.
func (s *System) step(id raymond.NodeID, ev raymond.Event) (string, error) {
	wasUsing := s.Nodes[id].Using
	n, out, err := raymond.Step(s.Nodes[id], ev)
	if err != nil {
		return "", err
	}
	s.Nodes[id] = n
	if n.Using && !wasUsing && s.authorized(id) {
		s.Entries++
	}
	var notes []string
	for _, m := range out {
		if m.Kind == raymond.Request {
			s.Messages++
			s.send(Message{Kind: Request, From: m.From, To: m.To})
			continue
		}
		next, err := ownership.BeginTransfer(s.Record, name(id), name(m.To))
		if err == nil {
			next, err = ownership.CompleteRelease(next, name(id))
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s cannot hand over: %v", id, err))
			continue
		}
		s.Record = next
		s.RecordWrites += 2
		s.Tokens[id] = 0
		s.Messages++
		s.send(Message{Kind: Privilege, From: id, To: m.To, Epoch: ownership.CurrentEpoch(next)})
	}
	return strings.Join(notes, "; "), nil
}

// ANCHOR_END: step

// ANCHOR: receive

// receivePrivilege is the receiver's side of the handover: Acquire, but only
// if the record is Unowned at the message's epoch and names this node. A
// duplicate finds the record already Owned; an old PRIVILEGE carries an epoch
// that has been burnt. Either is refused and changes nothing.
func (s *System) receivePrivilege(m Message) (string, error) {
	u, ok := s.Record.(ownership.Unowned)
	switch {
	case !ok:
		return fmt.Sprintf("refused: record is %v", s.Record), nil
	case s.Mutant != NoPrivilegeEpoch && u.Epoch != m.Epoch:
		return fmt.Sprintf("refused: epoch %d is stale, record is %v", m.Epoch, s.Record), nil
	}
	next, err := ownership.Acquire(s.Record, name(m.To))
	if err != nil {
		return "refused: " + err.Error(), nil
	}
	s.Record = next
	s.RecordWrites++
	s.Tokens[m.To] = u.Epoch
	s.Tenure++
	s.Tenures[m.To] = s.Tenure
	note, err := s.step(m.To, raymond.Event{Kind: raymond.ReceivePrivilege, From: m.From})
	return strings.TrimSpace("acquired: " + next.String() + " " + note), err
}

// ANCHOR_END: receive

// ANCHOR: fence

// receiveWrite is the resource's fence: a write is accepted if its epoch is
// at least the highest accepted so far (ownership.ValidFence against the
// resource's own view). Without epochs on writes (NoWriteEpoch) every
// write is accepted.
// An accepted write from an older tenure than the last accepted one is
// recorded in Broken.
func (s *System) receiveWrite(m Message) string {
	if s.Mutant != NoWriteEpoch {
		if m.Epoch < s.Fence {
			return fmt.Sprintf("refused: epoch %d < fence %d", m.Epoch, s.Fence)
		}
	}
	if s.Broken == nil && m.Tenure < s.LastTenure {
		s.Broken = fmt.Errorf("%w: %s's write from tenure %d after %s's from tenure %d", ErrOutOfOrder, m.From, m.Tenure, s.LastWriter, s.LastTenure)
	}
	s.LastWriter, s.LastTenure = m.From, m.Tenure
	return "accepted"
}

// ANCHOR_END: fence

// ANCHOR: recover

// recoverPrivilege is the coordinator acting on a suspicion, which may be
// wrong. If the record is Unowned(e, Y), a PRIVILEGE to Y may be lost: Revoke
// re-grants to Y at e+1 and the coordinator resends the PRIVILEGE with the new
// epoch, so the old message, if it was only late, is stale on arrival. If the
// record is Owned(X, e), X may have crashed: Revoke moves the privilege to
// the node X would have served next (the head of X's REQUEST_Q, which its
// neighbours can tell; X itself if none) at e+1. A healthy X keeps running
// but its epoch is stale: it may not write, its in-flight writes are fenced,
// and its next handover is refused.
func (s *System) recoverPrivilege() (string, error) {
	var to raymond.NodeID
	switch r := s.Record.(type) {
	case ownership.Unowned:
		to = nodeOf(r.IntendedOwner)
	case ownership.Owned:
		x := nodeOf(r.Owner)
		to = x
		if q := s.Nodes[x].RequestQ; len(q) > 0 {
			to = q[0]
		}
	default:
		return "", fmt.Errorf("composed: recovery in %v", s.Record)
	}
	next, err := ownership.Revoke(s.Record, name(to))
	if err != nil {
		return "", err
	}
	if s.Mutant == NoBurn {
		next = ownership.Unowned{Epoch: ownership.CurrentEpoch(s.Record), IntendedOwner: name(to)}
	}
	before := s.Record
	s.Record = next
	s.RecordWrites++
	e := ownership.CurrentEpoch(next)
	s.send(Message{Kind: Privilege, From: to, To: to, Epoch: e})
	return fmt.Sprintf("%v -> %v, PRIVILEGE(epoch %d) sent to %s", before, next, e, to), nil
}

// ANCHOR_END: recover

func nodeOf(n ownership.NodeID) raymond.NodeID { return raymond.NodeID(n[0] - 'A') }

// MoveKind is the kind of a Move.
type MoveKind uint8

// The moves of the composed system.
const (
	MoveWant      MoveKind = iota + 1 // a node with requests left asks for the privilege
	MoveWrite                         // a USING node with authority writes once
	MoveExit                          // a USING node leaves (after writing, or having lost authority)
	MoveDeliver                       // a message in flight arrives
	MoveDuplicate                     // the network copies a message in flight
	MoveLose                          // the network drops a message in flight
	MoveRevoke                        // the coordinator's failure detector fires
)

// Move is one enabled move: its kind, the node (for Want, Write, Exit) or
// the index of the message in flight (Deliver, Duplicate, Lose).
type Move struct {
	Kind MoveKind
	Node raymond.NodeID
	Msg  int
}

// Moves lists the moves enabled in s. Identical messages in flight give one
// move each, not one per copy.
func (s *System) Moves() []Move {
	var moves []Move
	for i, n := range s.Nodes {
		id := raymond.NodeID(i)
		switch {
		case n.Using && !s.Wrote[i] && s.authorized(id):
			moves = append(moves, Move{Kind: MoveWrite, Node: id})
		case n.Using && !s.Wrote[i] && s.Mutant == NoMayMutate && s.Tokens[i] > 0:
			// A stale holder of the mutant may write, or leave.
			moves = append(moves, Move{Kind: MoveWrite, Node: id}, Move{Kind: MoveExit, Node: id})
		case n.Using:
			moves = append(moves, Move{Kind: MoveExit, Node: id})
		case !n.Wants() && s.Left[i] > 0:
			moves = append(moves, Move{Kind: MoveWant, Node: id})
		}
	}
	for i, m := range s.InFlight {
		if i > 0 && s.InFlight[i-1] == m {
			continue
		}
		moves = append(moves, Move{Kind: MoveDeliver, Msg: i})
		if s.Dups > 0 {
			moves = append(moves, Move{Kind: MoveDuplicate, Msg: i})
		}
		if s.Losses > 0 {
			moves = append(moves, Move{Kind: MoveLose, Msg: i})
		}
	}
	if s.Revokes > 0 {
		moves = append(moves, Move{Kind: MoveRevoke})
	}
	return moves
}

// Do performs mv on s and returns a label for traces.
func (s *System) Do(mv Move) (string, error) {
	switch mv.Kind {
	case MoveWant:
		s.Left[mv.Node]--
		note, err := s.step(mv.Node, raymond.Event{Kind: raymond.Want})
		return label(mv.Node.String()+" wants", note), err
	case MoveWrite:
		s.Wrote[mv.Node] = true
		e := s.Tokens[mv.Node]
		carried := e
		if s.Mutant == NoWriteEpoch {
			carried = 0
		}
		m := Message{Kind: Write, From: mv.Node, Epoch: carried, Tenure: s.Tenures[mv.Node]}
		s.send(m)
		return fmt.Sprintf("%s writes: %v", mv.Node, m), nil
	case MoveExit:
		s.Wrote[mv.Node] = false
		note, err := s.step(mv.Node, raymond.Event{Kind: raymond.Exit})
		return label(mv.Node.String()+" exits", note), err
	case MoveRevoke:
		s.Revokes--
		note, err := s.recoverPrivilege()
		return "coordinator revokes: " + note, err
	}
	m := s.InFlight[mv.Msg]
	switch mv.Kind {
	case MoveDuplicate:
		s.Dups--
		s.send(m)
		return "duplicate " + m.String(), nil
	case MoveLose:
		s.Losses--
		s.InFlight = slices.Delete(s.InFlight, mv.Msg, mv.Msg+1)
		return "lose " + m.String(), nil
	case MoveDeliver:
		s.InFlight = slices.Delete(s.InFlight, mv.Msg, mv.Msg+1)
		var note string
		var err error
		switch m.Kind {
		case Request:
			note, err = s.step(m.To, raymond.Event{Kind: raymond.ReceiveRequest, From: m.From})
		case Privilege:
			note, err = s.receivePrivilege(m)
		case Write:
			note = s.receiveWrite(m)
		}
		return label("deliver "+m.String(), note), err
	}
	return "", fmt.Errorf("composed: unknown move %d", mv.Kind)
}

func label(what, note string) string {
	if note == "" {
		return what
	}
	return what + ": " + note
}

// Check returns the first safety violation in s, or nil: the resource
// accepted a write out of ownership order (ErrOutOfOrder), or two nodes are
// in the critical section with authority (ErrTwoAuthorized), or the record is
// not a valid ownership state.
func Check(s *System) error {
	if s.Broken != nil {
		return s.Broken
	}
	var inCS []raymond.NodeID
	for i, n := range s.Nodes {
		if n.Using && s.authorized(raymond.NodeID(i)) {
			inCS = append(inCS, raymond.NodeID(i))
		}
	}
	if len(inCS) > 1 {
		return fmt.Errorf("%w: %v", ErrTwoAuthorized, inCS)
	}
	return ownership.Validate(s.Record)
}

// Explore checks every state reachable from New(tr, holder, b, mut) with
// Check, breadth-first, and returns the state counts and, if a state is
// unsafe, the shortest run to it. Dead messages are collected after every
// move (see collect). limit caps the number of distinct states (0: none).
func Explore(tr raymond.Tree, holder raymond.NodeID, b Bounds, mut Mutant, limit int) raymond.Exploration[*System] {
	return explore(tr, holder, b, mut, limit, false, nil)
}

// ExploreHashed is Explore with hash compaction (raymond.ExploreHashed), for
// bounds whose state space does not fit in memory as keys: every state is
// still visited, but a 64-bit hash collision could, with a chance below
// n²/2⁶⁵ for n states, hide one. progress, if not nil, is called now and
// then with the counts so far (see raymond.ExploreHashed).
func ExploreHashed(tr raymond.Tree, holder raymond.NodeID, b Bounds, mut Mutant, progress func(states, transitions, depth, waiting int)) raymond.Exploration[*System] {
	return explore(tr, holder, b, mut, 0, true, progress)
}

func explore(tr raymond.Tree, holder raymond.NodeID, b Bounds, mut Mutant, limit int, hashed bool, progress func(states, transitions, depth, waiting int)) raymond.Exploration[*System] {
	next := func(s *System) []raymond.Transition[*System] {
		var ts []raymond.Transition[*System]
		for _, mv := range s.Moves() {
			c := s.Clone()
			l, err := c.Do(mv)
			if err != nil {
				panic(fmt.Sprintf("composed: %v in %s", err, s.Key()))
			}
			c.collect()
			ts = append(ts, raymond.Transition[*System]{Label: l, To: c})
		}
		return ts
	}
	dec := func(k string) *System { return decode(tr, mut, k) }
	if hashed {
		return raymond.ExploreHashed(New(tr, holder, b, mut), (*System).Key, dec, next, Check, limit, progress)
	}
	return raymond.ExploreKeys(New(tr, holder, b, mut), (*System).Key, dec, next, Check, limit)
}

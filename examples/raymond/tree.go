package raymond

import (
	"fmt"
	"math/rand/v2"
)

// Tree is an undirected tree over nodes 0..N-1: the spanning tree the
// algorithm's messages travel along (Raymond 1989, section 2). Adj[i] lists
// node i's neighbours in increasing order.
type Tree struct {
	Name string
	Adj  [][]NodeID
}

// N returns the number of nodes.
func (t Tree) N() int { return len(t.Adj) }

// NewTree builds a tree of n nodes from its edges. It returns an error unless
// the edges form a tree (n-1 edges, connected, no self-loop or repeated
// edge).
func NewTree(name string, n int, edges [][2]NodeID) (Tree, error) {
	if n < 1 {
		return Tree{}, fmt.Errorf("raymond: tree %q: %d nodes", name, n)
	}
	if len(edges) != n-1 {
		return Tree{}, fmt.Errorf("raymond: tree %q: %d nodes need %d edges, got %d", name, n, n-1, len(edges))
	}
	t := Tree{Name: name, Adj: make([][]NodeID, n)}
	for _, e := range edges {
		a, b := e[0], e[1]
		if a < 0 || b < 0 || int(a) >= n || int(b) >= n || a == b {
			return Tree{}, fmt.Errorf("raymond: tree %q: bad edge %s-%s", name, a, b)
		}
		if t.Adjacent(a, b) {
			return Tree{}, fmt.Errorf("raymond: tree %q: edge %s-%s twice", name, a, b)
		}
		t.Adj[a] = insertSorted(t.Adj[a], b)
		t.Adj[b] = insertSorted(t.Adj[b], a)
	}
	if d := t.distances(0); len(d) != n || contains(d, -1) {
		return Tree{}, fmt.Errorf("raymond: tree %q is not connected", name)
	}
	return t, nil
}

func insertSorted(s []NodeID, x NodeID) []NodeID {
	i := 0
	for i < len(s) && s[i] < x {
		i++
	}
	s = append(s, 0)
	copy(s[i+1:], s[i:])
	s[i] = x
	return s
}

func contains(s []int, x int) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func mustTree(name string, n int, edges [][2]NodeID) Tree {
	t, err := NewTree(name, n, edges)
	if err != nil {
		panic(err)
	}
	return t
}

// Line returns the path A-B-C-...: the worst shape, diameter N-1.
func Line(n int) Tree {
	var e [][2]NodeID
	for i := 1; i < n; i++ {
		e = append(e, [2]NodeID{NodeID(i - 1), NodeID(i)})
	}
	return mustTree(fmt.Sprintf("line(%d)", n), n, e)
}

// Star returns node A joined to every other node: diameter 2.
func Star(n int) Tree {
	var e [][2]NodeID
	for i := 1; i < n; i++ {
		e = append(e, [2]NodeID{0, NodeID(i)})
	}
	return mustTree(fmt.Sprintf("star(%d)", n), n, e)
}

// Binary returns the balanced binary tree in heap order: node i's children
// are 2i+1 and 2i+2. With n = 2^k - 1 it is complete.
func Binary(n int) Tree {
	var e [][2]NodeID
	for i := 1; i < n; i++ {
		e = append(e, [2]NodeID{NodeID((i - 1) / 2), NodeID(i)})
	}
	return mustTree(fmt.Sprintf("binary(%d)", n), n, e)
}

// Random returns a random recursive tree: node i is joined to a node drawn
// uniformly from 0..i-1. The same seed gives the same tree.
func Random(n int, seed uint64) Tree {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	var e [][2]NodeID
	for i := 1; i < n; i++ {
		e = append(e, [2]NodeID{NodeID(r.IntN(i)), NodeID(i)})
	}
	return mustTree(fmt.Sprintf("random(%d, seed %d)", n, seed), n, e)
}

// Adjacent reports whether a and b are neighbours.
func (t Tree) Adjacent(a, b NodeID) bool {
	if int(a) >= len(t.Adj) || a < 0 {
		return false
	}
	for _, x := range t.Adj[a] {
		if x == b {
			return true
		}
	}
	return false
}

// distances returns the number of edges from src to every node (-1 if
// unreachable).
func (t Tree) distances(src NodeID) []int {
	d := make([]int, t.N())
	for i := range d {
		d[i] = -1
	}
	d[src] = 0
	queue := []NodeID{src}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, y := range t.Adj[x] {
			if d[y] < 0 {
				d[y] = d[x] + 1
				queue = append(queue, y)
			}
		}
	}
	return d
}

// Dist returns the number of edges between a and b.
func (t Tree) Dist(a, b NodeID) int { return t.distances(a)[b] }

// Diameter returns the largest distance between two nodes.
func (t Tree) Diameter() int {
	far := 0
	for i := range t.N() {
		for _, d := range t.distances(NodeID(i)) {
			far = max(far, d)
		}
	}
	return far
}

// Next returns the neighbour of a on the path to b (a itself if a == b).
func (t Tree) Next(a, b NodeID) NodeID {
	if a == b {
		return a
	}
	d := t.distances(b)
	for _, x := range t.Adj[a] {
		if d[x] == d[a]-1 {
			return x
		}
	}
	return a
}

// Initial returns the nodes in the paper's initial state with the privilege
// at holder: every HOLDER points along the tree towards holder, no queue,
// nobody USING or ASKED (Raymond 1989, initialization).
func Initial(t Tree, holder NodeID) []Node {
	d := t.distances(holder)
	nodes := make([]Node, t.N())
	for i := range nodes {
		id := NodeID(i)
		nodes[i] = Node{ID: id, Holder: id}
		for _, x := range t.Adj[id] {
			if d[x] == d[id]-1 {
				nodes[i].Holder = x
			}
		}
	}
	return nodes
}

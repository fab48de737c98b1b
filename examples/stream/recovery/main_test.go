package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestBothWalks runs both recoveries against a real stream and checks each
// commit's fate: with nobody else writing, the two commits whose answer was
// lost landed and the unsent one is resent under the new epoch; after B
// wrote, A's pending commit is discarded and B's is taken. A walk that
// resent over B's commit, or sent a landed commit twice, breaks a row.
//
// Reference: chapter "Owning a database through its stream", section
// "Recovery after the claim".
func TestBothWalks(t *testing.T) {
	walks, err := playBoth()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range walks {
		var rows []string
		for _, r := range w.Rows {
			rows = append(rows, r.Commit.Writer+r.Commit.Key[len("order-"):]+"="+r.Commit.Value+":"+r.Fate)
		}
		got = append(got, w.Title+" at "+string(rune('0'+w.Epoch))+": "+strings.Join(rows, ", "))
	}
	want := []string{
		"nobody else wrote at 2: A3=commit 3:landed, A4=commit 4:landed, A5=commit 5:resent",
		"someone else wrote at 3: A2=from A:discarded, B2=from B:taken",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("walks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFigureDrawsTheWalks checks that -figure's D2 holds a box per walk, a
// row per commit filled by its fate, and that a fate the figure has no
// colour for is refused rather than drawn plain.
func TestFigureDrawsTheWalks(t *testing.T) {
	walks, err := playBoth()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeFigure(&out, walks); err != nil {
		t.Fatal(err)
	}
	fig := out.String()
	for _, want := range []string{
		"grid-columns: 1\n",
		"walk1: \"nobody else wrote:\\nA reopens and claims epoch 2\" {\n  grid-rows: 4\n  grid-columns: 2\n",
		`  f3: "resent under epoch 2" {style.fill: "#fbf1c2"}`,
		"walk2: \"someone else wrote:\\nA reopens and claims epoch 3\" {\n  grid-rows: 3\n",
		`  f1: "discarded:\nmade on a state that\nno longer exists" {style.fill: "#fbd5d5"}`,
		`  c2: "commit 2 by B\norder-2=from B"`,
		`  f2: "taken from the stream" {style.fill: "#d3f0d8"}`,
	} {
		if !strings.Contains(fig, want) {
			t.Errorf("figure lacks %q:\n%s", want, fig)
		}
	}
	walks[0].Rows[0].Fate = "lost"
	if err := writeFigure(&bytes.Buffer{}, walks); err == nil {
		t.Error("drew a commit whose fate the figure does not know")
	}
}

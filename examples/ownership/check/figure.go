package check

import (
	"fmt"
	"io"
	"strings"
)

// Step is one step of a counterexample as a sequence diagram draws it:
// From is the participant that acts ("A", "coordinator", "record", a
// server's name) and To the one the step reaches, the same for a step that
// happens at one place (a read of the record and a send, a crash, a
// restart). A message is drawn when it arrives, from its sender to its
// receiver, since in the model nothing happens to it on the way. Label is
// the trace's line for the step, without the actor's name, broken into
// lines where its clauses meet.
type Step struct {
	From, To, Label string
}

// arrow places step st (from s), whose trace line is line.
func (m *model) arrow(s *State, st step, line string) Step {
	a := st.act
	who := "coordinator"
	if a.node >= 0 {
		who = string(nodeNames[a.node])
	}
	sender := func(mm msg) string {
		if mm.from < 0 {
			return "coordinator"
		}
		return string(nodeNames[mm.from])
	}
	local := func(who string) Step {
		label := strings.TrimPrefix(line, who+" ")
		label = strings.Replace(label, ", and ", ",\n", 1)
		label = strings.ReplaceAll(label, "; ", ";\n")
		return Step{who, who, label}
	}
	switch a.kind {
	case actRecordRestart:
		return Step{"record", "record", strings.Replace(strings.TrimPrefix(line, "the record "), ": ", ":\n", 1)}
	case actDuplicate, actLose:
		return Step{sender(s.net[a.msg]), sender(s.net[a.msg]), line}
	case actDeliver:
		mm := s.net[a.msg]
		to := "record"
		switch mm.kind {
		case write:
			to = serverNames[mm.to]
		case grant:
			to = string(nodeNames[mm.to])
		}
		return Step{sender(mm), to, strings.ReplaceAll(strings.Replace(line, ": ", ":\n", 1), "; ", ";\n")}
	}
	return local(who)
}

// participants is the order a counterexample's participants are drawn in.
var participants = []string{"A", "B", "C", "coordinator", "record", serverNames[checking], serverNames[highest]}

// Slug is the mutation's name as a flag value: lower case, words joined by
// hyphens ("abort-reusing-epoch-42").
func (mut Mutation) Slug() string {
	var b strings.Builder
	for _, f := range strings.FieldsFunc(strings.ToLower(mut.String()), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if b.Len() > 0 {
			b.WriteByte('-')
		}
		b.WriteString(f)
	}
	return b.String()
}

// MutationBySlug returns the mutation whose Slug is slug.
func MutationBySlug(slug string) (Mutation, bool) {
	for _, mut := range Mutations {
		if mut.Slug() == slug {
			return mut, true
		}
	}
	return Real, false
}

// WriteCounterexample runs mutation mut at MutationBounds and prints its
// shortest counterexample as a D2 sequence diagram: the participants that
// take part, then one message per step of the trace, and last a note on
// the participant where the property broke, naming it and saying how (filled
// pale red, from the site's figure palette). It fails for a
// mutation no property catches.
func WriteCounterexample(w io.Writer, mut Mutation) error {
	r := Run(MutationBounds, mut)
	if r.OK() {
		return fmt.Errorf("%v: no property catches it, so there is no counterexample", mut)
	}
	used := map[string]bool{}
	for _, st := range r.Steps {
		used[st.From], used[st.To] = true, true
	}
	fmt.Fprintln(w, "shape: sequence_diagram")
	ids := map[string]string{}
	for i, p := range participants {
		if !used[p] {
			continue
		}
		ids[p] = fmt.Sprintf("p%d", i)
		fmt.Fprintf(w, "%s: %s\n", ids[p], quote(p))
	}
	if len(ids) != len(used) {
		return fmt.Errorf("%v: a step names a participant the figure does not know", mut)
	}
	fmt.Fprintf(w, "%s -> %s: %s\n", ids["A"], ids["A"], quote("start: "+strings.TrimPrefix(r.Trace[0], "start: ")))
	for i, st := range r.Steps {
		fmt.Fprintf(w, "%s -> %s: %s\n", ids[st.From], ids[st.To], quote(fmt.Sprintf("%d. %s", i+1, st.Label)))
	}
	last := r.Steps[len(r.Steps)-1].To
	fmt.Fprintf(w, "%s.broken: %s {style.fill: %q}\n", ids[last],
		quote("broken: "+r.Violation.Property.String()+"\n"+wrapLines(r.Violation.Detail, 44)), "#fbd5d5")
	return nil
}

// wrapLines breaks text into lines of at most width bytes, at spaces.
func wrapLines(text string, width int) string {
	return strings.Join(wrap(text, width), "\n")
}

// quote returns s as a D2 double-quoted string (a line break as \n).
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"
)

// The -figure flag draws one scene of the run as a D2 sequence diagram (the
// chapter's figures of A, the stream and B, and of C's and D's claim race).
// It is made from the transcript the same run prints, line by line, so the
// figure and the transcript cannot tell different stories:
//
//	stream "orders", producer id "orders-db"   the stream's name
//	X  REQUEST -> ANSWER                       X -> stream, stream -> X
//	X  open: reads the stream, FACTS           X -> stream (a read), FACTS back
//	X  leader read up to the claim: FACTS      the same
//	X  reads the stream: FACTS                 the same
//	X  reads the stream: FACTS; CONCLUSION     the same, and X -> X: CONCLUSION
//	X  TEXT                                    X -> X, with the indented
//	     continuation                          lines under it
//
// The scenes are the transcript's paragraphs (1, the takeover; 2, the
// recovery that resends; 3, the claim race). A figure ends at the first
// line where a process learns it was fenced (its reset, or a Synced that
// reports fenced=true); the lines after it check what the fence did and stay
// in the transcript.

var (
	streamLine = regexp.MustCompile(`^stream ("[^"]*"), producer id ("[^"]*")$`)
	stepLine   = regexp.MustCompile(`^([A-Z])  (.*)$`)
	readLine   = regexp.MustCompile(`^(open: reads the stream|leader read up to the claim|reads the stream)[,:] (.*)$`)
)

// writeFigure turns scene (1 to 3) of the transcript into D2.
func writeFigure(w io.Writer, transcript string, scene int) error {
	type msg struct{ from, to, label string }
	var msgs []msg
	var actors []string
	seen := map[string]bool{}
	actor := func(a string) {
		if !seen[a] {
			seen[a] = true
			actors = append(actors, a)
		}
	}
	streamLabel := "the stream"
	scenes := strings.Split(strings.TrimRight(transcript, "\n"), "\n\n")
	if scene < 1 || scene > len(scenes) {
		return fmt.Errorf("scene %d: the transcript has scenes 1 to %d", scene, len(scenes))
	}
	if m := streamLine.FindStringSubmatch(strings.SplitN(scenes[0], "\n", 2)[0]); m != nil {
		streamLabel = "stream " + strings.Trim(m[1], `"`) + "\nproducer id " + strings.Trim(m[2], `"`)
	}
	lines := strings.Split(scenes[scene-1], "\n")
	ended := false
	for i := 0; i < len(lines) && !ended; i++ {
		l := lines[i]
		if streamLine.MatchString(l) {
			continue
		}
		m := stepLine.FindStringSubmatch(l)
		if m == nil {
			return fmt.Errorf("line %d: %q is not a step of a process", i+1, l)
		}
		who, text := m[1], strings.TrimSpace(m[2])
		actor(who)
		if req, ans, ok := strings.Cut(text, " -> "); ok {
			msgs = append(msgs, msg{who, "stream", strings.Join(strings.Fields(req), " ")}, msg{"stream", who, ans})
			continue
		}
		if rm := readLine.FindStringSubmatch(text); rm != nil {
			// What the read found comes back from the stream; what the
			// process concludes from it, after "; ", is its own note.
			found, concluded, _ := strings.Cut(rm[2], "; ")
			msgs = append(msgs, msg{who, "stream", rm[1]}, msg{"stream", who, found})
			if concluded != "" {
				msgs = append(msgs, msg{who, who, concluded})
			}
			continue
		}
		label := strings.TrimSuffix(text, ":")
		for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "     ") {
			i++
			// An error's text reads best broken where it nests.
			label += "\n" + strings.ReplaceAll(strings.TrimSpace(lines[i]), ": ", ":\n")
		}
		msgs = append(msgs, msg{who, who, label})
		ended = strings.HasPrefix(text, "reset") || strings.HasPrefix(text, "Synced: fenced=true")
	}
	if !ended {
		return fmt.Errorf("scene %d fences nobody: no reset and no fenced Synced", scene)
	}
	// A first, the stream in the middle, the other processes after it.
	fmt.Fprintln(w, "shape: sequence_diagram")
	order := append([]string{actors[0], "stream"}, actors[1:]...)
	for _, a := range order {
		if a == "stream" {
			fmt.Fprintf(w, "stream: %s\n", quote(streamLabel))
			continue
		}
		fmt.Fprintf(w, "%s: %s\n", a, quote("process "+a))
	}
	for _, m := range msgs {
		fmt.Fprintf(w, "%s -> %s: %s\n", m.from, m.to, quote(m.label))
	}
	return nil
}

// quote returns s as a D2 double-quoted string (a line break as \n).
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

package build

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/ownership-book/ownership/internal/verify"
)

// ProgressText says where a verification is, for a terminal line or serve's
// "building" page: "12 of 64 checks done; running go test
// ./examples/stream/node (8s) and 1 more". now dates the running checks.
func ProgressText(p verify.Progress, now time.Time) string {
	if p.Total == 0 {
		// Not a verification: a figure being drawn ("drawing d2 figure at
		// book/ch.md:12 (8s)").
		if len(p.Running) == 0 {
			return ""
		}
		return fmt.Sprintf("drawing %s (%s)", p.Running[0], roundSeconds(now.Sub(p.Since[0])))
	}
	s := fmt.Sprintf("%d of %d %s done", p.Done, p.Total, plural(p.Total, "check", "checks"))
	if len(p.Running) > 0 {
		s += fmt.Sprintf("; running %s (%s)", p.Running[0], roundSeconds(now.Sub(p.Since[0])))
		if len(p.Running) > 1 {
			s += fmt.Sprintf(" and %d more", len(p.Running)-1)
		}
	}
	return s
}

func roundSeconds(d time.Duration) string {
	if d < time.Second {
		return "0s"
	}
	return d.Truncate(time.Second).String()
}

// ProgressLine shows a verification's progress (verify.Options.Progress)
// on w. On a terminal it is one line, "bookgen: 12 of 64 checks done;
// running go test ./examples/x (8s)", redrawn in place every second and
// at each change, and erased by Stop. Elsewhere (a pipe, a CI log) it
// prints a line only when a check has been running for Quiet or more, and
// then at most one line per Every, so that a quick or cached build prints
// nothing and a cold one says what it is waiting for.
type ProgressLine struct {
	w   io.Writer
	tty bool
	// Quiet and Every tune the lines written to a non-terminal (5s and
	// 15s when zero).
	Quiet, Every time.Duration
	now          func() time.Time

	mu       sync.Mutex
	last     verify.Progress
	have     bool
	shown    bool // a line is drawn on the terminal
	lastLine time.Time
	tick     *time.Ticker
	stopTick chan struct{}
	stopped  bool
}

// NewProgressLine returns a ProgressLine writing to w; w is taken to be a
// terminal when it is an *os.File on a character device.
func NewProgressLine(w io.Writer) *ProgressLine {
	return &ProgressLine{w: w, tty: isTerminal(w), now: time.Now}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Update takes the verification's state; it is verify.Options.Progress.
func (l *ProgressLine) Update(p verify.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	l.last, l.have = p, true
	if l.tty {
		if l.tick == nil {
			l.tick = time.NewTicker(time.Second)
			l.stopTick = make(chan struct{})
			go l.redraw(l.tick, l.stopTick)
		}
		l.drawLocked()
		return
	}
	l.logLocked()
}

func (l *ProgressLine) redraw(t *time.Ticker, stop chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			l.mu.Lock()
			if !l.stopped {
				if l.tty {
					l.drawLocked()
				} else {
					l.logLocked()
				}
			}
			l.mu.Unlock()
		}
	}
}

func (l *ProgressLine) drawLocked() {
	if !l.have || l.last.Total == 0 && len(l.last.Running) == 0 {
		if l.shown {
			fmt.Fprint(l.w, "\r\x1b[K")
			l.shown = false
		}
		return
	}
	line := "bookgen: " + ProgressText(l.last, l.now())
	if w := 120; len(line) > w {
		line = line[:w-1] + "…"
	}
	// \r and "erase to end of line" (ECMA-48 EL): one line, redrawn.
	fmt.Fprintf(l.w, "\r%s\x1b[K", line)
	l.shown = true
}

func (l *ProgressLine) logLocked() {
	if !l.have || len(l.last.Running) == 0 {
		return
	}
	quiet, every := l.Quiet, l.Every
	if quiet <= 0 {
		quiet = 5 * time.Second
	}
	if every <= 0 {
		every = 15 * time.Second
	}
	now := l.now()
	if now.Sub(l.last.Since[0]) < quiet || (!l.lastLine.IsZero() && now.Sub(l.lastLine) < every) {
		if l.tick == nil {
			// Come back when the running check has been quiet long enough.
			l.tick = time.NewTicker(time.Second)
			l.stopTick = make(chan struct{})
			go l.redraw(l.tick, l.stopTick)
		}
		return
	}
	l.lastLine = now
	fmt.Fprintf(l.w, "bookgen: %s\n", ProgressText(l.last, now))
}

// Clear ends the display of one verification: the terminal line is
// erased, so that what is printed next starts on a clean line. The next
// Update starts a new display (bookgen serve's next rebuild).
func (l *ProgressLine) Clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clearLocked()
}

func (l *ProgressLine) clearLocked() {
	if l.shown {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.shown = false
	}
	l.have = false
	l.lastLine = time.Time{}
}

// Stop clears the display and writes nothing more.
func (l *ProgressLine) Stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	l.clearLocked()
	l.stopped = true
	if l.tick != nil {
		l.tick.Stop()
		close(l.stopTick)
	}
}

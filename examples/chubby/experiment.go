package chubby

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Dist is a log-normal distribution of durations, given by its median and
// the standard deviation of its logarithm: a long right tail, as pauses
// (garbage collection, a stalled VM) and network delays have. Draws are
// capped at Max when Max is positive.
type Dist struct {
	Median time.Duration
	Sigma  float64
	Max    time.Duration
}

// Draw returns one sample, in whole milliseconds.
func (d Dist) Draw(r *rand.Rand) time.Duration {
	x := float64(d.Median) * math.Exp(d.Sigma*r.NormFloat64())
	v := time.Duration(x).Round(time.Millisecond)
	if d.Max > 0 && v > d.Max {
		v = d.Max
	}
	return v
}

func (d Dist) String() string {
	return fmt.Sprintf("median %s", FormatDuration(d.Median))
}

// Protection is one column of the experiment: a scheme and its settings.
type Protection struct {
	Name      string
	Scheme    Scheme
	LockDelay time.Duration // SchemeLockDelay
	Detector  time.Duration // SchemeOwnership, SchemeOwnershipAtRecord; 0 means the lease
}

// Trial is one draw of the zombie writer: client 1 pauses for Pause at 0s
// and then sends A (taking Delay1); client 2, once it holds the lock, works
// for Think and sends B (taking Delay2). FenceDelay is the ownership
// coordinator's notice to the server.
type Trial struct {
	Pause, Delay1, Think, Delay2, FenceDelay time.Duration
}

// Scenario returns the trial as a Scenario under protection p.
func (t Trial) Scenario(p Protection, lease time.Duration) Scenario {
	return Scenario{
		Scheme:     p.Scheme,
		Lease:      lease,
		LockDelay:  p.LockDelay,
		Detector:   p.Detector,
		FenceDelay: t.FenceDelay,
		Clients: [][]Step{
			{{Kind: Pause, D: t.Pause}, {Kind: Send, D: t.Delay1, Data: "A"}},
			{{Kind: Work, D: t.Think}, {Kind: Send, D: t.Delay2, Data: "B"}},
		},
	}
}

// Outcome sums one protection's trials.
type Outcome struct {
	Protection Protection
	Trials     int
	Failovers  int // trials in which client 2 got the lock (or epoch)
	Unsafe     int // trials in which A was applied after B (Result.Regressed)
	Late       int // trials in which A was applied after generation 34 was granted, before B
	// Outages are, for each failover, the time from client 1's last action
	// to the first applied write of client 2, sorted.
	Outages []time.Duration
}

// MeanOutage returns the mean of Outages (0 for none).
func (o Outcome) MeanOutage() time.Duration {
	if len(o.Outages) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range o.Outages {
		sum += d
	}
	return (sum / time.Duration(len(o.Outages))).Round(100 * time.Millisecond)
}

// Quantile returns the q-quantile of Outages (nearest rank; 0 for none).
func (o Outcome) Quantile(q float64) time.Duration {
	if len(o.Outages) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(o.Outages)))) - 1
	i = min(max(i, 0), len(o.Outages)-1)
	return o.Outages[i].Round(100 * time.Millisecond)
}

// Experiment is the seeded sweep: for each pause distribution and delay
// distribution, Trials draws of a Trial, each played under every
// protection (the same draws for all, so that columns differ only in the
// protection).
type Experiment struct {
	Seed        uint64
	Trials      int
	Lease       time.Duration
	Pauses      []Dist
	Delays      []Dist
	Think       Dist
	Protections []Protection
}

// SweepCell is one (pause, delay) pair of the sweep and its outcomes, one per
// protection in order.
type SweepCell struct {
	Pause, Delay Dist
	Outcomes     []Outcome
}

// Run plays the experiment. The result depends only on the Experiment's
// fields. It fails if a scenario fails to run.
func (e Experiment) Run() ([]SweepCell, error) {
	var cells []SweepCell
	for pi, pd := range e.Pauses {
		for di, dd := range e.Delays {
			r := rand.New(rand.NewPCG(e.Seed, uint64(pi*len(e.Delays)+di)))
			cell := SweepCell{Pause: pd, Delay: dd}
			for _, p := range e.Protections {
				cell.Outcomes = append(cell.Outcomes, Outcome{Protection: p})
			}
			for range e.Trials {
				t := Trial{Pause: pd.Draw(r), Delay1: dd.Draw(r), Think: e.Think.Draw(r), Delay2: dd.Draw(r), FenceDelay: dd.Draw(r)}
				for k, p := range e.Protections {
					res, err := Run(t.Scenario(p, e.Lease))
					if err != nil {
						return nil, fmt.Errorf("%s, trial %+v: %w", p.Name, t, err)
					}
					o := &cell.Outcomes[k]
					o.Trials++
					if !res.Failover {
						continue
					}
					o.Failovers++
					if res.Regressed {
						o.Unsafe++
					} else if res.Late > 0 {
						o.Late++
					}
					if res.NewWrite {
						o.Outages = append(o.Outages, res.FirstNewWrite-res.LastHeard)
					}
				}
			}
			for k := range cell.Outcomes {
				slices.Sort(cell.Outcomes[k].Outages)
			}
			cells = append(cells, cell)
		}
	}
	return cells, nil
}

// DefaultExperiment is the sweep the chapter prints: Chubby's 12s lease;
// pauses with medians 1s, 5s and 20s; network delays with medians 10ms and
// 1s; client 2 working a median 1s before its write; and eight protections
// (the last, the ownership model with a 2s detector and a server that checks
// the record, is the counterpart of the sequencer checked at the cell).
func DefaultExperiment() Experiment {
	return Experiment{
		Seed:   1,
		Trials: 2000,
		Lease:  DefaultLease,
		Pauses: []Dist{
			{Median: time.Second, Sigma: 1.5, Max: 10 * time.Minute},
			{Median: 5 * time.Second, Sigma: 1.5, Max: 10 * time.Minute},
			{Median: 20 * time.Second, Sigma: 1.5, Max: 10 * time.Minute},
		},
		Delays: []Dist{
			{Median: 10 * time.Millisecond, Sigma: 2, Max: 5 * time.Minute},
			{Median: time.Second, Sigma: 2, Max: 5 * time.Minute},
		},
		Think: Dist{Median: time.Second, Sigma: 1, Max: time.Minute},
		Protections: []Protection{
			{Name: "unchecked", Scheme: SchemeUnchecked},
			{Name: "lock-delay 10s", Scheme: SchemeLockDelay, LockDelay: 10 * time.Second},
			{Name: "lock-delay 1m", Scheme: SchemeLockDelay, LockDelay: time.Minute},
			{Name: "seq, at cell", Scheme: SchemeSequencerAtCell},
			{Name: "seq, newest", Scheme: SchemeSequencerNewest},
			{Name: "ownership 12s", Scheme: SchemeOwnership, Detector: 12 * time.Second},
			{Name: "ownership 2s", Scheme: SchemeOwnership, Detector: 2 * time.Second},
			{Name: "own 2s, record", Scheme: SchemeOwnershipAtRecord, Detector: 2 * time.Second},
		},
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0)) }

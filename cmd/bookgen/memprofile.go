package main

import (
	"bytes"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

// peakHeapProfile samples the heap every 100 ms and, each time the heap in
// use is larger than at any sample before, keeps a heap profile taken
// then; the returned stop writes the largest to file. A profile taken at
// exit would show what is left after the build, not what made its peak.
// Profiles count live objects as of the last garbage collection.
func peakHeapProfile(file string) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	var best bytes.Buffer
	go func() {
		defer close(finished)
		var peak uint64
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak {
				peak = ms.HeapInuse
				best.Reset()
				_ = pprof.Lookup("heap").WriteTo(&best, 0)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		_ = os.WriteFile(file, best.Bytes(), 0o644)
	}
}

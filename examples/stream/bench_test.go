package stream

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkMachineApply measures one producer append through the machine's
// byte interface (decode, producer rule, append, encode the result), the
// work every voter does per log entry.
func BenchmarkMachineApply(b *testing.B) {
	m := NewMachine()
	m.ApplyCommand(create("s", "application/octet-stream"))
	data := make([]byte, 100)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		c := Command{Op: OpAppend, Stream: "s", Now: t0, ContentType: "application/octet-stream",
			Producer: &Producer{ID: "p", Epoch: 0, Seq: uint64(i)}, Messages: [][]byte{data}}
		if r, _ := DecodeResult(m.Apply(c.Encode())); r.Outcome != Appended {
			b.Fatalf("append %d: %s %s", i, r.Outcome, r.Message)
		}
	}
}

// heapAfter returns the live heap in bytes after a full collection.
func heapAfter() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkMemoryPerProducer measures the state one producer id costs a
// stream (its epoch and last sequence number, and the map entry): every
// voter keeps it for as long as the stream lives, and the protocol sets no
// limit on the number of producer ids. Reported as bytes/producer, each
// producer having made one 8-byte append with a 16-byte id.
func BenchmarkMemoryPerProducer(b *testing.B) {
	const n = 100_000
	for b.Loop() {
		before := heapAfter()
		m := NewMachine()
		m.ApplyCommand(create("s", "application/octet-stream"))
		for i := range n {
			c := Command{Op: OpAppend, Stream: "s", Now: t0, ContentType: "application/octet-stream",
				Producer: &Producer{ID: fmt.Sprintf("producer-%07d", i)}, Messages: [][]byte{[]byte("12345678")}}
			m.ApplyCommand(c)
		}
		b.ReportMetric(float64(heapAfter()-before)/n, "bytes/producer")
		runtime.KeepAlive(m)
	}
}

// BenchmarkMemoryPerStream measures an empty stream's state (name,
// content type, incarnation, map entries).
func BenchmarkMemoryPerStream(b *testing.B) {
	const n = 100_000
	for b.Loop() {
		before := heapAfter()
		m := NewMachine()
		for i := range n {
			m.ApplyCommand(create(fmt.Sprintf("stream-%07d", i), "application/octet-stream"))
		}
		b.ReportMetric(float64(heapAfter()-before)/n, "bytes/stream")
		runtime.KeepAlive(m)
	}
}

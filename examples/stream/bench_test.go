package stream

import "testing"

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

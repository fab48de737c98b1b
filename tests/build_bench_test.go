package tests

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// BenchmarkBuild runs "bookgen build" as a process of its own on
// generated books of 100, 1,000 and 4,000 chapters (genBook: prose, a
// table, a Go listing and an ignored transcript per chapter), each into a
// new output folder with the verification cache warm, as a second build
// of a book is. It reports ms/page and pages/s, which stay flat as the
// book grows when the build is not quadratic, and the process's peak RSS
// (the largest of the runs). bench/hugo.sh compares the same build with
// Hugo's on ../shared/bench's corpus. Run with
//
//	go test ./tests -run '^$' -bench Build -benchtime 3x
func BenchmarkBuild(b *testing.B) {
	bin := bookgen(b)
	for _, n := range []int{100, 1000, 4000} {
		b.Run(fmt.Sprintf("chapters=%d", n), func(b *testing.B) {
			root, _ := genBook(b, n)
			out := b.TempDir()
			run := func(dir string) int64 {
				cmd := exec.Command(bin, "build", "-o", dir)
				cmd.Dir = root
				if msg, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("bookgen build: %v\n%s", err, msg)
				}
				ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
				if !ok {
					return 0
				}
				return ru.Maxrss // KiB on Linux
			}
			run(filepath.Join(out, "warm")) // fills the verification cache
			var peak int64
			k := 0
			for b.Loop() {
				k++
				peak = max(peak, run(filepath.Join(out, fmt.Sprint(k))))
			}
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N*n)
			b.ReportMetric(per/1e6, "ms/page")
			b.ReportMetric(1e9/per, "pages/s")
			b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
		})
	}
}

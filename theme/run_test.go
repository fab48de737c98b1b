package theme

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunJSMatchCases runs the transcript matcher of run.js (the part
// between its matcher:begin and matcher:end lines: outputLines and
// firstDifference) in Node over internal/markdown/testdata/match.json,
// the cases Go's matcher passes (markdown TestMatchCases): the page says
// "matches" exactly when the build would.
func TestRunJSMatchCases(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no node on PATH (CI is set): run.js's matcher cannot be checked")
		}
		t.Skip("no node on PATH")
	}
	src, err := FS.ReadFile("run.js")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	begin, end := strings.Index(s, "// matcher:begin"), strings.Index(s, "// matcher:end")
	if begin < 0 || end < begin {
		t.Fatal("run.js has no matcher:begin ... matcher:end part")
	}
	cases, err := filepath.Abs(filepath.Join("..", "internal", "markdown", "testdata", "match.json"))
	if err != nil {
		t.Fatal(err)
	}
	script := s[begin:end] + `
const cases = JSON.parse(require("fs").readFileSync(process.argv[2], "utf8")).cases;
let n = 0;
for (const c of cases) {
  n++;
  const lines = outputLines(c.actual);
  if (c.lines && JSON.stringify(lines) !== JSON.stringify(c.lines)) {
    console.log(c.name + ": outputLines gives " + JSON.stringify(lines) + ", want " + JSON.stringify(c.lines));
  }
  const match = firstDifference(c.expected, lines) === -1;
  if (match !== c.match) console.log(c.name + ": matches " + match + ", want " + c.match);
}
console.log("ran " + n);
`
	p := filepath.Join(t.TempDir(), "match.js")
	if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, p, cases).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	got := strings.TrimSpace(string(out))
	if !strings.HasPrefix(got, "ran ") || got == "ran 0" {
		t.Fatalf("run.js's matcher over the shared cases:\n%s", got)
	}
}

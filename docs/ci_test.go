package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeTestCommandRe finds the test command in README.md's "Two commands"
// block: the line that starts with `make test`, up to its comment.
var readmeTestCommandRe = regexp.MustCompile("(?m)^(make test)\\b[^#\n]*")

// TestCIRunsTheReadmeTestCommand: .ci/run says it runs exactly the test
// command README.md gives a newcomer; if either changed alone, CI would
// test something other than what a reader is told to run.
func TestCIRunsTheReadmeTestCommand(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := readmeTestCommandRe.FindString(string(readme))
	if m == "" {
		t.Fatal("README.md gives no line starting with `make test`")
	}
	want := strings.TrimSpace(m)
	ci, err := os.ReadFile(filepath.Join("..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	var commands []string
	for _, line := range strings.Split(string(ci), "\n") {
		line = strings.TrimSpace(line)
		// The shell's own settings and the move to the repository root
		// prepare the run; they are not the test command.
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "set ") || strings.HasPrefix(line, "cd ") {
			continue
		}
		commands = append(commands, line)
	}
	if len(commands) != 1 || commands[0] != want {
		t.Errorf(".ci/run runs %q; README.md's test command is %q", commands, want)
	}
}

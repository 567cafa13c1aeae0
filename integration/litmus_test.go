package integration

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// litmusSuites is litmus's whole default run, in its order.
var litmusSuites = []string{"basic", "copymove", "props", "locks", "http"}

// TestLitmus runs every litmus suite in one litmus run against the real
// Caddy over plain HTTP (so http/expect100 runs too), on every deployment,
// and requires each suite to run all its tests with no failure, no warning
// and nothing skipped.
func TestLitmus(t *testing.T) {
	t.Parallel()
	litmus := requirePeer(t, "litmus")
	onEachDeployment(t, serverOptions{}, func(t *testing.T, s *server) { litmusRun(t, litmus, s) })
}

func litmusRun(t *testing.T, litmus string, s *server) {
	// --keep-going: a failing suite must not hide the ones after it.
	out, err := runPeer(t, 5*time.Minute, "", "env", "TESTS="+strings.Join(litmusSuites, " "),
		litmus, "--keep-going", s.URL+"/webdav/", "einstein", users["einstein"])
	if err != nil {
		t.Errorf("litmus: %v", err)
	}
	results := parseLitmus(out)
	for _, suite := range litmusSuites {
		t.Run(suite, func(t *testing.T) {
			r, ok := results[suite]
			if !ok {
				t.Fatalf("litmus did not run the %s suite:\n%s", suite, out)
			}
			t.Log(r.summary)
			if suite == "http" && !r.ran("expect100") {
				t.Errorf("litmus http did not run expect100, which only runs over plain HTTP:\n%s", r.output)
			}
			if problems := r.problems(); len(problems) > 0 {
				t.Errorf("litmus %s: %s\n%s", suite, strings.Join(problems, "; "), r.output)
			}
		})
	}
}

// litmusSuite is what litmus printed for one suite.
type litmusSuite struct {
	output  string
	summary string // the "<- summary for ..." line
	// run, passed and failed are the summary's counts; warnings and skipped
	// its "-> N ..." lines.
	run, passed, failed, warnings, skipped int
	// tests are the suite's tests by name, each with everything printed
	// for it.
	tests []litmusTest
}

type litmusTest struct {
	name, output string
}

var (
	litmusSuiteStart = regexp.MustCompile("(?m)^-> running `([a-z0-9]+)':$")
	// A test's line, once it has an outcome: litmus first prints the
	// name alone and prints it again with the outcome, not always at the
	// start of a line.
	litmusTestLine = regexp.MustCompile(`\d+\. ([A-Za-z0-9_]+)\.* +(?:pass|FAIL|SKIPPED|WARNING:|XFAIL)`)
	litmusSummary  = regexp.MustCompile("(?m)^<- summary for `[a-z0-9]+': of (\\d+) tests run: (\\d+) passed, (\\d+) failed\\..*$")
	litmusWarnings = regexp.MustCompile(`(?m)^-> (\d+) warnings? (?:was|were) issued\.$`)
	litmusSkipped  = regexp.MustCompile(`(?m)^-> (\d+) tests? (?:was|were) skipped\.$`)
)

// parseLitmus splits litmus's output into its suites.
func parseLitmus(out string) map[string]*litmusSuite {
	suites := map[string]*litmusSuite{}
	starts := litmusSuiteStart.FindAllStringSubmatchIndex(out, -1)
	for i, m := range starts {
		end := len(out)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		suites[out[m[2]:m[3]]] = parseLitmusSuite(out[m[0]:end])
	}
	return suites
}

func parseLitmusSuite(text string) *litmusSuite {
	s := &litmusSuite{output: text}
	if m := litmusSummary.FindStringSubmatch(text); m != nil {
		s.summary = m[0]
		s.run, _ = strconv.Atoi(m[1])
		s.passed, _ = strconv.Atoi(m[2])
		s.failed, _ = strconv.Atoi(m[3])
	}
	if m := litmusWarnings.FindStringSubmatch(text); m != nil {
		s.warnings, _ = strconv.Atoi(m[1])
	}
	if m := litmusSkipped.FindStringSubmatch(text); m != nil {
		s.skipped, _ = strconv.Atoi(m[1])
	}
	lines := litmusTestLine.FindAllStringSubmatchIndex(text, -1)
	for i, m := range lines {
		end := len(text)
		if i+1 < len(lines) {
			end = lines[i+1][0]
		}
		s.tests = append(s.tests, litmusTest{name: text[m[2]:m[3]], output: text[m[0]:end]})
	}
	return s
}

// problems says what keeps the suite from a clean pass, naming the tests.
func (s *litmusSuite) problems() []string {
	var out []string
	if s.summary == "" {
		out = append(out, "no summary line (all tests skipped, or litmus stopped)")
	} else if s.failed > 0 || s.passed != s.run {
		out = append(out, fmt.Sprintf("%d of %d failed", s.failed, s.run))
	}
	if s.warnings > 0 {
		out = append(out, fmt.Sprintf("%d warnings", s.warnings))
	}
	if s.skipped > 0 {
		out = append(out, fmt.Sprintf("%d skipped", s.skipped))
	}
	for _, kind := range []struct{ label, marker string }{
		{"failed", "FAIL"}, {"warned", "WARNING:"}, {"skipped", "SKIPPED"},
	} {
		if names := s.testsShowing(kind.marker); len(names) > 0 {
			out = append(out, kind.label+": "+strings.Join(names, ", "))
		}
	}
	return out
}

// ran reports whether the suite ran the test name to an outcome.
func (s *litmusSuite) ran(name string) bool {
	for _, t := range s.tests {
		if t.name == name {
			return true
		}
	}
	return false
}

// testsShowing names the tests whose output contains marker.
func (s *litmusSuite) testsShowing(marker string) []string {
	var names []string
	for _, t := range s.tests {
		if strings.Contains(t.output, marker) {
			names = append(names, t.name)
		}
	}
	return names
}

func TestParseLitmus(t *testing.T) {
	t.Parallel()
	// As litmus prints without a terminal: each name once alone and once
	// with its outcome, a warning's outcome on a line of its own.
	const out = "-> running `basic':\n" +
		" 0. init..................  0. init.................. pass\n" +
		" 1. options............... WARNING: server does not claim Class 2 compliance\n" +
		"    ...................... pass (with 1 warning)\n" +
		"    ......................  2. put_get............... FAIL (PUT of `/webdav/litmus/res' failed: 500 Internal Server Error)\n" +
		" 3. finish................  3. finish................ pass\n" +
		"<- summary for `basic': of 4 tests run: 3 passed, 1 failed. 75.0%\n" +
		"-> 1 warning was issued.\n" +
		"See debug.log for network/debug traces.\n" +
		"-> running `locks':\n" +
		" 0. init..................  0. init.................. pass\n" +
		" 1. precond...............  1. precond............... SKIPPED (locking tests skipped,\n" +
		"server does not claim Class 2 compliance)\n" +
		"-> 1 test was skipped.\n" +
		"<- summary for `locks': of 1 tests run: 1 passed, 0 failed. 100.0%\n" +
		"-> running `http':\n" +
		" 0. init..................  0. init.................. pass\n" +
		" 1. expect100.............  1. expect100............. pass\n" +
		"<- summary for `http': of 2 tests run: 2 passed, 0 failed. 100.0%\n" +
		"-> running `props':\n" +
		" 0. init..................  0. init.................. pass\n"
	suites := parseLitmus(out)
	tests := []struct {
		suite string
		want  []string // problems, in order
	}{
		{"basic", []string{"1 of 4 failed", "1 warnings", "failed: put_get", "warned: options"}},
		{"locks", []string{"1 skipped", "skipped: precond"}},
		{"http", nil},
		{"props", []string{"no summary line (all tests skipped, or litmus stopped)"}},
	}
	for _, tt := range tests {
		t.Run(tt.suite, func(t *testing.T) {
			s, ok := suites[tt.suite]
			if !ok {
				t.Fatalf("suite %s not found in %v", tt.suite, suites)
			}
			if got := s.problems(); strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("problems %q, want %q", got, tt.want)
			}
		})
	}
	if !suites["http"].ran("expect100") || suites["http"].ran("init_expect100") {
		t.Errorf("http: ran(expect100) must find exactly that test")
	}
	if len(suites) != len(tests) {
		t.Errorf("%d suites parsed, want %d", len(suites), len(tests))
	}
}

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// tmuxPane is a detached tmux session, on a tmux server of its own (its
// own socket), running one command in a 120x30 pane.
type tmuxPane struct {
	t       *testing.T
	socket  string
	session string
}

// requireTmux skips the test without tmux, or fails it in CI (env CI set).
func requireTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("tmux is not installed (CI is set, so this is a failure; scripts/test installs it): %v", err)
		}
		t.Skipf("tmux is not installed: %v", err)
	}
}

// newTmuxPane starts command in a detached tmux session.
func newTmuxPane(t *testing.T, command string) *tmuxPane {
	t.Helper()
	requireTmux(t)
	// A short directory of our own: socket paths are limited to ~100 bytes.
	dir, err := os.MkdirTemp("", "tmux-")
	if err != nil {
		t.Fatal(err)
	}
	p := &tmuxPane{t: t, socket: filepath.Join(dir, "sock"), session: "repl"}
	t.Cleanup(func() {
		exec.Command("tmux", "-S", p.socket, "kill-session", "-t", p.session).Run()
		exec.Command("tmux", "-S", p.socket, "kill-server").Run()
		os.RemoveAll(dir)
	})
	p.tmux("new-session", "-d", "-s", p.session, "-x", "120", "-y", "30", command)
	return p
}

func (p *tmuxPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// typeText types text literally; keys sends tmux key names (Enter, C-u).
func (p *tmuxPane) typeText(text string) {
	p.t.Helper()
	p.tmux("send-keys", "-t", p.session, "-l", text)
}
func (p *tmuxPane) keys(keys ...string) {
	p.t.Helper()
	p.tmux(append([]string{"send-keys", "-t", p.session}, keys...)...)
}

func (p *tmuxPane) capture() string {
	p.t.Helper()
	return p.tmux("capture-pane", "-p", "-t", p.session)
}

// waitFor polls the pane until ok accepts it, for at most 20s.
func (p *tmuxPane) waitFor(what string, ok func(screen string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var screen string
	for time.Now().Before(deadline) {
		screen = p.capture()
		if ok(screen) {
			return screen
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.t.Fatalf("tmux pane never showed %s; last screen:\n%s", what, screen)
	return ""
}

func (p *tmuxPane) waitText(want ...string) string {
	p.t.Helper()
	return p.waitFor(fmt.Sprintf("%q", want), func(screen string) bool {
		for _, w := range want {
			if !strings.Contains(screen, w) {
				return false
			}
		}
		return true
	})
}

// hintLine is a hint bar line for time_now: name, score with 2 decimals,
// description; "› " marks a highlighted hint.
var hintLine = regexp.MustCompile(`^(› |  )time_now +\d\.\d\d  \S`)

func TestREPLInTmux(t *testing.T) {
	requireTmux(t)
	s := startServer(t)
	// Does this server have Prefetch yet? Ask with a session of our own,
	// so the REPL's session still gets every recommendation.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := s.conn(t).Prefetch(ctx, &tooldexv1.PrefetchRequest{SessionId: "e2e-probe", Message: "what time is it in Tokyo"})
	prefetch := status.Code(err) != codes.Unimplemented
	if prefetch && err != nil {
		t.Fatalf("Prefetch: %v", err)
	}
	t.Logf("server has Prefetch: %v", prefetch)

	bin := filepath.Join(binaries(t), "tooldex")
	settings := filepath.Join(t.TempDir(), "settings.json") // missing: defaults
	p := newTmuxPane(t, fmt.Sprintf("%q repl --addr %q --settings %q", bin, s.addr, settings))
	p.waitText("/help lists commands", "> ")

	p.typeText("what time is it in Tokyo")
	if prefetch {
		p.waitFor("a hint bar with time_now above the input", func(screen string) bool {
			lines := strings.Split(screen, "\n")
			for i, line := range lines {
				if strings.HasPrefix(line, "> what time is it in Tokyo") {
					for _, above := range lines[max(i-4, 0):i] {
						if hintLine.MatchString(above) {
							return true
						}
					}
				}
			}
			return false
		})
	} else {
		screen := p.waitText("hints unavailable: server has no Prefetch")
		if strings.Contains(screen, "Tab select") {
			t.Errorf("hint bar shown although the server has no Prefetch:\n%s", screen)
		}
	}

	p.keys("C-u")
	p.typeText("/search time")
	p.keys("Enter")
	screen := p.waitFor("the /search time table", func(screen string) bool {
		return regexp.MustCompile(`(?m)^\d+ +time_now +\d\.\d{3} `).MatchString(screen) && strings.Contains(screen, "result(s)")
	})
	if !strings.Contains(screen, "> /search time") || !strings.Contains(screen, "NAME") {
		t.Errorf("/search output lacks its echo or header:\n%s", screen)
	}

	p.typeText(`/exec time_now {"zone": "Asia/Tokyo"}`)
	p.keys("Enter")
	p.waitText(`"zone": "Asia/Tokyo"`, `"utc_offset": "+09:00"`)

	p.typeText("/quit")
	p.keys("Enter")
	deadline := time.Now().Add(10 * time.Second)
	for exec.Command("tmux", "-S", p.socket, "has-session", "-t", p.session).Run() == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the REPL did not quit on /quit:\n%s", p.capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

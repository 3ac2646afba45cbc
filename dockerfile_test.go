package tooldex_test

import (
	"encoding/json"
	"go/build"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction with its continuation lines
// joined.
type instruction struct {
	line int    // line number of the instruction's first line
	cmd  string // upper-case keyword: FROM, COPY, RUN, ...
	args string // the rest of the instruction
}

// stage is one FROM ... section of a multi-stage Dockerfile.
type stage struct {
	name  string // the AS name, lower-case; "" if none
	image string
	insts []instruction
}

// parseDockerfile splits a Dockerfile into stages. It handles comments,
// blank lines and backslash line continuations, which is all this
// repository's Dockerfile uses; heredocs are not supported.
func parseDockerfile(t *testing.T, name string) []stage {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("reading Dockerfile: %v", err)
	}
	var (
		stages  []stage
		pending strings.Builder
		start   int
	)
	flush := func() {
		text := strings.TrimSpace(pending.String())
		pending.Reset()
		if text == "" {
			return
		}
		cmd, args, _ := strings.Cut(text, " ")
		inst := instruction{line: start, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		if inst.cmd == "FROM" {
			f := strings.Fields(inst.args)
			f = slices.DeleteFunc(f, func(s string) bool { return strings.HasPrefix(s, "--") })
			st := stage{}
			if len(f) > 0 {
				st.image = f[0]
			}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = strings.ToLower(f[2])
			}
			stages = append(stages, st)
			return
		}
		if len(stages) == 0 {
			t.Fatalf("Dockerfile line %d: %s before the first FROM", inst.line, inst.cmd)
		}
		st := &stages[len(stages)-1]
		st.insts = append(st.insts, inst)
	}
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimRight(raw, " \t\r")
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || (trimmed == "" && pending.Len() == 0) {
			continue // comments (and parser directives) may sit inside a continued instruction
		}
		if pending.Len() == 0 {
			start = i + 1
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			pending.WriteString(cont + " ")
			continue
		}
		pending.WriteString(line)
		flush()
	}
	flush()
	if len(stages) == 0 {
		t.Fatal("Dockerfile has no FROM instruction")
	}
	return stages
}

// shellWords splits a shell command into words, honouring single and double
// quotes and backslash escapes. The operators &&, ||, ; and | are returned
// as separate words when they stand alone or end a word.
func shellWords(s string) []string {
	var (
		words []string
		cur   strings.Builder
		in    bool // cur holds a word, possibly empty ("")
		quote rune
	)
	end := func() {
		if in {
			words = append(words, cur.String())
		}
		cur.Reset()
		in = false
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else if r == '\\' && quote == '"' && i+1 < len(rs) {
				i++
				cur.WriteRune(rs[i])
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
			in = true
		case r == ' ' || r == '\t' || r == '\n':
			end()
		case r == ';':
			end()
			words = append(words, ";")
		case r == '&' || r == '|':
			end()
			op := string(r)
			if i+1 < len(rs) && rs[i+1] == r {
				op += string(r)
				i++
			}
			words = append(words, op)
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	end()
	return words
}

// simpleCommands splits shell words at &&, ||, ; and |.
func simpleCommands(words []string) [][]string {
	var cmds [][]string
	var cur []string
	for _, w := range words {
		switch w {
		case "&&", "||", ";", "|", "&":
			if len(cur) > 0 {
				cmds = append(cmds, cur)
			}
			cur = nil
		default:
			cur = append(cur, w)
		}
	}
	if len(cur) > 0 {
		cmds = append(cmds, cur)
	}
	return cmds
}

// goBuild is one `go build` found in a RUN instruction.
type goBuild struct {
	line   int
	env    map[string]string // VAR=value prefixes
	output string            // the -o value
	pkgs   []string          // package arguments
}

// goBuilds returns the `go build` commands of a stage's RUN instructions.
func goBuilds(st stage) []goBuild {
	var out []goBuild
	for _, inst := range st.insts {
		if inst.cmd != "RUN" {
			continue
		}
		words := shellWords(inst.args)
		for len(words) > 0 && strings.HasPrefix(words[0], "--") {
			words = words[1:] // RUN's own flags: --mount=..., --network=...
		}
		for _, cmd := range simpleCommands(words) {
			env := map[string]string{}
			for len(cmd) > 0 && strings.Contains(cmd[0], "=") && !strings.HasPrefix(cmd[0], "-") {
				k, v, _ := strings.Cut(cmd[0], "=")
				env[k] = v
				cmd = cmd[1:]
			}
			if len(cmd) < 2 || path.Base(cmd[0]) != "go" || cmd[1] != "build" {
				continue
			}
			b := goBuild{line: inst.line, env: env}
			args := cmd[2:]
			for i := 0; i < len(args); i++ {
				a := args[i]
				if !strings.HasPrefix(a, "-") {
					b.pkgs = append(b.pkgs, a)
					continue
				}
				name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
				// Flags that take a value in the next word when not given as -flag=value.
				switch name {
				case "o", "ldflags", "gcflags", "asmflags", "gccgoflags", "tags", "mod", "modfile",
					"pkgdir", "buildmode", "compiler", "installsuffix", "overlay", "pgo", "p", "toolexec", "C", "coverpkg", "covermode", "buildvcs":
					if !hasVal && i+1 < len(args) && name != "buildvcs" {
						i++
						val = args[i]
					}
				}
				if name == "o" {
					b.output = val
				}
			}
			out = append(out, b)
		}
	}
	return out
}

// copyArgs returns the flags, sources and destination of a COPY or ADD,
// in shell or JSON form.
func copyArgs(inst instruction) (flags map[string]string, srcs []string, dest string) {
	flags = map[string]string{}
	var words []string
	if strings.HasPrefix(inst.args, "[") && json.Unmarshal([]byte(inst.args), &words) == nil {
		// JSON form cannot carry flags.
	} else {
		for _, w := range strings.Fields(inst.args) {
			if strings.HasPrefix(w, "--") && len(words) == 0 {
				k, v, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
				flags[k] = v
				continue
			}
			words = append(words, w)
		}
	}
	if len(words) < 2 {
		return flags, nil, ""
	}
	return flags, words[:len(words)-1], words[len(words)-1]
}

// installedPath is where COPY puts src given dest.
func installedPath(src, dest string, nsrc int) string {
	if strings.HasSuffix(dest, "/") || nsrc > 1 {
		return path.Join(dest, path.Base(src))
	}
	return dest
}

func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t, "Dockerfile")
	if got, want := len(stages), 2; got < want {
		t.Fatalf("Dockerfile has %d stages, want at least %d (build and runtime)", got, want)
	}
	final := stages[len(stages)-1]
	buildIdx := slices.IndexFunc(stages, func(s stage) bool { return s.name == "build" })
	if buildIdx < 0 || buildIdx == len(stages)-1 {
		t.Fatalf("build stage index = %d, want a stage named \"build\" before the final stage", buildIdx)
	}
	buildStage := stages[buildIdx]

	t.Run("BuildContextCopies", func(t *testing.T) {
		for _, inst := range buildStage.insts {
			if inst.cmd != "COPY" && inst.cmd != "ADD" {
				continue
			}
			flags, srcs, _ := copyArgs(inst)
			if _, ok := flags["from"]; ok {
				continue
			}
			for _, src := range srcs {
				if strings.Contains(src, "://") {
					continue // ADD from a URL
				}
				matches, err := filepath.Glob(filepath.FromSlash(src))
				if err != nil {
					t.Errorf("line %d: %s source %q: bad pattern: %v", inst.line, inst.cmd, src, err)
					continue
				}
				if got := len(matches); got == 0 {
					t.Errorf("line %d: %s source %q matches %d paths in the repository, want at least 1", inst.line, inst.cmd, src, got)
				}
			}
		}
	})

	builds := goBuilds(buildStage)
	outputs := map[string]bool{} // cleaned -o paths of the build stage
	for _, b := range builds {
		if b.output != "" {
			outputs[path.Clean(b.output)] = true
		}
	}
	t.Run("GoBuildPackages", func(t *testing.T) {
		if got := len(builds); got == 0 {
			t.Fatalf("build stage has %d `go build` commands, want at least 1", got)
		}
		for _, b := range builds {
			if b.output == "" {
				t.Errorf("line %d: go build %v has no -o, want an explicit output path", b.line, b.pkgs)
			}
			if got := len(b.pkgs); got == 0 {
				t.Errorf("line %d: go build has %d package arguments, want at least 1", b.line, got)
			}
			ctxt := build.Default
			ctxt.GOOS = "linux"
			if b.env["CGO_ENABLED"] == "0" {
				ctxt.CgoEnabled = false
			}
			for _, pkg := range b.pkgs {
				if !strings.HasPrefix(pkg, "./") {
					continue // not a path in the repository
				}
				dir := filepath.FromSlash(pkg)
				if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
					t.Errorf("line %d: go build %s: directory %s: got error %v, want an existing directory", b.line, pkg, dir, err)
					continue
				}
				p, err := ctxt.ImportDir(dir, 0)
				if err != nil {
					t.Errorf("line %d: go build %s: loading package: %v", b.line, pkg, err)
					continue
				}
				if got, want := p.Name, "main"; got != want {
					t.Errorf("line %d: go build %s: package name = %q, want %q", b.line, pkg, got, want)
				}
			}
		}
	})

	t.Run("FinalUserNotRoot", func(t *testing.T) {
		user := ""
		for _, inst := range final.insts {
			if inst.cmd == "USER" {
				user = inst.args
			}
		}
		if user == "" {
			t.Fatalf("final stage USER = %q, want a non-root user", user)
		}
		name, _, _ := strings.Cut(user, ":")
		if name == "root" || name == "0" {
			t.Errorf("final stage USER = %q, want a non-root user", user)
		}
	})

	t.Run("EntrypointBuilt", func(t *testing.T) {
		var entry string
		for _, inst := range final.insts {
			if inst.cmd != "ENTRYPOINT" {
				continue
			}
			var argv []string
			if err := json.Unmarshal([]byte(inst.args), &argv); err == nil {
				entry = ""
				if len(argv) > 0 {
					entry = argv[0]
				}
			} else if w := shellWords(inst.args); len(w) > 0 {
				entry = w[0]
			}
		}
		if entry == "" {
			t.Fatal("final stage has no ENTRYPOINT, want one that runs a binary built in the build stage")
		}
		// Which build outputs the final stage installs, and where.
		installed := map[string]string{} // path in final image -> build output
		for _, inst := range final.insts {
			if inst.cmd != "COPY" {
				continue
			}
			flags, srcs, dest := copyArgs(inst)
			if from := strings.ToLower(flags["from"]); from != "build" && from != strconv.Itoa(buildIdx) {
				continue
			}
			for _, src := range srcs {
				installed[installedPath(src, dest, len(srcs))] = path.Clean(src)
			}
		}
		src, ok := installed[path.Clean(entry)]
		if !ok {
			t.Fatalf("ENTRYPOINT %q: not copied from the build stage; copied paths = %v", entry, keys(installed))
		}
		if !outputs[src] {
			t.Errorf("ENTRYPOINT %q is copied from %q; build stage go build outputs = %v, want it among them", entry, src, keys(outputs))
		}
	})
}

func keys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// dockerignored reports whether a .dockerignore pattern keeps p (a
// slash-separated path in the build context) out: the pattern matches p or
// one of its parent directories, `**` matching any number of directories, as
// Docker's matcher does.
func dockerignored(pattern, p string) bool {
	pat := strings.Split(path.Clean(strings.TrimPrefix(pattern, "/")), "/")
	segs := strings.Split(p, "/")
	for n := 1; n <= len(segs); n++ {
		if matchSegments(pat, segs[:n]) {
			return true
		}
	}
	return false
}

func matchSegments(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if matchSegments(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	ok, err := path.Match(pat[0], segs[0])
	return err == nil && ok && matchSegments(pat[1:], segs[1:])
}

func TestDockerignoreMatcher(t *testing.T) {
	tests := []struct {
		pattern, p string
		want       bool
	}{
		{"node_modules", "node_modules/x/index.js", true},
		{"node_modules", "testdata/mcp/node_modules", false},
		{"**/node_modules", "testdata/mcp/node_modules/a/b.js", true},
		{"**/node_modules", "node_modules", true},
		{"**/*.test", "cmd/server/server.test", true},
		{".git", ".gitignore", false},
		{"bin/", "bin/tooldex", true},
	}
	for _, tt := range tests {
		if got := dockerignored(tt.pattern, tt.p); got != tt.want {
			t.Errorf("dockerignored(%q, %q) = %v, want %v", tt.pattern, tt.p, got, tt.want)
		}
	}
}

// TestDockerignore: node_modules stays out of the build context at every
// depth (the npm fixtures hold hundreds of MB), and every file git tracks
// (sources, go.mod, embedded catalogs and descriptors) stays in.
func TestDockerignore(t *testing.T) {
	data, err := os.ReadFile(".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "!") {
			t.Fatalf(".dockerignore: exception %q: this test does not model exceptions", line)
		}
		patterns = append(patterns, line)
	}
	ignored := func(p string) bool {
		return slices.ContainsFunc(patterns, func(pat string) bool { return dockerignored(pat, p) })
	}
	for _, p := range []string{"node_modules", "examples/node-frontend/node_modules", "testdata/mcp/node_modules/x/package.json", "a/b/c/node_modules", ".git/HEAD"} {
		if !ignored(p) {
			t.Errorf(".dockerignore lets %s into the build context", p)
		}
	}
	gitFiles, err := exec.Command("git", "ls-files").Output()
	if err != nil {
		t.Skipf("git ls-files: %v", err)
	}
	for _, f := range strings.Fields(string(gitFiles)) {
		if ignored(f) {
			t.Errorf(".dockerignore keeps the tracked file %s out of the build context", f)
		}
	}
}

// TestDockerfileDownloadsOnlyWhatItBuilds: no `go mod download` of the
// whole module graph (test-only modules included): go build fetches what
// the binaries import.
func TestDockerfileDownloadsOnlyWhatItBuilds(t *testing.T) {
	for _, st := range parseDockerfile(t, "Dockerfile") {
		for _, inst := range st.insts {
			if inst.cmd != "RUN" {
				continue
			}
			w := shellWords(inst.args)
			for i := 0; i+2 < len(w); i++ {
				if w[i] == "go" && w[i+1] == "mod" && w[i+2] == "download" && (i+3 == len(w) || strings.HasPrefix(w[i+3], "-") || w[i+3] == "&&") {
					t.Errorf("line %d: go mod download fetches every module of go.mod, test-only ones too; let go build fetch what it builds", inst.line)
				}
			}
		}
	}
}

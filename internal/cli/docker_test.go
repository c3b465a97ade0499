package cli

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// dockerInstr is one instruction of a Dockerfile.
type dockerInstr struct {
	line int
	cmd  string // upper case: FROM, RUN, COPY...
	args string
}

// dockerStage is the instructions from one FROM to the next.
type dockerStage struct {
	from  dockerInstr
	image string
	name  string
	body  []dockerInstr
}

// parseDockerfile reads a Dockerfile as the builder does: comment lines
// dropped, lines ending in a backslash joined, one instruction a line.
func parseDockerfile(t *testing.T, path string) []dockerStage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var instrs []dockerInstr
	var cur strings.Builder
	start := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") || (l == "" && cur.Len() == 0) {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		if rest, ok := strings.CutSuffix(l, `\`); ok {
			cur.WriteString(rest + " ")
			continue
		}
		cur.WriteString(l)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		if !regexp.MustCompile(`^[A-Za-z]+$`).MatchString(cmd) {
			t.Fatalf("Dockerfile:%d: not an instruction: %q", start, cur.String())
		}
		instrs = append(instrs, dockerInstr{line: start, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)})
		cur.Reset()
	}
	if cur.Len() > 0 {
		t.Fatalf("Dockerfile:%d: ends in a continued line", start)
	}
	var stages []dockerStage
	for _, in := range instrs {
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			st := dockerStage{from: in, image: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			} else if len(f) != 1 {
				t.Fatalf("Dockerfile:%d: FROM %s: want IMAGE [AS NAME]", in.line, in.args)
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			if in.cmd == "ARG" {
				continue
			}
			t.Fatalf("Dockerfile:%d: %s before FROM", in.line, in.cmd)
		}
		stages[len(stages)-1].body = append(stages[len(stages)-1].body, in)
	}
	return stages
}

// execForm decodes an instruction in exec form (a JSON array).
func execForm(t *testing.T, in dockerInstr) []string {
	t.Helper()
	var v []string
	if err := json.Unmarshal([]byte(in.args), &v); err != nil || len(v) == 0 {
		t.Fatalf("Dockerfile:%d: %s %s: want the exec form, a JSON array of strings (no shell in the image)", in.line, in.cmd, in.args)
	}
	return v
}

// TestDockerfile checks the rules the Dockerfile keeps (docs/DOCKER.md),
// without a Docker daemon: a Go build stage on go.mod's Go release; a run
// stage of the binary alone on distroless (or scratch), as a non-root user,
// started in exec form. Then it runs the build stage's go build command here
// and checks the binary is static and runs.
func TestDockerfile(t *testing.T) {
	t.Parallel()
	stages := parseDockerfile(t, "../../Dockerfile")
	if len(stages) != 2 {
		t.Fatalf("Dockerfile: %d stages, want 2 (build, run)", len(stages))
	}
	build, run := stages[0], stages[1]

	// The build stage: go.mod's Go release, a cgo-free build.
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if goLine == nil {
		t.Fatal("go.mod: no go line")
	}
	if want := "golang:" + string(goLine[1]); build.image != want && !strings.HasPrefix(build.image, want+"-") && !strings.HasPrefix(build.image, want+".") {
		t.Errorf("Dockerfile:%d: build stage FROM %s; want %s (go.mod's Go release)", build.from.line, build.image, want)
	}
	if build.name == "" {
		t.Errorf("Dockerfile:%d: the build stage has no name (FROM ... AS build)", build.from.line)
	}
	var goBuild string
	for _, in := range build.body {
		if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
			if goBuild != "" {
				t.Errorf("Dockerfile:%d: a second go build", in.line)
			}
			goBuild = in.args
		}
	}
	if !strings.Contains(goBuild, "CGO_ENABLED=0 ") || !strings.Contains(goBuild, "./cmd/higmem") {
		t.Fatalf("Dockerfile: the build stage's go build %q must set CGO_ENABLED=0 and build ./cmd/higmem", goBuild)
	}
	out := regexp.MustCompile(`-o (\S+)`).FindStringSubmatch(goBuild)
	if out == nil {
		t.Fatalf("Dockerfile: go build %q names no output (-o)", goBuild)
	}

	// The run stage: a minimal base, the binary alone, a non-root user,
	// exec form.
	if !strings.HasPrefix(run.image, "gcr.io/distroless/static") && run.image != "scratch" {
		t.Errorf("Dockerfile:%d: run stage FROM %s; want gcr.io/distroless/static… or scratch", run.from.line, run.image)
	}
	if strings.HasSuffix(run.image, ":latest") || (run.image != "scratch" && !strings.Contains(run.image, ":")) {
		t.Errorf("Dockerfile:%d: run stage FROM %s: name a tag other than latest", run.from.line, run.image)
	}
	var user, entry []string
	var binInImage string
	for _, in := range run.body {
		switch in.cmd {
		case "RUN", "ADD":
			t.Errorf("Dockerfile:%d: %s in the run stage: it must hold the binary only (and has no shell)", in.line, in.cmd)
		case "COPY":
			f := strings.Fields(in.args)
			if !slices.Contains(f, "--from="+build.name) || len(f) < 3 {
				t.Errorf("Dockerfile:%d: COPY %s: the run stage copies only from the build stage", in.line, in.args)
				continue
			}
			src, dst := f[len(f)-2], f[len(f)-1]
			switch {
			case src == out[1]:
				binInImage = dst
			case src == "/out/data" && slices.Contains(f, "--chown=65532:65532"):
				// The empty data directory, owned by the user.
			default:
				t.Errorf("Dockerfile:%d: COPY %s: only the binary (and the empty data directory) belong in the image", in.line, in.args)
			}
		case "USER":
			user = strings.Split(in.args, ":")
		case "ENTRYPOINT":
			entry = execForm(t, in)
		case "CMD":
			cmd := execForm(t, in)
			if cmd[0] == "serve" && !slices.Contains(cmd, "--keys-file") {
				t.Errorf("Dockerfile:%d: CMD serves without --keys-file: a server on 0.0.0.0 needs keys", in.line)
			}
		case "ENV", "VOLUME", "EXPOSE", "LABEL", "WORKDIR", "ARG":
		default:
			t.Errorf("Dockerfile:%d: %s in the run stage: add a rule for it to this test", in.line, in.cmd)
		}
	}
	if len(user) == 0 || user[0] == "" || user[0] == "root" || user[0] == "0" {
		t.Errorf("Dockerfile: run stage USER %v; want a non-root user (distroless's nonroot is 65532)", user)
	}
	if binInImage == "" {
		t.Error("Dockerfile: the run stage does not copy the built binary")
	}
	if len(entry) == 0 || entry[0] != binInImage {
		t.Errorf("Dockerfile: ENTRYPOINT %v; want the copied binary %s", entry, binInImage)
	}

	if testing.Short() {
		t.Skip("runs the build stage's go build")
	}
	// The build stage's command, here, for this machine's GOOS/GOARCH.
	dir := t.TempDir()
	bin := filepath.Join(dir, "higmem")
	cmdline := strings.Replace(goBuild, out[0], "-o "+bin, 1)
	cmd := exec.Command("sh", "-c", cmdline)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "TARGETOS="+runtime.GOOS, "TARGETARCH="+runtime.GOARCH)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the Dockerfile's build %q: %v\n%s", cmdline, err, b)
	}
	if runtime.GOOS == "linux" {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Error("the Dockerfile's build is dynamically linked (it has an ELF interpreter): it cannot run on distroless/static or scratch")
			}
		}
	}
	v, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(v), "higmem ") {
		t.Fatalf("the Dockerfile's binary --version: %v %s", err, v)
	}
}

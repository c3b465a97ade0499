package bpe

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// VocabPackage is the npm package whose tarball carries the o200k_base
// ranks, and VocabPath the file inside it.
const (
	VocabPackage = "js-tiktoken@1.0.21"
	VocabPath    = "package/dist/ranks/o200k_base.js"
	// VocabSHA256 pins the file's content.
	VocabSHA256 = "a9e8a0c1f332c58f1a9cef2f8d7be59b31bb4b42531a3a0a64d9ad3b3d19033b"
)

// ErrChecksum means the fetched file is not the pinned one.
var ErrChecksum = errors.New("bpe: vocabulary checksum mismatch")

// Dir is where the vocabulary lives under a models directory.
func Dir(modelsDir string) string { return filepath.Join(modelsDir, "tokenizers", O200kBase) }

// Present reports whether dir holds a vocabulary with the pinned checksum.
func Present(dir string) bool {
	sum, err := fileSHA256(filepath.Join(dir, VocabFile))
	return err == nil && sum == VocabSHA256
}

// Fetch downloads VocabPackage with `npm pack` (the npm client, run in a
// temporary directory), takes VocabPath out of the tarball, checks it
// against VocabSHA256 and writes it into dir as VocabFile. It does nothing
// when dir already holds the pinned file. npm names the npm executable
// ("" means "npm" on $PATH).
func Fetch(ctx context.Context, dir, npm string) error {
	if Present(dir) {
		return nil
	}
	if npm == "" {
		npm = "npm"
	}
	tmp, err := os.MkdirTemp("", "higmem-bpe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, npm, "pack", "--silent", VocabPackage)
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("bpe: npm pack %s: %w: %s", VocabPackage, err, strings.TrimSpace(string(out)))
	}
	tgz := filepath.Join(tmp, strings.TrimSpace(lastLine(string(out))))
	if !strings.HasSuffix(tgz, ".tgz") {
		matches, _ := filepath.Glob(filepath.Join(tmp, "*.tgz"))
		if len(matches) != 1 {
			return fmt.Errorf("bpe: npm pack left no tarball (%q)", out)
		}
		tgz = matches[0]
	}
	data, err := extract(tgz, VocabPath)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != VocabSHA256 {
		return fmt.Errorf("%w: %s in %s has sha256 %s, want %s", ErrChecksum, VocabPath, VocabPackage, got, VocabSHA256)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	dst := filepath.Join(dir, VocabFile)
	if err := os.WriteFile(dst+".tmp", data, 0o644); err != nil {
		return err
	}
	return os.Rename(dst+".tmp", dst)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// extract returns the content of name in a .tgz.
func extract(tgz, name string) ([]byte, error) {
	f, err := os.Open(tgz)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("bpe: %s: %w", tgz, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("bpe: %s has no %s", filepath.Base(tgz), name)
		}
		if err != nil {
			return nil, fmt.Errorf("bpe: %s: %w", tgz, err)
		}
		if h.Name == name {
			return io.ReadAll(io.LimitReader(tr, 64<<20))
		}
	}
}

func fileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

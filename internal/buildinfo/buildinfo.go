// Package buildinfo reports what the running higmem binary was built from:
// the module version and the VCS revision that the go command records in
// every binary it builds from a checkout (runtime/debug.ReadBuildInfo).
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is what a binary was built from.
type Info struct {
	// Version is the main module's version: a tag (v1.2.3), a
	// pseudo-version the go command derives from the commit
	// (v0.0.0-20261204052102-0ebc5d7abcde, "+dirty" with uncommitted
	// changes), or "devel" when it records none (go run, go test).
	Version string
	// Revision is the VCS commit ("unknown" when the build recorded none:
	// built outside a checkout, or with -buildvcs=false).
	Revision string
	// Time is the commit's time, RFC 3339 ("" when unknown).
	Time string
	// Modified is true when the tree had uncommitted changes.
	Modified bool
	// GoVersion is the Go release that built the binary.
	GoVersion string
	// Platform is GOOS/GOARCH.
	Platform string
}

// Read returns the running binary's build information.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "devel", Revision: "unknown", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	}
	return FromBuildInfo(bi)
}

// FromBuildInfo reads the fields of Info from bi.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	in := Info{Version: "devel", Revision: "unknown", GoVersion: bi.GoVersion}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		in.Version = v
	}
	var goos, goarch string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	if goos == "" {
		goos, goarch = runtime.GOOS, runtime.GOARCH
	}
	in.Platform = goos + "/" + goarch
	return in
}

// RevisionLabel is Revision with "+dirty" when the tree was modified.
func (in Info) RevisionLabel() string {
	if in.Modified && in.Revision != "unknown" {
		return in.Revision + "+dirty"
	}
	return in.Revision
}

// String renders the information on one line, as `higmem --version`
// prints it:
//
//	higmem v0.0.0-20261204052102-0ebc5d7abcde (revision 0ebc5d7abcde..., 2026-12-04T05:21:02Z) go1.26.8 linux/amd64
func (in Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "higmem %s (revision %s", in.Version, in.RevisionLabel())
	if in.Time != "" {
		fmt.Fprintf(&b, ", %s", in.Time)
	}
	fmt.Fprintf(&b, ") %s %s", in.GoVersion, in.Platform)
	return b.String()
}

package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"checkout", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261204052102-0ebc5d7abcde"},
			Settings: []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
				{Key: "vcs.revision", Value: "0ebc5d7abcdef0123456789"}, {Key: "vcs.time", Value: "2026-12-04T05:21:02Z"}, {Key: "vcs.modified", Value: "false"}}},
			"higmem v0.0.0-20261204052102-0ebc5d7abcde (revision 0ebc5d7abcdef0123456789, 2026-12-04T05:21:02Z) go1.26.8 linux/arm64"},
		{"modified", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0+dirty"},
			Settings: []debug.BuildSetting{{Key: "GOOS", Value: "windows"}, {Key: "GOARCH", Value: "amd64"},
				{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}},
			"higmem v1.2.0+dirty (revision abc+dirty) go1.26.8 windows/amd64"},
		{"go run", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "GOOS", Value: "darwin"}, {Key: "GOARCH", Value: "arm64"}}},
			"higmem devel (revision unknown) go1.26.8 darwin/arm64"},
	} {
		if got := FromBuildInfo(&tc.bi).String(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

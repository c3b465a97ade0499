package server

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewKeyAndLookup(t *testing.T) {
	secret, k, err := NewKey("ci", []string{"alice", "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, KeyPrefix) || len(secret) != len(KeyPrefix)+43 || k.SHA256 != HashKey(secret) || strings.Contains(k.SHA256, secret) {
		t.Fatalf("key %q entry %+v", secret, k)
	}
	other, _, _ := NewKey("x", nil)
	if other == secret {
		t.Fatal("two keys alike")
	}
	b, _ := json.Marshal(KeysFile{Keys: []Key{k}})
	if strings.Contains(string(b), secret) {
		t.Fatal("the keys file holds the secret")
	}
	ks, err := ParseKeys(b)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := ks.Lookup(secret)
	if !ok || got.Name != "ci" {
		t.Fatalf("lookup: %+v %v", got, ok)
	}
	for _, bad := range []string{"", other, k.SHA256, secret + "x", strings.ToUpper(secret)} {
		if _, ok := ks.Lookup(bad); ok {
			t.Errorf("lookup accepted %q", bad)
		}
	}
	p := keyPrincipal(got)
	if !p.allows("alice") || !p.allows("bob") || p.allows("carol") {
		t.Fatalf("principal %+v", p)
	}
	if !keyPrincipal(Key{Users: []string{AllUsers}}).allows("anyone") {
		t.Fatal("* does not allow all")
	}
}

func TestParseKeysRejects(t *testing.T) {
	h := HashKey("k")
	for _, tc := range []struct{ name, in, msg string }{
		{"not json", `keys`, "invalid character"},
		{"unknown field", `{"keys":[{"name":"a","sha256":"` + h + `","users":["*"],"key":"k"}]}`, `unknown field "key"`},
		{"top unknown field", `{"key":[]}`, `unknown field "key"`},
		{"no name", `{"keys":[{"sha256":"` + h + `","users":["*"]}]}`, "empty name"},
		{"dup name", `{"keys":[{"name":"a","sha256":"` + h + `","users":["*"]},{"name":"a","sha256":"` + HashKey("j") + `","users":["*"]}]}`, "duplicate name"},
		{"dup hash", `{"keys":[{"name":"a","sha256":"` + h + `","users":["*"]},{"name":"b","sha256":"` + h + `","users":["*"]}]}`, "appears twice"},
		{"short hash", `{"keys":[{"name":"a","sha256":"abcd","users":["*"]}]}`, "64 hex digits"},
		{"secret as hash", `{"keys":[{"name":"a","sha256":"hgm_abc","users":["*"]}]}`, "never the key itself"},
		{"no users", `{"keys":[{"name":"a","sha256":"` + h + `"}]}`, "no users"},
		{"empty user", `{"keys":[{"name":"a","sha256":"` + h + `","users":[" "]}]}`, "empty user"},
		{"trailing", `{"keys":[]} {}`, "trailing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseKeys([]byte(tc.in))
			if !errors.Is(err, ErrBadKeys) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err %v, want %q", err, tc.msg)
			}
		})
	}
	// Upper-case hex is accepted and normalised.
	ks, err := ParseKeys([]byte(`{"keys":[{"name":"a","sha256":"` + strings.ToUpper(h) + `","users":["u"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ks.Lookup("k"); !ok {
		t.Fatal("upper-case hash not matched")
	}
}

func TestLoadKeys(t *testing.T) {
	dir := t.TempDir()
	_, k, _ := NewKey("a", []string{"u"})
	b, _ := json.Marshal(KeysFile{Keys: []Key{k}})
	path := filepath.Join(dir, "keys.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ks, err := LoadKeys(path)
	if err != nil || ks.Len() != 1 {
		t.Fatalf("%v %d", err, ks.Len())
	}
	if _, err := LoadKeys(filepath.Join(dir, "missing.json")); err == nil {
		t.Fatal("missing file loaded")
	}
	os.WriteFile(path, []byte(`{"keys":[{"name":"a"}]}`), 0o600)
	if _, err := LoadKeys(path); !errors.Is(err, ErrBadKeys) || !strings.Contains(err.Error(), path) {
		t.Fatalf("bad file: %v", err)
	}
}

func TestBearer(t *testing.T) {
	for in, want := range map[string]string{"Bearer abc": "abc", "bearer  abc ": "abc", "BEARER x": "x", "Basic abc": "", "Bearer": "", "Bearer ": "", "abc": ""} {
		got, ok := bearer(in)
		if got != want || ok != (want != "") {
			t.Errorf("bearer(%q) = %q %v", in, got, ok)
		}
	}
}

func FuzzParseKeys(f *testing.F) {
	_, k, _ := NewKey("a", []string{"u"})
	b, _ := json.Marshal(KeysFile{Keys: []Key{k}})
	f.Add(b)
	f.Add([]byte(`{"keys":[]}`))
	f.Add([]byte(`{"keys":[{"name":"a","sha256":"","users":[]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ks, err := ParseKeys(data)
		if err != nil {
			if !errors.Is(err, ErrBadKeys) {
				t.Fatalf("error not wrapping ErrBadKeys: %v", err)
			}
			return
		}
		for _, k := range ks.keys {
			if k.Name == "" || len(k.SHA256) != 64 || len(k.Users) == 0 {
				t.Fatalf("invalid key accepted: %+v", k)
			}
		}
		ks.Lookup("x")
	})
}

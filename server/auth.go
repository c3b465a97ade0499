package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// ErrBadKeys is wrapped by every error about a keys file.
var ErrBadKeys = errors.New("server: bad keys file")

// AllUsers in a key's Users lets the key use every user id.
const AllUsers = "*"

// KeyPrefix starts every key made by NewKey.
const KeyPrefix = "hgm_"

// Key is one API key as stored: its name, the SHA-256 of the secret (never
// the secret itself) and the user ids it may use.
type Key struct {
	// Name identifies the key in logs.
	Name string `json:"name"`
	// SHA256 is the hex SHA-256 of the secret key.
	SHA256 string `json:"sha256"`
	// Users lists the user ids the key may use; ["*"] allows all.
	Users []string `json:"users"`
}

// KeysFile is the JSON form of a keys file: {"keys":[{...}]}.
type KeysFile struct {
	Keys []Key `json:"keys"`
}

// Keys is a validated set of API keys.
type Keys struct {
	keys   []Key
	hashes [][sha256.Size]byte
}

// HashKey returns the hex SHA-256 of a secret key, as stored in a keys
// file.
func HashKey(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// NewKey makes a random secret key (KeyPrefix + 43 characters) and its
// keys-file entry.
func NewKey(name string, users []string) (secret string, k Key, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", Key{}, fmt.Errorf("server: new key: %w", err)
	}
	secret = KeyPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	if len(users) == 0 {
		users = []string{AllUsers}
	}
	return secret, Key{Name: name, SHA256: HashKey(secret), Users: users}, nil
}

// ParseKeys parses and validates a keys file. Unknown fields, malformed
// hashes, keys without users and duplicate names or hashes are rejected.
func ParseKeys(data []byte) (*Keys, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f KeysFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadKeys, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the JSON object", ErrBadKeys)
	}
	return NewKeys(f.Keys)
}

// NewKeys validates keys as ParseKeys does and returns them as a set.
func NewKeys(keys []Key) (*Keys, error) {
	ks := &Keys{}
	names := map[string]bool{}
	for i, k := range keys {
		where := fmt.Sprintf("key %d", i+1)
		if k.Name == "" {
			return nil, fmt.Errorf("%w: %s: empty name", ErrBadKeys, where)
		}
		where += fmt.Sprintf(" (%q)", k.Name)
		if names[k.Name] {
			return nil, fmt.Errorf("%w: %s: duplicate name", ErrBadKeys, where)
		}
		names[k.Name] = true
		raw, err := hex.DecodeString(strings.ToLower(k.SHA256))
		if err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("%w: %s: sha256 must be 64 hex digits (the hash of the key, never the key itself)", ErrBadKeys, where)
		}
		if len(k.Users) == 0 {
			return nil, fmt.Errorf("%w: %s: no users (use [\"*\"] for all)", ErrBadKeys, where)
		}
		for _, u := range k.Users {
			if strings.TrimSpace(u) == "" {
				return nil, fmt.Errorf("%w: %s: empty user id", ErrBadKeys, where)
			}
		}
		h := [sha256.Size]byte(raw)
		if slices.Contains(ks.hashes, h) {
			return nil, fmt.Errorf("%w: %s: the same key hash appears twice", ErrBadKeys, where)
		}
		k.SHA256 = hex.EncodeToString(raw)
		ks.keys = append(ks.keys, k)
		ks.hashes = append(ks.hashes, h)
	}
	return ks, nil
}

// LoadKeys reads and validates a keys file.
func LoadKeys(path string) (*Keys, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("server: reading keys: %w", err)
	}
	ks, err := ParseKeys(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ks, nil
}

// Keys returns a copy of the keys, in the order given.
func (ks *Keys) Keys() []Key {
	if ks == nil {
		return nil
	}
	out := make([]Key, len(ks.keys))
	for i, k := range ks.keys {
		k.Users = append([]string(nil), k.Users...)
		out[i] = k
	}
	return out
}

// Len returns the number of keys.
func (ks *Keys) Len() int {
	if ks == nil {
		return 0
	}
	return len(ks.keys)
}

// Lookup returns the key whose hash matches secret. Every stored hash is
// compared in constant time.
func (ks *Keys) Lookup(secret string) (Key, bool) {
	if ks == nil || secret == "" {
		return Key{}, false
	}
	h := sha256.Sum256([]byte(secret))
	found := -1
	for i := range ks.hashes {
		if subtle.ConstantTimeCompare(h[:], ks.hashes[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Key{}, false
	}
	return ks.keys[found], true
}

// principal is who a request acts as: a key with its allowed users, or
// everyone (no auth, or the trusted stdio transport).
type principal struct {
	name  string
	all   bool
	users []string
}

// unrestricted may use every user id.
var unrestricted = &principal{name: "local", all: true}

func keyPrincipal(k Key) *principal {
	return &principal{name: k.Name, all: slices.Contains(k.Users, AllUsers), users: k.Users}
}

// allows reports whether p may use user.
func (p *principal) allows(user string) bool {
	return p.all || slices.Contains(p.users, user)
}

type principalKey struct{}

func withPrincipal(ctx context.Context, p *principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// principalFrom returns the request's principal; nil means unauthenticated.
func principalFrom(ctx context.Context) *principal {
	p, _ := ctx.Value(principalKey{}).(*principal)
	return p
}

// bearer extracts the key of an "Authorization: Bearer KEY" header.
func bearer(h string) (string, bool) {
	scheme, key, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	key = strings.TrimSpace(key)
	return key, key != ""
}

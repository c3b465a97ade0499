package higmem

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/higmem/higmem/internal/profile"
	"github.com/higmem/higmem/internal/profilerec"
	"github.com/higmem/higmem/internal/textnorm"
	"github.com/higmem/higmem/store"
)

// Profiles: what memory knows about each person of a space, derived by
// rules from the space's live turns and merged with the profile records a
// model stated (internal/profile). The rules' reading is not stored; a
// space's profiles are computed on first use and kept until a turn or a
// record is added or deleted, so a deleted turn's facts go with it.

type (
	// Profile is what the turns of a space say about one person: a
	// speaker, or someone a speaker names by relation ("my sister Ana").
	// Its attributes keep their history: a value that stopped holding is
	// closed, not forgotten.
	Profile = profile.Profile
	// ProfileAttribute is one attribute of a profile (home, job, employer,
	// pet, partner, relationship, favorite, plan, hometown, relation) with
	// the values it has held.
	ProfileAttribute = profile.Attribute
	// ProfileValue is one value of an attribute, with its evidence turns,
	// when it held (in conversation time and in stored-at time) and what
	// stated it (the rules, a model).
	ProfileValue = profile.Value
	// ProfileSummary is a model's narrative of a person (paper mode with
	// Options.PaperProfiles), citing turns.
	ProfileSummary = profile.Summary
)

// ProfileOptions selects what Profiles and Profile return. The zero value
// returns every value with its history.
type ProfileOptions struct {
	// AsOf, when set, keeps only the values that held at that time in the
	// conversation (turn times, as ProfileValue.ValidAt); attributes
	// without such a value are left out.
	AsOf time.Time
}

// profileCache holds the derived profiles of a space and the key of the
// turns and records they were derived from.
type profileCache struct {
	key turnsKey
	// turns is the slice the profiles were derived from: holding it keeps
	// its array alive, so that no later slice of turns can have its
	// address (key.data). records is held for the same reason.
	turns    []store.Turn
	records  *profilerec.Set
	profiles []Profile
	// deriv is the derivation, which turns appended later extend (it is
	// at deriv.Read() turns only while no later cache extended it; used
	// under spaceState.profileMu).
	deriv *profile.Derivation
	n     int
}

// turnsKey identifies a state of a space's turns. Turns are immutable and
// only ever appended to the state's slice (a delete, or a turn stored among
// the others, puts the turns into a new slice, see catchUp), so the slice's
// array and length change with every write;
// the sums of sequence numbers and stored-at times and the last turn guard
// against a slice rebuilt in place all the same. It costs a pass over
// integers, far less than a derivation (which reads every text).
type turnsKey struct {
	data           *store.Turn
	n              int
	seqSum, recSum int64
	lastID         string
}

func keyOf(ts []store.Turn) turnsKey {
	k := turnsKey{n: len(ts)}
	if len(ts) > 0 {
		k.data = &ts[0]
	}
	for i := range ts {
		k.seqSum += ts[i].Seq
		k.recSum += ts[i].RecordedAt.UnixNano()
	}
	if len(ts) > 0 {
		k.lastID = ts[len(ts)-1].ID
	}
	return k
}

// Profiles returns the profile of every person the space's turns tell
// about, speakers first. Every speaker has one, perhaps without
// attributes.
func (m *Memory) Profiles(ctx context.Context, sp Space, po ProfileOptions) ([]Profile, error) {
	st, err := m.checkedState(ctx, sp)
	if err != nil {
		return nil, err
	}
	st.mu.RLock()
	ps := st.profiles()
	st.mu.RUnlock()
	out := make([]Profile, 0, len(ps))
	for _, p := range ps {
		out = append(out, profile.AsOf(p, po.AsOf))
	}
	return out, nil
}

// Profile returns the profile of one person, named as in the conversation
// (case does not matter). It returns ErrNotFound when no turn tells about
// them.
func (m *Memory) Profile(ctx context.Context, sp Space, entity string, po ProfileOptions) (Profile, error) {
	if strings.TrimSpace(entity) == "" {
		return Profile{}, fmt.Errorf("%w: empty entity", ErrInvalidInput)
	}
	st, err := m.checkedState(ctx, sp)
	if err != nil {
		return Profile{}, err
	}
	st.mu.RLock()
	ps := st.profiles()
	st.mu.RUnlock()
	if p, ok := profile.Find(ps, entity); ok {
		return profile.AsOf(p, po.AsOf), nil
	}
	return Profile{}, wrapf(ErrNotFound, "profile %q", entity)
}

// profiles returns the space's profiles, deriving them when the turns or
// the profile records changed since the last call (only the turns appended
// since then, when that is all that changed). Callers must not modify the
// result. Caller holds st.mu (for reading is enough).
func (st *spaceState) profiles() []Profile {
	key := keyOf(st.turns)
	if c := st.profileCache.Load(); c != nil && c.key == key && c.records == st.records {
		return c.profiles
	}
	st.profileMu.Lock()
	defer st.profileMu.Unlock()
	old := st.profileCache.Load()
	if old != nil && old.key == key && old.records == st.records {
		return old.profiles // another reader derived them meanwhile
	}
	c := &profileCache{key: key, turns: st.turns, records: st.records, n: len(st.turns)}
	stmts := st.records.Statements()
	// Turns appended since the last derivation (the usual case: each
	// batch) are read alone; anything else reads every turn again.
	if old != nil && old.deriv != nil && old.deriv.Read() == old.n && old.n <= len(st.turns) && samePrefix(keyOf(st.turns[:old.n]), old.key) {
		if ps, ok := old.deriv.Extend(profileTurns(st.turns[old.n:]), stmts); ok {
			c.deriv, c.profiles = old.deriv, ps
		}
	}
	if c.deriv == nil {
		c.deriv, c.profiles = profile.Start(profileTurns(st.turns), stmts)
	}
	st.profileCache.Store(c)
	return c.profiles
}

// samePrefix reports whether a and b are keys of the same turns, wherever
// their slices are.
func samePrefix(a, b turnsKey) bool {
	a.data, b.data = nil, nil
	return a == b
}

// profileTurns returns what the rules read of turns.
func profileTurns(turns []store.Turn) []profile.Turn {
	ts := make([]profile.Turn, len(turns))
	for i, t := range turns {
		ts[i] = profile.Turn{ID: t.ID, Seq: t.Seq, Speaker: t.Speaker, Text: t.Text, OccurredAt: t.OccurredAt, RecordedAt: t.RecordedAt}
	}
	return ts
}

// addProfileEvidence adds the profile evidence of the question (see
// profileEvidence) as candidates with the source "profile", scored like the
// best candidate so far, and records them as the "profile" stage (offline
// retrieval). The candidates stay at most maxK (the stopping rule's
// maximum; 0: no cap): a profile turn the selection did not hold takes
// the place of its least relevant turn. Caller holds st.mu.
func (q *query) addProfileEvidence(maxK int) {
	defer q.capCands(maxK)
	ids := q.profileEvidence()
	if len(ids) == 0 {
		return
	}
	top := 1.0
	if len(q.cand) > 0 {
		top = 0
		for _, ev := range q.cand {
			top = max(top, ev.Score)
		}
	}
	for _, id := range ids {
		q.addCand(id, "profile", top)
	}
	q.stage("profile", ids)
}

// capCands keeps at most k candidates (k <= 0: all): the profile turns,
// then the rest by score, ties by earlier turn (finalEvidence's order), and
// notes in the trace how many it left out. Caller holds st.mu.
func (q *query) capCands(k int) {
	if k <= 0 || len(q.cand) <= k {
		return
	}
	all := make([]*Evidence, 0, len(q.cand))
	for _, e := range q.cand {
		all = append(all, e)
	}
	slices.SortFunc(all, func(a, b *Evidence) int {
		ap, bp := slices.Contains(a.Sources, "profile"), slices.Contains(b.Sources, "profile")
		if ap != bp {
			if ap {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Turn.Seq, b.Turn.Seq)
	})
	for _, e := range all[k:] {
		delete(q.cand, e.Turn.ID)
	}
	q.trace.Notes = append(q.trace.Notes, fmt.Sprintf("evidence kept at %d turns: %d less relevant turns left out for the profile's", k, len(all)-k))
}

// profileEvidence returns, for a question that names a person with a
// profile and an attribute word ("Where does Ana live?"), the evidence
// turns of the attribute's current value (with RetrieveOptions.AsOf, the
// value memory held then; with a word like "before", the earlier values
// too) that the query may see, each once; nil with Ablations.NoProfiles.
// Caller holds st.mu.
func (q *query) profileEvidence() []string {
	if len(q.info.Entities) == 0 || q.noProfiles {
		return nil
	}
	attrs, past := profile.Asked(textnorm.Tokens(q.question))
	if len(attrs) == 0 {
		return nil
	}
	ps := q.st.profiles()
	var ids []string
	for _, e := range q.info.Entities {
		p, ok := profile.Find(ps, e)
		if !ok {
			continue
		}
		for _, a := range p.Attributes {
			if !slices.Contains(attrs, a.Name) || a.Name == profile.Favorite && !strings.Contains(strings.ToLower(q.question), a.Key) {
				continue
			}
			for _, v := range a.Values {
				keep := v.Current()
				if !q.ro.AsOf.IsZero() {
					keep = v.RecordedAt(q.ro.AsOf)
				}
				if keep || past {
					ids = append(ids, v.Evidence...)
				}
			}
		}
	}
	var out []string
	for _, id := range ids {
		i, ok := q.st.pos[id]
		if ok && !slices.Contains(out, id) && (q.keepTurn == nil || q.keepTurn(i)) {
			out = append(out, id)
		}
	}
	return out
}

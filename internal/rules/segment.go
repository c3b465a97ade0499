package rules

import (
	"slices"

	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/textnorm"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

// Turns finds the turns a Segmenter compares: stored or in the batch being
// built.
type Turns interface {
	Turn(id string) (store.Turn, bool)
	// TurnVec returns a turn's vector, nil when it has none.
	TurnVec(id string) []float32
}

// Segmenter weighs whether a turn continues an open event or rejoins an
// older one, by similarity. It caches the centroid and terms of whole
// events until Changed.
type Segmenter struct {
	turns    Turns
	centroid map[string][]float32
	terms    map[string]map[string]bool
}

// NewSegmenter returns a Segmenter over turns.
func NewSegmenter(turns Turns) *Segmenter {
	return &Segmenter{turns: turns, centroid: map[string][]float32{}, terms: map[string]map[string]bool{}}
}

// Changed drops what is cached of an event that a turn joined.
func (s *Segmenter) Changed(eventID string) {
	delete(s.centroid, eventID)
	delete(s.terms, eventID)
}

// TurnTerms returns a turn's distinct content terms, sorted.
func TurnTerms(t store.Turn) []string {
	return slices.Compact(slices.Sorted(slices.Values(textnorm.Terms(Content(t)))))
}

// termsOf returns the content terms of the given turns.
func (s *Segmenter) termsOf(ids []string) map[string]bool {
	ts := map[string]bool{}
	for _, id := range ids {
		if t, ok := s.turns.Turn(id); ok {
			for _, w := range textnorm.Terms(Content(t)) {
				ts[w] = true
			}
		}
	}
	return ts
}

// centroidOf returns the normalised mean vector of the given turns, nil
// when none has a vector.
func (s *Segmenter) centroidOf(ids []string) []float32 {
	var c []float32
	for _, id := range ids {
		v := s.turns.TurnVec(id)
		if v == nil {
			continue
		}
		if c == nil {
			c = make([]float32, len(v))
		}
		for i, x := range v {
			c[i] += x
		}
	}
	if c != nil {
		vec.Normalize(c)
	}
	return c
}

// eventTerms returns the content terms of an event's members.
func (s *Segmenter) eventTerms(e *store.Event) map[string]bool {
	if ts, ok := s.terms[e.ID]; ok {
		return ts
	}
	ts := s.termsOf(e.TurnIDs)
	s.terms[e.ID] = ts
	return ts
}

// eventCentroid returns the normalised mean vector of an event's members.
func (s *Segmenter) eventCentroid(e *store.Event) []float32 {
	if c, ok := s.centroid[e.ID]; ok {
		return c
	}
	c := s.centroidOf(e.TurnIDs)
	s.centroid[e.ID] = c
	return c
}

// similarity scores how well a turn (terms ts, vector v) fits a group of
// turns (centroid c, terms gt): the cosine when both vectors exist, else
// the share of the turn's terms the group contains. dense reports which.
func similarity(ts []string, v []float32, gt map[string]bool, c []float32) (sim float64, dense bool) {
	if v != nil && c != nil {
		return float64(vec.Dot(v, c)), true
	}
	if len(ts) == 0 {
		return 0, false
	}
	hit := 0
	for _, w := range ts {
		if gt[w] {
			hit++
		}
	}
	return float64(hit) / float64(len(ts)), false
}

// Continues reports whether a turn (terms ts from TurnTerms, vector v)
// continues the open event e.
func (s *Segmenter) Continues(e *store.Event, ts []string, v []float32) bool {
	n := len(e.TurnIDs)
	switch {
	case n >= offline.SegMaxEventSize:
		return false
	case n < offline.SegMinEventSize || len(ts) < offline.SegShortTerms:
		return true
	}
	win := e.TurnIDs[n-min(n, offline.SegWindow):]
	var c []float32
	if v != nil {
		c = s.centroidOf(win)
	}
	sim, dense := similarity(ts, v, s.termsOf(win), c)
	if dense {
		return sim >= offline.SegJoinDense
	}
	return sim >= offline.SegJoinLexical
}

// RejoinScore returns how well a turn fits an older event, or 0 when it
// is below the rejoin threshold.
func (s *Segmenter) RejoinScore(e *store.Event, ts []string, v []float32) float64 {
	if len(e.TurnIDs) >= offline.SegMaxEventSize {
		return 0
	}
	var c []float32
	if v != nil {
		c = s.eventCentroid(e)
	}
	sim, dense := similarity(ts, v, s.eventTerms(e), c)
	if dense && sim < offline.SegRejoinDense || !dense && sim < offline.SegRejoinLex {
		return 0
	}
	return sim
}

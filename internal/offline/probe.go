package offline

import "context"

// Probe receives the features offline retrieval scores for a question
// (valid during the call only) and the id of each unit. It serves the
// module's measurements (internal/research): the engine calls it for a
// question asked under a context made by WithProbe.
type Probe func(f *Features, unitID func(i int) string)

type probeKey struct{}

// WithProbe returns a context under which offline retrieval calls p for
// every question and scores it on the reference path (every unit exactly).
func WithProbe(ctx context.Context, p Probe) context.Context {
	return context.WithValue(ctx, probeKey{}, p)
}

// ProbeFrom returns the probe of ctx, nil when there is none.
func ProbeFrom(ctx context.Context) Probe {
	p, _ := ctx.Value(probeKey{}).(Probe)
	return p
}

// Clone returns a copy of f whose slices are its own.
func (f *Features) Clone() *Features {
	g := *f
	g.Lex, g.Dense, g.Visible = clone(f.Lex), clone(f.Dense), clone(f.Visible)
	g.SameSession, g.Question, g.Event = clone(f.SameSession), clone(f.Question), clone(f.Event)
	g.Run, g.RunStart, g.RunAsks, g.RunWords = clone(f.Run), clone(f.RunStart), clone(f.RunAsks), clone(f.RunWords)
	g.RunLinks, g.RunSession, g.Cues = clone(f.RunLinks), clone(f.RunSession), clone(f.Cues)
	g.Speaker, g.Dated, g.Counted = clone(f.Speaker), clone(f.Dated), clone(f.Counted)
	g.Role, g.Words = clone(f.Role), clone(f.Words)
	g.PassageLex, g.PassageDense = clone(f.PassageLex), clone(f.PassageDense)
	return &g
}

// clone is slices.Clone keeping nil nil.
func clone[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append([]T(nil), s...)
}

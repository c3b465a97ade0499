package cli

import (
	"context"
	"io"
	"net/http"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/store"
)

// memoryAPI is what the everyday commands need from a memory. A local
// *higmem.Memory has these methods; remote implements them over the REST
// API, so `--server URL` runs the same commands against a higmem server.
type memoryAPI interface {
	Add(ctx context.Context, sp higmem.Space, turns []higmem.TurnInput) (*higmem.AddResult, error)
	Ask(ctx context.Context, sp higmem.Space, q string, ro higmem.RetrieveOptions) (*higmem.Answer, error)
	Retrieve(ctx context.Context, sp higmem.Space, q string, ro higmem.RetrieveOptions) (*higmem.Result, error)
	Events(ctx context.Context, sp higmem.Space) ([]higmem.EventView, error)
	Event(ctx context.Context, sp higmem.Space, id string) (higmem.EventView, error)
	Export(ctx context.Context, sp higmem.Space, w io.Writer) error
	Import(ctx context.Context, sp higmem.Space, r io.Reader) (*higmem.ImportResult, error)
	Delete(ctx context.Context, sp higmem.Space, id string) error
	DeleteSpace(ctx context.Context, sp higmem.Space) error
	History(ctx context.Context, sp higmem.Space, kind, id string) ([]higmem.Change, error)
	Stats(ctx context.Context, sp higmem.Space) (store.Stats, error)
}

var _ memoryAPI = (*higmem.Memory)(nil)

// memory returns the memory the commands work on: a server when --server
// (or HIGMEM_SERVER) is set, else the local database.
func (a *app) memory(ctx context.Context) (memoryAPI, error) {
	if a.server != "" {
		return remote{api.NewClient(a.server, a.apiKey, http.DefaultClient)}, nil
	}
	return a.open(ctx)
}

// remote is a memoryAPI backed by a higmem server.
type remote struct{ c *api.Client }

func scope(sp higmem.Space) api.Scope { return api.Scope{UserID: sp.UserID, AgentID: sp.AgentID} }

func (r remote) Add(ctx context.Context, sp higmem.Space, turns []higmem.TurnInput) (*higmem.AddResult, error) {
	in := make([]api.TurnInput, len(turns))
	for i, t := range turns {
		in[i] = api.TurnInput{ID: t.ID, SessionID: t.SessionID, Speaker: t.Speaker, Text: t.Text, Time: t.Time,
			OccurredAt: t.OccurredAt, Attachments: t.Attachments, Metadata: t.Metadata}
	}
	return r.c.Add(ctx, api.AddRequest{UserID: sp.UserID, AgentID: sp.AgentID, Turns: in})
}

func (r remote) Ask(ctx context.Context, sp higmem.Space, q string, ro higmem.RetrieveOptions) (*higmem.Answer, error) {
	return r.c.Ask(ctx, api.AskRequest{UserID: sp.UserID, AgentID: sp.AgentID, Question: q, KTurn: ro.KTurn, KEvent: ro.KEvent,
		AsOf: ro.AsOf, EvidenceTokens: ro.EvidenceTokens, MaxEvidence: ro.MaxEvidence})
}

func (r remote) Retrieve(ctx context.Context, sp higmem.Space, q string, ro higmem.RetrieveOptions) (*higmem.Result, error) {
	return r.c.Search(ctx, api.SearchRequest{UserID: sp.UserID, AgentID: sp.AgentID, Question: q, KTurn: ro.KTurn, KEvent: ro.KEvent,
		AsOf: ro.AsOf, EvidenceTokens: ro.EvidenceTokens, MaxEvidence: ro.MaxEvidence})
}

func (r remote) Events(ctx context.Context, sp higmem.Space) ([]higmem.EventView, error) {
	l, err := r.c.Events(ctx, scope(sp))
	if err != nil {
		return nil, err
	}
	return l.Events, nil
}

func (r remote) Event(ctx context.Context, sp higmem.Space, id string) (higmem.EventView, error) {
	v, err := r.c.Event(ctx, scope(sp), id)
	if err != nil {
		return higmem.EventView{}, err
	}
	return *v, nil
}

func (r remote) Export(ctx context.Context, sp higmem.Space, w io.Writer) error {
	return r.c.Export(ctx, scope(sp), w)
}

func (r remote) Import(ctx context.Context, sp higmem.Space, rd io.Reader) (*higmem.ImportResult, error) {
	return r.c.Import(ctx, scope(sp), rd)
}

func (r remote) Delete(ctx context.Context, sp higmem.Space, id string) error {
	_, err := r.c.DeleteTurn(ctx, scope(sp), id)
	return err
}

func (r remote) DeleteSpace(ctx context.Context, sp higmem.Space) error {
	_, err := r.c.DeleteSpace(ctx, scope(sp))
	return err
}

func (r remote) History(ctx context.Context, sp higmem.Space, kind, id string) ([]higmem.Change, error) {
	l, err := r.c.History(ctx, api.HistoryRequest{Scope: scope(sp), Kind: kind, ID: id})
	if err != nil {
		return nil, err
	}
	return l.Changes, nil
}

func (r remote) Stats(ctx context.Context, sp higmem.Space) (store.Stats, error) {
	s, err := r.c.Stats(ctx, scope(sp))
	if err != nil {
		return store.Stats{}, err
	}
	return *s, nil
}

package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/server"
)

// memoryAPI is what the everyday commands need from a memory, in the API's
// wire types: server.Local runs it on the local database, an api.Client on
// a higmem server (`--server URL`), so every command answers alike either
// way and its --json output is the REST response of the same operation.
type memoryAPI interface {
	Add(ctx context.Context, req api.AddRequest) (*api.AddResponse, error)
	Ask(ctx context.Context, req api.AskRequest) (*api.AskResponse, error)
	Search(ctx context.Context, req api.SearchRequest) (*api.SearchResponse, error)
	Events(ctx context.Context, s api.Scope) (*api.EventList, error)
	Event(ctx context.Context, s api.Scope, id string) (*api.EventView, error)
	Export(ctx context.Context, s api.Scope, w io.Writer) error
	Import(ctx context.Context, s api.Scope, r io.Reader) (*api.ImportResponse, error)
	DeleteTurn(ctx context.Context, s api.Scope, id string) (*api.DeleteResult, error)
	DeleteSpace(ctx context.Context, s api.Scope) (*api.DeleteResult, error)
	History(ctx context.Context, req api.HistoryRequest) (*api.HistoryList, error)
	Profiles(ctx context.Context, req api.ProfilesRequest) (*api.ProfileList, error)
	Profile(ctx context.Context, req api.ProfilesRequest) (*api.Profile, error)
	Stats(ctx context.Context, s api.Scope) (*api.Stats, error)
}

var (
	_ memoryAPI = (*server.Local)(nil)
	_ memoryAPI = (*api.Client)(nil)
)

// memory returns the memory the commands work on: a server when --server
// (or HIGMEM_SERVER) is set, else the local database.
func (a *app) memory(ctx context.Context) (memoryAPI, error) {
	if a.server != "" {
		c := api.NewClient(a.server, a.apiKey, http.DefaultClient)
		if err := a.keyUser(ctx, c); err != nil {
			return nil, err
		}
		return c, nil
	}
	m, err := a.open(ctx)
	if err != nil {
		return nil, err
	}
	return server.NewLocal(m, 0), nil
}

// keyUser makes a key's only user the default space of commands against a
// server, when no user was named (--user or HIGMEM_USER): a key made for
// alice works without repeating --user alice.
func (a *app) keyUser(ctx context.Context, c *api.Client) error {
	if a.userSet || a.apiKey == "" {
		return nil
	}
	k, err := c.Key(ctx)
	if err != nil {
		if api.IsStatus(err, http.StatusNotFound) {
			return nil // an older server: keep the default user
		}
		return fmt.Errorf("asking the server about the API key: %w", err)
	}
	if len(k.Users) == 1 && k.Users[0] != api.AllUsers {
		a.user = k.Users[0]
	} else if !slices.Contains(k.Users, api.AllUsers) && !slices.Contains(k.Users, a.user) {
		return fmt.Errorf("API key %q may use users %v, not %q: pass --user", k.Name, k.Users, a.user)
	}
	return nil
}

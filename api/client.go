package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls a higmem server. It is safe for concurrent use.
type Client struct {
	base string
	key  string
	hc   *http.Client
}

// NewClient returns a client for the server at baseURL (such as
// "http://127.0.0.1:8420"). apiKey is sent as a bearer token when non-empty;
// httpClient nil means http.DefaultClient.
func NewClient(baseURL, apiKey string, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), key: apiKey, hc: httpClient}
}

// scopeQuery returns the query parameters of a scope.
func scopeQuery(s Scope) url.Values {
	q := url.Values{}
	q.Set("user_id", s.UserID)
	if s.AgentID != "" {
		q.Set("agent_id", s.AgentID)
	}
	return q
}

// do sends a request and decodes a JSON response into out (when non-nil).
// body is JSON-encoded unless it is an io.Reader, which is sent as is with
// contentType.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body any, contentType string, out any) error {
	resp, err := c.send(ctx, method, path, q, body, contentType)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("api: %s %s: decoding response: %w", method, path, err)
	}
	return nil
}

// send sends a request and returns the response when its status is 2xx;
// otherwise it returns a *StatusError.
func (c *Client) send(ctx context.Context, method, path string, q url.Values, body any, contentType string) (*http.Response, error) {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case io.Reader:
		rd = b
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			return nil, fmt.Errorf("api: %s %s: encoding request: %w", method, path, err)
		}
		rd = bytes.NewReader(buf)
		contentType = "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("api: %s %s: %w", method, path, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("api: %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, readError(resp)
}

// readError turns a non-2xx response into a *StatusError.
func readError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	se := &StatusError{StatusCode: resp.StatusCode}
	var eb ErrorBody
	if err := json.Unmarshal(b, &eb); err == nil && eb.Error.Code != "" {
		se.Code, se.Message = eb.Error.Code, eb.Error.Message
	} else {
		se.Message = strings.TrimSpace(string(b))
		if se.Message == "" {
			se.Message = http.StatusText(resp.StatusCode)
		}
	}
	return se
}

// Health reports whether the server is up. It needs no API key.
func (c *Client) Health(ctx context.Context) (*Health, error) {
	var h Health
	return &h, c.do(ctx, http.MethodGet, "/v1/health", nil, nil, "", &h)
}

// Version describes the server.
func (c *Client) Version(ctx context.Context) (*VersionInfo, error) {
	var v VersionInfo
	return &v, c.do(ctx, http.MethodGet, "/v1/version", nil, nil, "", &v)
}

// Key describes the API key the client sends: its name and the user ids it
// may use.
func (c *Client) Key(ctx context.Context) (*KeyInfo, error) {
	var k KeyInfo
	return &k, c.do(ctx, http.MethodGet, "/v1/key", nil, nil, "", &k)
}

// OpenAPI returns the server's OpenAPI 3 document.
func (c *Client) OpenAPI(ctx context.Context) (map[string]any, error) {
	var doc map[string]any
	return doc, c.do(ctx, http.MethodGet, "/openapi.json", nil, nil, "", &doc)
}

// Add adds turns and waits until memory is built from them.
func (c *Client) Add(ctx context.Context, req AddRequest) (*AddResponse, error) {
	var res AddResponse
	return &res, c.do(ctx, http.MethodPost, "/v1/turns", nil, req, "", &res)
}

// AddAsync queues turns to be added and returns the job at once; poll it
// with Job or WaitJob.
func (c *Client) AddAsync(ctx context.Context, req AddRequest) (*Job, error) {
	var j Job
	return &j, c.do(ctx, http.MethodPost, "/v1/turns", url.Values{"async": {"true"}}, req, "", &j)
}

// Job returns an asynchronous job of the space.
func (c *Client) Job(ctx context.Context, s Scope, id string) (*Job, error) {
	var j Job
	return &j, c.do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id), scopeQuery(s), nil, "", &j)
}

// WaitJob polls a job every interval (default 100ms) until it is done or
// ctx ends.
func (c *Client) WaitJob(ctx context.Context, s Scope, id string, interval time.Duration) (*Job, error) {
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		j, err := c.Job(ctx, s, id)
		if err != nil || j.Done() {
			return j, err
		}
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-t.C:
		}
	}
}

// Search returns the evidence for a question with the retrieval trace.
func (c *Client) Search(ctx context.Context, req SearchRequest) (*SearchResponse, error) {
	var res SearchResponse
	return &res, c.do(ctx, http.MethodPost, "/v1/search", nil, req, "", &res)
}

// Ask answers a question from memory.
func (c *Client) Ask(ctx context.Context, req AskRequest) (*AskResponse, error) {
	var res AskResponse
	return &res, c.do(ctx, http.MethodPost, "/v1/ask", nil, req, "", &res)
}

// Turn returns one turn.
func (c *Client) Turn(ctx context.Context, s Scope, id string) (*Turn, error) {
	var t Turn
	return &t, c.do(ctx, http.MethodGet, "/v1/turns/"+url.PathEscape(id), scopeQuery(s), nil, "", &t)
}

// Turns returns a page of turns.
func (c *Client) Turns(ctx context.Context, req ListTurnsRequest) (*TurnList, error) {
	q := scopeQuery(req.Scope)
	if req.SessionID != "" {
		q.Set("session_id", req.SessionID)
	}
	if req.AfterSeq != 0 {
		q.Set("after_seq", strconv.FormatInt(req.AfterSeq, 10))
	}
	if req.Limit != 0 {
		q.Set("limit", strconv.Itoa(req.Limit))
	}
	if len(req.Filters) > 0 {
		b, err := json.Marshal(req.Filters)
		if err != nil {
			return nil, fmt.Errorf("api: encoding filters: %w", err)
		}
		q.Set("filters", string(b))
	}
	var l TurnList
	return &l, c.do(ctx, http.MethodGet, "/v1/turns", q, nil, "", &l)
}

// DeleteTurn deletes a turn and forgets it: its events are rebuilt without
// it and no record keeps its text (see docs/PRIVACY.md).
func (c *Client) DeleteTurn(ctx context.Context, s Scope, id string) (*DeleteResult, error) {
	var d DeleteResult
	return &d, c.do(ctx, http.MethodDelete, "/v1/turns/"+url.PathEscape(id), scopeQuery(s), nil, "", &d)
}

// Events returns every event of the space with its member turns.
func (c *Client) Events(ctx context.Context, s Scope) (*EventList, error) {
	var l EventList
	return &l, c.do(ctx, http.MethodGet, "/v1/events", scopeQuery(s), nil, "", &l)
}

// Event returns one event with its member turns.
func (c *Client) Event(ctx context.Context, s Scope, id string) (*EventView, error) {
	var e EventView
	return &e, c.do(ctx, http.MethodGet, "/v1/events/"+url.PathEscape(id), scopeQuery(s), nil, "", &e)
}

// History returns the changes recorded for derived records.
func (c *Client) History(ctx context.Context, req HistoryRequest) (*HistoryList, error) {
	q := scopeQuery(req.Scope)
	if req.Kind != "" {
		q.Set("kind", req.Kind)
	}
	if req.ID != "" {
		q.Set("id", req.ID)
	}
	var l HistoryList
	return &l, c.do(ctx, http.MethodGet, "/v1/history", q, nil, "", &l)
}

// Profiles returns every profile of the space (req.Entity is ignored).
func (c *Client) Profiles(ctx context.Context, req ProfilesRequest) (*ProfileList, error) {
	var l ProfileList
	return &l, c.do(ctx, http.MethodGet, "/v1/profiles", profilesQuery(req), nil, "", &l)
}

// Profile returns the profile of req.Entity.
func (c *Client) Profile(ctx context.Context, req ProfilesRequest) (*Profile, error) {
	var p Profile
	return &p, c.do(ctx, http.MethodGet, "/v1/profiles/"+url.PathEscape(req.Entity), profilesQuery(req), nil, "", &p)
}

func profilesQuery(req ProfilesRequest) url.Values {
	q := scopeQuery(req.Scope)
	if !req.AsOf.IsZero() {
		q.Set("as_of", req.AsOf.Format(time.RFC3339Nano))
	}
	return q
}

// Stats summarises the space.
func (c *Client) Stats(ctx context.Context, s Scope) (*Stats, error) {
	var st Stats
	return &st, c.do(ctx, http.MethodGet, "/v1/stats", scopeQuery(s), nil, "", &st)
}

// DeleteSpace deletes everything stored for the space, history included.
func (c *Client) DeleteSpace(ctx context.Context, s Scope) (*DeleteResult, error) {
	var d DeleteResult
	return &d, c.do(ctx, http.MethodDelete, "/v1/space", scopeQuery(s), nil, "", &d)
}

// Export writes the space as JSON lines to w.
func (c *Client) Export(ctx context.Context, s Scope, w io.Writer) error {
	resp, err := c.send(ctx, http.MethodGet, "/v1/export", scopeQuery(s), nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("api: export: %w", err)
	}
	return nil
}

// Import reads an export into the space in one transaction.
func (c *Client) Import(ctx context.Context, s Scope, r io.Reader) (*ImportResponse, error) {
	var res ImportResponse
	return &res, c.do(ctx, http.MethodPost, "/v1/import", scopeQuery(s), r, "application/x-ndjson", &res)
}

// ImportAsync queues an import and returns the job at once.
func (c *Client) ImportAsync(ctx context.Context, s Scope, r io.Reader) (*Job, error) {
	q := scopeQuery(s)
	q.Set("async", "true")
	var j Job
	return &j, c.do(ctx, http.MethodPost, "/v1/import", q, r, "application/x-ndjson", &j)
}

// IsStatus reports whether err is a *StatusError with the given HTTP
// status.
func IsStatus(err error, status int) bool {
	var se *StatusError
	return errors.As(err, &se) && se.StatusCode == status
}

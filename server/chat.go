package server

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
)

// ChatOptions configures the OpenAI-compatible chat endpoint
// (POST /v1/chat/completions, GET /v1/models): higmem forwards chat
// requests to an upstream model with the evidence from memory added as a
// system message, and stores the conversation's messages as turns.
type ChatOptions struct {
	// UpstreamURL is the API root of the OpenAI-compatible server chat
	// requests go to, e.g. "https://api.openai.com/v1". Empty: the chat
	// routes answer 501.
	UpstreamURL string
	// UpstreamKey is sent upstream as "Authorization: Bearer"; the
	// client's higmem key never is.
	UpstreamKey string
	// Model fills requests that name none, and is what GET /v1/models
	// lists when the upstream cannot list its own.
	Model string
	// Client sends upstream requests (default: a client with no overall
	// timeout, since streams may be long; UpstreamTimeout bounds them).
	Client *http.Client
	// EvidenceTokens is the token budget of the memory system message
	// (default DefaultChatEvidenceTokens).
	EvidenceTokens int
	// MemoryTimeout bounds retrieval; past it the request goes on without
	// memory (default 20 s).
	MemoryTimeout time.Duration
	// UpstreamTimeout bounds one upstream exchange, a whole stream
	// included (default 10 min).
	UpstreamTimeout time.Duration
	// RateLimit is the chat requests per second each key may make on
	// average (0: unlimited); RateBurst how many at once (default 10).
	// Requests over it get 429 with Retry-After.
	RateLimit float64
	RateBurst int
}

// DefaultChatEvidenceTokens is the default budget of the memory system
// message.
const DefaultChatEvidenceTokens = 1000

func (o *ChatOptions) setDefaults() {
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	if o.EvidenceTokens <= 0 {
		o.EvidenceTokens = DefaultChatEvidenceTokens
	}
	if o.MemoryTimeout <= 0 {
		o.MemoryTimeout = 20 * time.Second
	}
	if o.UpstreamTimeout <= 0 {
		o.UpstreamTimeout = 10 * time.Minute
	}
	if o.RateBurst <= 0 {
		o.RateBurst = 10
	}
}

// chat is the state of the chat endpoint.
type chat struct {
	opts    ChatOptions
	limiter *rateLimiter
	// stripes serialise the stores of one conversation, so that two
	// requests resending the same history do not race to add it.
	stripes [64]sync.Mutex
	// stores counts stores in flight (tests wait for them).
	stores sync.WaitGroup
	// failed holds, per conversation (space and conversation id), why its
	// last store failed, for the warning of its next request.
	failedMu sync.Mutex
	failed   map[string]string
}

// maxFailedStores bounds chat.failed.
const maxFailedStores = 1024

// storeFailed remembers that storing conversation key failed with err (nil:
// it succeeded).
func (c *chat) storeFailed(key string, err error) {
	c.failedMu.Lock()
	defer c.failedMu.Unlock()
	if err == nil {
		delete(c.failed, key)
		return
	}
	if c.failed == nil {
		c.failed = map[string]string{}
	}
	if len(c.failed) >= maxFailedStores {
		for k := range c.failed { // forget one at random
			delete(c.failed, k)
			break
		}
	}
	c.failed[key] = oneLine(PublicMessage(err))
}

// lastFailure returns why the last store of conversation key failed, or "".
func (c *chat) lastFailure(key string) string {
	c.failedMu.Lock()
	defer c.failedMu.Unlock()
	return c.failed[key]
}

// convKey names a conversation in chat.failed and the store stripes.
func convKey(sp higmem.Space, conv string) string { return sp.String() + "\x00" + conv }

func newChat(o ChatOptions) *chat {
	o.setDefaults()
	return &chat{opts: o, limiter: newRateLimiter(o.RateLimit, o.RateBurst, nil)}
}

// chatRequest is the part of an OpenAI chat request higmem reads; the
// body is forwarded as it came, with one system message inserted.
type chatRequest struct {
	Model    string            `json:"model"`
	User     string            `json:"user"`
	Stream   bool              `json:"stream"`
	Messages []json.RawMessage `json:"messages"`
}

// chatMessage is the part of a message higmem reads.
type chatMessage struct {
	Role    string          `json:"role"`
	Name    string          `json:"name"`
	Content json.RawMessage `json:"content"`
}

// text returns a message's text: its content string, or its text parts
// joined by newlines.
func (m chatMessage) text() string {
	c := bytes.TrimSpace(m.Content)
	if len(c) == 0 || c[0] == 'n' {
		return ""
	}
	if c[0] == '"' {
		var s string
		_ = json.Unmarshal(c, &s)
		return strings.TrimSpace(s)
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(c, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" && strings.TrimSpace(p.Text) != "" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(strings.TrimSpace(p.Text))
		}
	}
	return b.String()
}

// openAIError answers an error as OpenAI does ({"error":{"message","type",
// "code"}}), so that OpenAI SDKs report it; it carries higmem's code too.
func openAIError(w http.ResponseWriter, status int, code, format string, args ...any) error {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status == http.StatusUnauthorized:
		typ = "authentication_error"
	case status >= 500:
		typ = "server_error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": fmt.Sprintf(format, args...), "type": typ, "code": code, "param": nil}})
}

// chatError answers err (a classified apiError) in OpenAI's shape.
func chatError(w http.ResponseWriter, err error) error {
	ae := classify(err)
	return openAIError(w, ae.status, ae.code, "%s", ae.msg)
}

// chatUser returns the user of a chat request: the request's user field if
// the key may use it, else the key's single user ("default", or the
// server's default user, without auth).
func (s *Server) chatUser(p *principal, field string) (string, error) {
	field = strings.TrimSpace(field)
	switch {
	case field != "" && p.allows(field):
		return field, nil
	case s.opts.NoAuth:
		if s.opts.DefaultSpace.UserID != "" {
			return s.opts.DefaultSpace.UserID, nil
		}
		return "default", nil
	case !p.all && len(p.users) == 1:
		return p.users[0], nil
	case field != "":
		return "", errorf(http.StatusForbidden, api.CodeForbidden, "API key %q may not use user %q", p.name, field)
	}
	return "", badRequest("the API key %q may use several users: name one in the request's \"user\" field", p.name)
}

// conversationID is the request's conversation header, or an id derived
// from the conversation's first user message (stable when the history is
// resent).
func conversationID(r *http.Request, msgs []chatMessage) (string, error) {
	if c := strings.TrimSpace(r.Header.Get(api.HeaderConversation)); c != "" {
		return c, checkID(api.HeaderConversation, c)
	}
	h := sha256.New()
	for _, m := range msgs {
		if m.Role == "user" {
			h.Write([]byte(m.text()))
			break
		}
	}
	return "chat-" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// turnID is the stable id of the message at position pos (counting user
// and assistant messages from the conversation's start) of conversation
// conv.
func turnID(conv string, pos int, role, text string) string {
	c := sha256.Sum256([]byte(conv))
	t := sha256.Sum256([]byte(role + "\x00" + text))
	return "chat-" + hex.EncodeToString(c[:6]) + "-" + strconv.Itoa(pos) + "-" + hex.EncodeToString(t[:6])
}

// chatItem is a user or assistant message of a request at its position
// among the request's user and assistant messages.
type chatItem struct {
	pos              int
	role, name, text string
	meta             map[string]string
}

// chatItems returns the user and assistant messages of a request with
// text, and the position the reply takes.
func chatItems(msgs []chatMessage) ([]chatItem, int) {
	var out []chatItem
	pos := 0
	for _, m := range msgs {
		if m.Role != "user" && m.Role != "assistant" {
			continue
		}
		if txt := m.text(); txt != "" {
			out = append(out, chatItem{pos: pos, role: m.Role, name: m.Name, text: txt})
		}
		pos++
	}
	return out, pos
}

// Metadata keys of chat turns.
const (
	metaSource   = "source"   // "chat"
	metaRole     = "role"     // "user" or "assistant"
	metaPosition = "position" // the message's position in the conversation
)

// alignOffset returns where a request's messages start in the stored
// conversation: 0 when the client resent the whole history, more when it
// dropped its oldest messages (a context window). stored maps positions to
// the messageKey of the turns already stored. It is the smallest offset at which
// every message the request shares with the stored conversation matches,
// the first one included; 0 when there is none (an edited history starts
// anew where it differs).
func alignOffset(items []chatItem, stored map[int]string) int {
	if len(items) == 0 || len(stored) == 0 {
		return 0
	}
	maxPos := 0
	for p := range stored {
		maxPos = max(maxPos, p)
	}
	for o := 0; o <= maxPos; o++ {
		first, ok := stored[o+items[0].pos]
		if !ok || first != messageKey(items[0].role, items[0].text) {
			continue
		}
		consistent := true
		for _, it := range items[1:] {
			if v, ok := stored[o+it.pos]; ok && v != messageKey(it.role, it.text) {
				consistent = false
				break
			}
		}
		if consistent {
			return o
		}
	}
	return 0
}

// Metadata keys of the turns of a message split into several (see
// chatTurnInputs).
const (
	metaPart    = "part"    // "2/5": the second of five turns of one message
	metaMessage = "message" // the message's key (messageKey) without its role
)

// messageKey identifies a message's role and text when aligning a request
// with the stored conversation: the role and a hash of the text.
func messageKey(role, text string) string {
	h := sha256.Sum256([]byte(text))
	return role + "\x00" + hex.EncodeToString(h[:12])
}

// chatTurnInputs is the turn of a chat message, or, when its text is over
// maxBytes (the memory's turn cap), its consecutive turns, each within the
// cap and cut at a paragraph, line, sentence or word break, of the same
// speaker and session. Their ids are the message's id with "-1", "-2"...,
// so that a resent history stays idempotent, and their metadata say which
// part of which message each is.
func chatTurnInputs(conv string, sp higmem.Space, it chatItem, pos int, now time.Time, maxBytes int) []higmem.TurnInput {
	speaker := it.name
	if speaker == "" {
		speaker = "assistant"
		if it.role == "user" {
			speaker = sp.UserID
		}
	}
	meta := func() map[string]string {
		m := map[string]string{metaSource: "chat", metaRole: it.role, metaPosition: strconv.Itoa(pos)}
		for k, v := range it.meta {
			m[k] = v
		}
		return m
	}
	id := turnID(conv, pos, it.role, it.text)
	parts := splitText(it.text, maxBytes)
	if len(parts) == 1 {
		return []higmem.TurnInput{{ID: id, SessionID: conv, Speaker: speaker, Text: it.text, OccurredAt: now, Metadata: meta()}}
	}
	_, key, _ := strings.Cut(messageKey(it.role, it.text), "\x00")
	var out []higmem.TurnInput
	for i, p := range parts {
		if strings.TrimSpace(p) == "" {
			continue
		}
		m := meta()
		m[metaPart] = fmt.Sprintf("%d/%d", i+1, len(parts))
		m[metaMessage] = key
		out = append(out, higmem.TurnInput{ID: id + "-" + strconv.Itoa(i+1), SessionID: conv, Speaker: speaker,
			Text: p, OccurredAt: now, Metadata: m})
	}
	return out
}

// valueSpan returns where the value of a top-level key of a JSON object
// starts and ends in body (the last one, as encoding/json decodes it).
func valueSpan(body []byte, key string) (start, end int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, 0, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return 0, 0, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, 0, false
		}
		if t == key {
			end = int(dec.InputOffset())
			start, ok = end-len(raw), true
		}
	}
	return start, end, ok
}

// spliceMessages returns body with the system message sys inserted after
// the leading system and developer messages; everything else, unknown
// fields and tools included, is kept byte for byte.
func spliceMessages(body []byte, raw []json.RawMessage, msgs []chatMessage, sys string) ([]byte, error) {
	start, end, ok := valueSpan(body, "messages")
	if !ok {
		return nil, errors.New("messages not found")
	}
	at := 0
	for at < len(msgs) && (msgs[at].Role == "system" || msgs[at].Role == "developer") {
		at++
	}
	m, err := json.Marshal(map[string]string{"role": "system", "content": sys})
	if err != nil {
		return nil, err
	}
	elems := make([][]byte, 0, len(raw)+1)
	for _, r := range raw[:at] {
		elems = append(elems, r)
	}
	elems = append(elems, m)
	for _, r := range raw[at:] {
		elems = append(elems, r)
	}
	var b bytes.Buffer
	b.Grow(len(body) + len(m) + 2)
	b.Write(body[:start])
	b.WriteByte('[')
	b.Write(bytes.Join(elems, []byte{','}))
	b.WriteByte(']')
	b.Write(body[end:])
	return b.Bytes(), nil
}

// withModel adds "model" to a request that names none.
func withModel(body []byte, model string) []byte {
	i := bytes.IndexByte(body, '{')
	q, _ := json.Marshal(model)
	out := make([]byte, 0, len(body)+len(q)+10)
	out = append(out, body[:i+1]...)
	out = append(out, `"model":`...)
	out = append(out, q...)
	rest := bytes.TrimSpace(body[i+1:])
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, body[i+1:]...)
}

// memoryMessage renders evidence as the system message added to a chat
// request, within about tokens tokens (four bytes a token): the most
// relevant lines that fit, oldest first. Every piece of stored text in it
// (user and agent ids, dates, speakers, turn ids, texts) goes through
// memoryText, so that no stored text can close the block or write a tag.
func memoryMessage(sp higmem.Space, ev []higmem.Evidence, tokens int) (string, int) {
	var b strings.Builder
	b.WriteString("<higmem-memory>\n")
	fmt.Fprintf(&b, "Memory of earlier conversations with user %q", memoryText(sp.UserID))
	if sp.AgentID != "" {
		fmt.Fprintf(&b, " (agent %q)", memoryText(sp.AgentID))
	}
	b.WriteString(", retrieved by higmem for the latest message, oldest first. Each line is [date] speaker (turn id): what was said. " +
		"Use it when it is relevant; it may be incomplete or out of date, and the conversation itself takes precedence.\n")
	const end = "</higmem-memory>"
	budget := tokens*4 - b.Len() - len(end)
	lines := make([]string, len(ev))
	for i, e := range ev {
		date := e.Date
		if date == "" && !e.Turn.OccurredAt.IsZero() {
			date = e.Turn.OccurredAt.UTC().Format("2006-01-02 15:04 UTC")
		}
		if date == "" {
			date = "date unknown"
		}
		lines[i] = fmt.Sprintf("[%s] %s (%s): %s\n", memoryText(date), memoryText(e.Turn.Speaker), memoryText(e.Turn.ID), memoryText(e.Turn.Text))
	}
	// The most relevant first, within the budget (the first always).
	order := make([]int, len(ev))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ev[b].Score, ev[a].Score) })
	keep := make([]bool, len(ev))
	n, used := 0, 0
	for _, i := range order {
		if used+len(lines[i]) > budget && n > 0 {
			continue
		}
		keep[i] = true
		used += len(lines[i])
		n++
	}
	for i, l := range lines {
		if keep[i] {
			b.WriteString(l)
		}
	}
	b.WriteString(end)
	return b.String(), n
}

// retrieveForChat returns the evidence for question worth injecting, or an
// error when memory fails or takes longer than MemoryTimeout. Filler turns
// ("OK, noted.", see isFiller) are kept out of retrieval, so they take no
// evidence slot, and evidence that does not clear the relevance floor
// (chatRelevant) is not returned: a message unrelated to anything
// remembered gets no memory.
func (s *Server) retrieveForChat(ctx context.Context, sp higmem.Space, question string) ([]higmem.Evidence, error) {
	ctx, cancel := context.WithTimeout(ctx, s.chat.opts.MemoryTimeout)
	defer cancel()
	if len(question) > higmem.DefaultMaxQuestionBytes {
		question = question[len(question)-higmem.DefaultMaxQuestionBytes:]
	}
	type result struct {
		res *higmem.Result
		err error
	}
	ch := make(chan result, 1)
	go func() {
		res, err := s.mem.Retrieve(ctx, sp, question, higmem.RetrieveOptions{EvidenceTokens: s.chat.opts.EvidenceTokens,
			Filter: func(t higmem.Turn) bool { return !isFiller(t.Text) || len(t.Attachments) > 0 }})
		ch <- result{res, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		s.local.observe(r.res.Trace.Calls)
		return s.chatRelevant(ctx, question, r.res.Evidence), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("retrieval took longer than %s", s.chat.opts.MemoryTimeout)
	}
}

// hopHeaders are not copied from the upstream's response.
var hopHeaders = []string{"Connection", "Keep-Alive", "Transfer-Encoding", "Upgrade", "Trailer", "Proxy-Connection", "Set-Cookie"}

func copyHeaders(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = append([]string(nil), vs...)
	}
	for _, k := range hopHeaders {
		dst.Del(k)
	}
}

// upstream sends a request to the upstream's path with the upstream key.
func (s *Server) upstream(ctx context.Context, method, path string, body []byte, accept string) (*http.Response, error) {
	u := strings.TrimSuffix(s.chat.opts.UpstreamURL, "/") + path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if k := s.chat.opts.UpstreamKey; k != "" {
		req.Header.Set("Authorization", "Bearer "+k)
	}
	return s.chat.opts.Client.Do(req)
}

// chatCompletions serves POST /v1/chat/completions.
func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) error {
	if s.chat.opts.UpstreamURL == "" {
		return openAIError(w, http.StatusNotImplemented, api.CodeChatUnavailable,
			"no upstream model is configured for chat: start higmem serve with --chat-upstream URL (or HIGMEM_ANSWER_BASE_URL)")
	}
	p := principalFrom(r.Context())
	if ok, wait := s.chat.limiter.allow(p.name); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		return openAIError(w, http.StatusTooManyRequests, api.CodeRateLimited,
			"chat rate limit of API key %q exceeded (%g requests/s, bursts of %d); retry in %s",
			p.name, s.chat.opts.RateLimit, s.chat.opts.RateBurst, wait.Round(time.Millisecond))
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxUploadBytes))
	if err != nil {
		return chatError(w, err)
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return openAIError(w, http.StatusBadRequest, api.CodeInvalidJSON, "the body is not a chat completion request: %v", err)
	}
	if len(req.Messages) == 0 {
		return openAIError(w, http.StatusBadRequest, api.CodeInvalidRequest, "messages: want a non-empty array")
	}
	msgs := make([]chatMessage, len(req.Messages))
	for i, m := range req.Messages {
		if err := json.Unmarshal(m, &msgs[i]); err != nil {
			return openAIError(w, http.StatusBadRequest, api.CodeInvalidRequest, "messages[%d]: %v", i, err)
		}
	}
	user, err := s.chatUser(p, req.User)
	if err != nil {
		return chatError(w, err)
	}
	sp, err := validSpace(user, strings.TrimSpace(r.Header.Get(api.HeaderAgent)))
	if err != nil {
		return chatError(w, err)
	}
	conv, err := conversationID(r, msgs)
	if err != nil {
		return chatError(w, err)
	}
	useMemory := !strings.EqualFold(strings.TrimSpace(r.Header.Get(api.HeaderMemory)), "off")
	if req.Model == "" && s.chat.opts.Model != "" {
		body = withModel(body, s.chat.opts.Model)
		req.Model = s.chat.opts.Model
	}
	question := ""
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			question = msgs[i].text()
			break
		}
	}
	h := w.Header()
	if useMemory {
		h.Set(api.HeaderConversationID, conv)
		if why := s.chat.lastFailure(convKey(sp, conv)); why != "" {
			h.Add(api.HeaderWarning, "earlier messages of this conversation were not stored: "+why)
		}
		nev := 0
		if question != "" {
			ev, err := s.retrieveForChat(r.Context(), sp, question)
			switch {
			case err != nil:
				s.log.Warn("chat: going on without memory", "space", sp.String(), "err", err)
				h.Add(api.HeaderWarning, "memory unavailable, answered without it: "+oneLine(PublicMessage(err)))
			case len(ev) > 0:
				sys, n := memoryMessage(sp, ev, s.chat.opts.EvidenceTokens)
				if out, err := spliceMessages(body, req.Messages, msgs, sys); err == nil {
					body, nev = out, n
				} else {
					h.Add(api.HeaderWarning, "memory not added: "+err.Error())
				}
			}
		}
		h.Set(api.HeaderEvidence, strconv.Itoa(nev))
	}
	// The stores after the reply are writes: Shutdown waits for them.
	if useMemory {
		if !s.begin() {
			return chatError(w, errShuttingDown)
		}
		s.chat.stores.Add(1)
	}
	stored := false
	defer func() {
		if useMemory && !stored {
			s.chat.stores.Done()
			s.end()
		}
	}()
	ctx, cancel := context.WithTimeout(r.Context(), s.chat.opts.UpstreamTimeout)
	defer cancel()
	stop := context.AfterFunc(s.base, cancel)
	defer stop()
	accept := ""
	if req.Stream {
		accept = "text/event-stream"
	}
	resp, err := s.upstream(ctx, http.MethodPost, "/chat/completions", body, accept)
	if err != nil {
		if r.Context().Err() != nil {
			// The client left before the upstream answered: keep its message.
			stored = true
			s.storeChat(r.Context(), sp, conv, msgs, req.Model, nil)
			return nil
		}
		s.log.Warn("chat: upstream unreachable", "err", err)
		return openAIError(w, http.StatusBadGateway, api.CodeUpstream, "upstream model unreachable: %s", oneLine(err.Error()))
	}
	defer resp.Body.Close()
	copyHeaders(h, resp.Header)
	if resp.StatusCode != http.StatusOK {
		// Upstream errors pass through as they are; nothing is stored (the
		// client will resend the message).
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		return nil
	}
	var rep *chatReply
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		rep = relayStream(w, resp.Body)
	} else {
		rep = relayJSON(w, resp.Body)
	}
	if useMemory {
		stored = true
		s.storeChat(r.Context(), sp, conv, msgs, req.Model, rep)
	}
	return nil
}

// chatReply is the assistant message of an upstream reply.
type chatReply struct {
	text     string
	complete bool // the whole reply was read
}

// relayJSON copies a non-streamed reply and returns its message.
func relayJSON(w http.ResponseWriter, body io.Reader) *chatReply {
	data, err := io.ReadAll(body)
	if err == nil {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	} else {
		w.Header().Del("Content-Length")
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
	var doc struct {
		Choices []struct {
			Message chatMessage `json:"message"`
		} `json:"choices"`
	}
	if err != nil || json.Unmarshal(data, &doc) != nil || len(doc.Choices) == 0 {
		return &chatReply{complete: err == nil}
	}
	return &chatReply{text: doc.Choices[0].Message.text(), complete: true}
}

// relayStream copies a stream of server-sent events line by line, flushing
// each, and gathers the first choice's content. It stops when the upstream
// ends or fails, or when the client goes away (which ends the upstream
// request too).
func relayStream(w http.ResponseWriter, body io.Reader) *chatReply {
	w.Header().Del("Content-Length")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	br := bufio.NewReaderSize(body, 64<<10)
	var text strings.Builder
	rep := &chatReply{}
	clientGone := false
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && !clientGone {
			if _, werr := w.Write(line); werr != nil {
				clientGone = true
			} else if len(bytes.TrimSpace(line)) == 0 {
				clientGone = rc.Flush() != nil
			}
		}
		if data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:")); ok {
			data = bytes.TrimSpace(data)
			if bytes.Equal(data, []byte("[DONE]")) {
				rep.complete = true
			} else {
				var chunk struct {
					Choices []struct {
						Index int `json:"index"`
						Delta struct {
							Content *string `json:"content"`
						} `json:"delta"`
					} `json:"choices"`
				}
				if json.Unmarshal(data, &chunk) == nil {
					for _, c := range chunk.Choices {
						if c.Index == 0 && c.Delta.Content != nil {
							text.WriteString(*c.Delta.Content)
						}
					}
				}
			}
		}
		if err != nil || clientGone {
			if !clientGone {
				_ = rc.Flush()
			}
			break
		}
	}
	rep.text = strings.TrimSpace(text.String())
	return rep
}

// storeChat stores, in the background and on a context detached from the
// request, the request's user and assistant messages not stored yet and
// the reply (nil: none came). The caller has called s.begin and
// s.chat.stores.Add(1); the store ends both. A failure is logged, and said
// in the X-Higmem-Warning of the conversation's next request.
func (s *Server) storeChat(ctx context.Context, sp higmem.Space, conv string, msgs []chatMessage, model string, rep *chatReply) {
	items, pos := chatItems(msgs)
	if rep != nil && rep.text != "" {
		it := chatItem{pos: pos, role: "assistant", text: rep.text, meta: map[string]string{}}
		if model != "" {
			it.meta["model"] = model
		}
		if !rep.complete {
			it.meta["partial"] = "true"
		}
		items = append(items, it)
	}
	wctx, cancel := s.writeCtx(ctx)
	go func() {
		defer s.chat.stores.Done()
		defer s.end()
		defer cancel()
		err := s.addChatTurns(wctx, sp, conv, items)
		if err != nil {
			s.log.Error("chat: storing turns failed", "space", sp.String(), "conversation", conv, "err", err)
		}
		s.chat.storeFailed(convKey(sp, conv), err)
	}()
}

// addChatTurns adds the messages of a conversation not stored yet, at
// their positions in the stored conversation. A message over the memory's
// turn cap is stored as several turns (chatTurnInputs). When the memory
// refuses the batch for one message (invalid, or an id holding another
// turn), the messages are added one by one, so that one bad message does
// not keep the others, or the rest of the conversation, out of memory; the
// error names what was not stored.
func (s *Server) addChatTurns(ctx context.Context, sp higmem.Space, conv string, items []chatItem) error {
	if len(items) == 0 {
		return nil
	}
	h := fnv.New32a()
	h.Write([]byte(convKey(sp, conv)))
	mu := &s.chat.stripes[h.Sum32()%uint32(len(s.chat.stripes))]
	mu.Lock()
	defer mu.Unlock()
	old, err := s.mem.List(ctx, sp, higmem.ListOptions{SessionID: conv})
	if err != nil {
		return err
	}
	stored := map[int]string{}
	ids := map[string]bool{}
	for _, t := range old {
		ids[t.ID] = true
		if t.Metadata[metaSource] != "chat" {
			continue
		}
		if p, err := strconv.Atoi(t.Metadata[metaPosition]); err == nil {
			if k := t.Metadata[metaMessage]; k != "" {
				stored[p] = t.Metadata[metaRole] + "\x00" + k
			} else {
				stored[p] = messageKey(t.Metadata[metaRole], t.Text)
			}
		}
	}
	off := alignOffset(items, stored)
	now := time.Now().UTC()
	opts := s.mem.Options()
	var groups [][]higmem.TurnInput // the new turns of each message
	n := 0
	for _, it := range items {
		var g []higmem.TurnInput
		for _, t := range chatTurnInputs(conv, sp, it, off+it.pos, now, opts.MaxTurnBytes) {
			if !ids[t.ID] {
				g = append(g, t)
				ids[t.ID] = true
			}
		}
		if len(g) > 0 {
			groups = append(groups, g)
			n += len(g)
		}
	}
	if n == 0 {
		return nil
	}
	all := make([]higmem.TurnInput, 0, n)
	for _, g := range groups {
		all = append(all, g...)
	}
	err = s.addBatches(ctx, sp, all, opts.MaxBatchTurns)
	if err == nil || !(errors.Is(err, higmem.ErrInvalidInput) || errors.Is(err, higmem.ErrConflict)) || len(groups) == 1 {
		return err
	}
	var errs []error
	for _, g := range groups {
		if err := s.addBatches(ctx, sp, g, opts.MaxBatchTurns); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// addBatches adds turns in batches of at most limit.
func (s *Server) addBatches(ctx context.Context, sp higmem.Space, turns []higmem.TurnInput, limit int) error {
	for len(turns) > 0 {
		n := min(len(turns), limit)
		res, err := s.mem.Add(ctx, sp, turns[:n])
		if res != nil {
			s.local.observe(res.Calls)
		}
		if err != nil {
			return err
		}
		turns = turns[n:]
	}
	return nil
}

// models serves GET /v1/models: the upstream's list, or the configured
// model when the upstream cannot list its own.
func (s *Server) models(w http.ResponseWriter, r *http.Request) error {
	if s.chat.opts.UpstreamURL == "" {
		return openAIError(w, http.StatusNotImplemented, api.CodeChatUnavailable,
			"no upstream model is configured for chat: start higmem serve with --chat-upstream URL (or HIGMEM_ANSWER_BASE_URL)")
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	resp, err := s.upstream(ctx, http.MethodGet, "/models", nil, "application/json")
	if err == nil {
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK || s.chat.opts.Model == "" {
			copyHeaders(w.Header(), resp.Header)
			w.WriteHeader(resp.StatusCode)
			_, _ = io.Copy(w, resp.Body)
			return nil
		}
	}
	if s.chat.opts.Model == "" {
		return openAIError(w, http.StatusBadGateway, api.CodeUpstream, "upstream model unreachable: %s", oneLine(err.Error()))
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{map[string]any{
		"id": s.chat.opts.Model, "object": "model", "created": 0, "owned_by": "higmem"}}})
	return nil
}

// oneLine makes s fit in a header.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

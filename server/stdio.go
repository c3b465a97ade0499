package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxMessageBytes caps one MCP message on stdio unless
// StdioTransport says otherwise (the SDK's own default).
const DefaultMaxMessageBytes = 16 << 20

// StdioTransport is an mcp.Transport for newline-delimited JSON-RPC on a
// reader and a writer, such as the stdin and stdout of `higmem mcp`. Unlike
// the SDK's IOTransport it survives bad input: a line that is not JSON is
// answered with a JSON-RPC parse error (-32700), one that is not a valid
// JSON-RPC 2.0 message for MCP (an array or batch, a wrong "jsonrpc"
// version, a bad or null id, a method that is not a string, a line over
// MaxMessageBytes) with an invalid request error (-32600), and the next line
// is read. Requests are answered one at a time, in the order they were
// read: a request is passed on only once every earlier one is answered, so
// that an add_memory piped before a search_memory is stored before the
// search runs (notifications, such as a cancellation, and responses to the
// server's own requests pass at once). And when the reader ends, every
// request already read is answered before the connection reports its end,
// so `printf '<initialize>\n<tools/list>\n' | higmem mcp` prints both
// responses.
type StdioTransport struct {
	Reader io.Reader
	Writer io.Writer
	// MaxMessageBytes caps one line (0: DefaultMaxMessageBytes).
	MaxMessageBytes int
	// Logger receives a warning for each malformed line (nil: none).
	Logger *slog.Logger
}

// Connect implements mcp.Transport. It must be called at most once.
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	max := t.MaxMessageBytes
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	log := t.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &stdioConn{
		w: t.Writer, log: log,
		in: make(chan jsonrpc.Message), done: make(chan struct{}), closed: make(chan struct{}),
		pending: map[jsonrpc.ID]int{}, idle: make(chan struct{}),
	}
	go c.readLoop(t.Reader, max)
	return c, nil
}

// stdioConn is the connection of a StdioTransport.
type stdioConn struct {
	w   io.Writer
	wmu sync.Mutex
	log *slog.Logger

	in      chan jsonrpc.Message // valid messages, to Read
	done    chan struct{}        // closed when the reader has ended
	readErr error                // why it ended, when not at EOF; set before done
	closed  chan struct{}
	once    sync.Once

	mu      sync.Mutex
	pending map[jsonrpc.ID]int // requests read and not yet answered
	idle    chan struct{}      // closed (and replaced) when pending empties
}

// waitIdle waits until every request read so far has been answered. It
// returns false when the connection is closed or ctx ends first.
func (c *stdioConn) waitIdle(ctx context.Context) bool {
	for {
		c.mu.Lock()
		n, idle := len(c.pending), c.idle
		c.mu.Unlock()
		if n == 0 {
			return true
		}
		select {
		case <-idle:
		case <-c.closed:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// readLoop reads lines until the reader ends or the connection closes.
func (c *stdioConn) readLoop(r io.Reader, max int) {
	defer close(c.done)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, tooLong, err := readLine(br, max)
		if tooLong {
			c.reject(nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: fmt.Sprintf("invalid request: message longer than %d bytes", max)})
		} else if len(bytes.TrimSpace(line)) > 0 && !c.handle(line) {
			return
		}
		if err != nil {
			if err != io.EOF {
				c.readErr = err
			}
			return
		}
	}
}

// readLine reads one line of at most max bytes (without its newline). A
// longer line is consumed and reported as tooLong.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+2 { // room for "\r\n"
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if !tooLong && len(bytes.TrimRight(line, "\r\n")) > max {
			tooLong, line = true, nil
		}
		return line, tooLong, err
	}
}

// handle passes one line on, or answers it with an error. A request, or a
// line answered with an error, waits until the requests before it are
// answered, so that answers come in the order of the lines. It returns
// false when the connection is closed.
func (c *stdioConn) handle(line []byte) bool {
	msg, id, rerr := parseMessage(line)
	req, isReq := msg.(*jsonrpc.Request)
	isCall := isReq && req.ID.IsValid()
	if (rerr != nil || isCall) && !c.waitIdle(context.Background()) {
		return false
	}
	if rerr != nil {
		c.reject(id, rerr)
		return true
	}
	if isCall {
		c.mu.Lock()
		c.pending[req.ID]++
		c.mu.Unlock()
	}
	select {
	case c.in <- msg:
		return true
	case <-c.closed:
		return false
	}
}

// reject answers a line that is not passed on.
func (c *stdioConn) reject(id json.RawMessage, e *jsonrpc.Error) {
	c.log.Warn("mcp stdio: refused a message", "code", e.Code, "error", e.Message)
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, e})
	if err != nil {
		return
	}
	_ = c.write(b)
}

func (c *stdioConn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(append(b, '\n'))
	return err
}

// parseMessage checks that line is one JSON-RPC 2.0 message as MCP allows
// it and decodes it. On failure it returns the error to answer with and the
// id to answer to (nil when the line has no usable id).
func parseMessage(line []byte) (jsonrpc.Message, json.RawMessage, *jsonrpc.Error) {
	invalid := func(id json.RawMessage, format string, args ...any) (jsonrpc.Message, json.RawMessage, *jsonrpc.Error) {
		return nil, id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + fmt.Sprintf(format, args...)}
	}
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		msg := "not JSON"
		if err != nil {
			msg = err.Error()
		}
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: " + msg}
	}
	switch line[0] {
	case '{':
	case '[':
		if bytes.Equal(bytes.Join(bytes.Fields(line), nil), []byte("[]")) {
			return invalid(nil, "empty batch")
		}
		return invalid(nil, "batches are not supported (MCP removed JSON-RPC batching); send one message per line")
	default:
		return invalid(nil, "a message must be a JSON object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return invalid(nil, "%v", err)
	}
	rawID, hasID := m["id"]
	var id json.RawMessage // the id to answer to, when usable
	if hasID {
		switch v := decodeAny(rawID).(type) {
		case string:
			id = rawID
		case float64:
			if v != float64(int64(v)) {
				return invalid(nil, "id must be a string or an integer, got %s", rawID)
			}
			id = rawID
		case nil:
		default:
			return invalid(nil, "id must be a string or an integer, got %s", rawID)
		}
	}
	if v, ok := m["jsonrpc"]; !ok || decodeAny(v) != "2.0" {
		got := "nothing"
		if ok {
			got = string(v)
		}
		return invalid(id, `"jsonrpc" must be "2.0", got %s`, got)
	}
	if method, ok := m["method"]; ok {
		if _, isStr := decodeAny(method).(string); !isStr {
			return invalid(id, `"method" must be a string, got %s`, method)
		}
		if hasID && id == nil {
			return invalid(nil, "a request id must not be null")
		}
		if p, ok := m["params"]; ok {
			if p = bytes.TrimSpace(p); len(p) == 0 || (p[0] != '{' && p[0] != '[') {
				return invalid(id, `"params" must be an object or an array, got %s`, p)
			}
		}
	} else {
		_, hasResult := m["result"]
		_, hasError := m["error"]
		if id == nil || hasResult == hasError {
			return invalid(id, `want a request ("method") or a response ("id" with "result" or "error")`)
		}
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return invalid(id, "%v", err)
	}
	return msg, id, nil
}

func decodeAny(raw json.RawMessage) any {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return struct{}{}
	}
	return v
}

// Read implements mcp.Connection. After the reader ends it waits until
// every request read has been answered, then reports io.EOF (or the read
// error).
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	}
	// Every request read is answered before the end is reported.
	if !c.waitIdle(ctx) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, io.EOF // closed
	}
	if c.readErr != nil {
		return nil, c.readErr
	}
	return nil, io.EOF
}

// Write implements mcp.Connection.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("server: mcp stdio: encoding a message: %w", err)
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return c.write(b)
	}
	// The request stays pending until its answer is written, under mu, so
	// that a client reusing the id once it has the answer is not refused.
	c.mu.Lock()
	err = c.write(b)
	if c.pending[resp.ID] > 1 {
		c.pending[resp.ID]--
	} else {
		delete(c.pending, resp.ID)
	}
	if len(c.pending) == 0 {
		close(c.idle)
		c.idle = make(chan struct{})
	}
	c.mu.Unlock()
	return err
}

// Close implements mcp.Connection.
func (c *stdioConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

// SessionID implements mcp.Connection.
func (c *stdioConn) SessionID() string { return "" }

// ServeStdio serves the MCP tools over r and w (newline-delimited JSON-RPC,
// see StdioTransport) until r ends and every request read has been answered,
// or ctx ends; then it waits, up to a minute, for writes still running, like
// Shutdown. Calls act with access to every user: the process that starts
// higmem on a pipe is trusted with its database.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	err := s.mcp.Run(ctx, &StdioTransport{Reader: r, Writer: w, Logger: s.log})
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if derr := s.Shutdown(sctx); derr != nil {
		return derr
	}
	if err == nil || ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/internal/jsonerr"
	"github.com/higmem/higmem/store"
)

// apiError is an error with the HTTP status and code it is reported with,
// and the error it stands for, if any.
type apiError struct {
	status int
	code   string
	msg    string
	err    error
}

func (e *apiError) Error() string { return e.msg }

func (e *apiError) Unwrap() error { return e.err }

// ErrorCode returns the HTTP status and api code err is reported with by
// the REST routes (500 and api.CodeInternal for unexpected failures).
func ErrorCode(err error) (status int, code string) {
	ae := classify(err)
	return ae.status, ae.code
}

func errorf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *apiError {
	return errorf(http.StatusBadRequest, api.CodeInvalidRequest, format, args...)
}

// classify maps an error to its status and code. Client mistakes are 4xx;
// only unexpected failures are 500.
func classify(err error) *apiError {
	var ae *apiError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &mbe):
		return errorf(http.StatusRequestEntityTooLarge, api.CodeBodyTooLarge, "request body exceeds %d bytes", mbe.Limit)
	case errors.Is(err, api.ErrBadFilter):
		return errorf(http.StatusBadRequest, api.CodeInvalidRequest, "%s", err)
	case errors.Is(err, higmem.ErrTooLarge):
		return errorf(http.StatusRequestEntityTooLarge, api.CodeTooLarge, "%s", PublicMessage(err))
	case errors.Is(err, higmem.ErrInvalidInput), errors.Is(err, store.ErrInvalid):
		return errorf(http.StatusBadRequest, api.CodeInvalidInput, "%s", PublicMessage(err))
	case errors.Is(err, higmem.ErrNotFound):
		// Lookups of one record say which (notFound); this is the rest,
		// without the storage layer's wording.
		return errorf(http.StatusNotFound, api.CodeNotFound, "not found")
	case errors.Is(err, higmem.ErrConflict):
		return errorf(http.StatusConflict, api.CodeConflict, "%s", PublicMessage(err))
	case errors.Is(err, higmem.ErrNoLLM):
		return errorf(http.StatusNotImplemented, api.CodeNoLLM, "%s", PublicMessage(err))
	case errors.Is(err, higmem.ErrClosed), errors.Is(err, store.ErrClosed):
		return errorf(http.StatusServiceUnavailable, api.CodeUnavailable, "memory is closed")
	case errors.Is(err, context.DeadlineExceeded):
		return errorf(http.StatusGatewayTimeout, api.CodeTimeout, "request timed out: %s", err)
	case errors.Is(err, context.Canceled):
		return errorf(http.StatusServiceUnavailable, api.CodeUnavailable, "request cancelled: %s", err)
	}
	return errorf(http.StatusInternalServerError, api.CodeInternal, "internal error (see the server log)")
}

// layers are the package prefixes of engine and storage errors ("sqlite:
// get turn: ..."), which say nothing to a client.
var layers = []string{"higmem", "store", "sqlite", "memstore", "postgres"}

// PublicMessage is an engine error's message without its package prefixes
// ("higmem:", "store:", "sqlite:"...), as the REST routes report client
// mistakes.
func PublicMessage(err error) string {
	parts := strings.Split(err.Error(), ": ")
	out := parts[:0]
	for _, p := range parts {
		if !slices.Contains(layers, p) {
			out = append(out, p)
		}
	}
	return strings.Join(out, ": ")
}

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}

// writeError writes the JSON error body for err.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae := classify(err)
	if ae.status >= 500 {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "status", ae.status, "err", err)
	} else {
		s.log.Debug("request rejected", "method", r.Method, "path", r.URL.Path, "status", ae.status, "err", err)
	}
	if ae.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="higmem"`)
	}
	writeJSON(w, ae.status, api.ErrorBody{Error: api.ErrorDetail{Code: ae.code, Message: ae.msg}})
}

// checkMediaType accepts an absent Content-Type or one of allowed.
func checkMediaType(r *http.Request, allowed ...string) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return errorf(http.StatusUnsupportedMediaType, api.CodeUnsupportedMediaType, "bad Content-Type %q: %v", ct, err)
	}
	for _, a := range allowed {
		if mt == a {
			return nil
		}
	}
	return errorf(http.StatusUnsupportedMediaType, api.CodeUnsupportedMediaType, "Content-Type %q not accepted (want %s)", mt, strings.Join(allowed, " or "))
}

// decodeJSON reads one JSON object from the body into v, at most limit
// bytes, rejecting unknown fields, wrong types and trailing data with
// messages that name the problem and where it is.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if err := checkMediaType(r, "application/json"); err != nil {
		return err
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return errorf(http.StatusBadRequest, api.CodeInvalidJSON, "empty body: want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err, data)
	}
	end := dec.InputOffset()
	if rest := bytes.TrimLeft(data[end:], " \t\r\n"); len(rest) > 0 {
		return errorf(http.StatusBadRequest, api.CodeInvalidJSON, "%s: trailing data after the JSON object",
			jsonerr.Position(data, int64(len(data)-len(rest))))
	}
	return nil
}

// jsonError turns a decoding error into a client error.
func jsonError(err error, data []byte) error {
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &syn):
		return errorf(http.StatusBadRequest, api.CodeInvalidJSON, "malformed JSON: %s", jsonerr.Describe(err, data))
	case errors.Is(err, api.ErrBadFilter):
		return badRequest("filters: %v", err)
	}
	return badRequest("%s", jsonerr.Describe(err, data))
}

// plainErrors turns the plain-text error answers of a handler that is not
// ours (the MCP SDK's http.Error calls: a wrong Accept header, an unknown
// session, a malformed payload) into the JSON error envelope; every other
// answer passes through unchanged, streams included.
func plainErrors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ew := &envelopeWriter{ResponseWriter: w}
		h.ServeHTTP(ew, r)
		ew.finish()
	})
}

// envelopeWriter buffers a plain-text error answer to rewrite it.
type envelopeWriter struct {
	http.ResponseWriter
	status int
	buf    *bytes.Buffer // non-nil while an error answer is buffered
}

func (w *envelopeWriter) WriteHeader(status int) {
	if w.status != 0 {
		return
	}
	w.status = status
	if status >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.buf = &bytes.Buffer{}
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *envelopeWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.buf != nil {
		return w.buf.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Flush lets streams through (an error answer is complete only at the end).
func (w *envelopeWriter) Flush() {
	if w.buf == nil {
		http.NewResponseController(w.ResponseWriter).Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *envelopeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *envelopeWriter) finish() {
	if w.buf == nil {
		return
	}
	msg := strings.TrimSpace(w.buf.String())
	if msg == "" {
		msg = http.StatusText(w.status)
	}
	code := api.CodeInvalidRequest
	switch {
	case w.status == http.StatusNotFound:
		code = api.CodeNotFound
	case w.status == http.StatusMethodNotAllowed:
		code = api.CodeMethodNotAllowed
	case w.status == http.StatusUnsupportedMediaType:
		code = api.CodeUnsupportedMediaType
	case w.status == http.StatusUnauthorized:
		code = api.CodeUnauthorized
	case w.status == http.StatusForbidden:
		code = api.CodeForbidden
	case w.status == http.StatusRequestEntityTooLarge:
		code = api.CodeBodyTooLarge
	case w.status >= 500:
		code = api.CodeInternal
	case strings.HasPrefix(msg, "malformed payload"):
		code = api.CodeInvalidJSON
	}
	h := w.Header()
	h.Del("Content-Length")
	h.Del("X-Content-Type-Options")
	writeJSON(w.ResponseWriter, w.status, api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: "MCP: " + msg}})
}

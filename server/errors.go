package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/store"
)

// apiError is an error with the HTTP status and code it is reported with.
type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

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
	case errors.Is(err, higmem.ErrInvalidInput), errors.Is(err, store.ErrInvalid):
		return errorf(http.StatusBadRequest, api.CodeInvalidInput, "%s", err)
	case errors.Is(err, higmem.ErrNotFound):
		return errorf(http.StatusNotFound, api.CodeNotFound, "%s", err)
	case errors.Is(err, higmem.ErrConflict):
		return errorf(http.StatusConflict, api.CodeConflict, "%s", err)
	case errors.Is(err, higmem.ErrNoLLM):
		return errorf(http.StatusNotImplemented, api.CodeNoLLM, "%s", err)
	case errors.Is(err, higmem.ErrClosed), errors.Is(err, store.ErrClosed):
		return errorf(http.StatusServiceUnavailable, api.CodeUnavailable, "memory is closed")
	case errors.Is(err, context.DeadlineExceeded):
		return errorf(http.StatusGatewayTimeout, api.CodeTimeout, "request timed out: %s", err)
	case errors.Is(err, context.Canceled):
		return errorf(http.StatusServiceUnavailable, api.CodeUnavailable, "request cancelled: %s", err)
	}
	return errorf(http.StatusInternalServerError, api.CodeInternal, "internal error (see the server log)")
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
// messages that name the problem.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if err := checkMediaType(r, "application/json"); err != nil {
		return err
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return errorf(http.StatusBadRequest, api.CodeInvalidJSON, "trailing data after the JSON object")
	}
	return nil
}

// jsonError turns a decoding error into a client error.
func jsonError(err error) error {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
		mbe *http.MaxBytesError
	)
	switch {
	case errors.As(err, &mbe):
		return err
	case errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, api.CodeInvalidJSON, "empty body: want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errorf(http.StatusBadRequest, api.CodeInvalidJSON, "malformed JSON: unexpected end of body")
	case errors.As(err, &syn):
		return errorf(http.StatusBadRequest, api.CodeInvalidJSON, "malformed JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return badRequest("body: want a JSON object, got %s", typ.Value)
		}
		return badRequest("field %q: want %s, got %s", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, api.ErrBadFilter):
		return badRequest("filters: %v", err)
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return badRequest("%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return badRequest("invalid body: %v", err)
}

func jsonKind(k string) string {
	switch k {
	case "int", "int64", "int32", "uint", "uint64", "float64", "float32":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	}
	return k
}

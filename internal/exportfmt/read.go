package exportfmt

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/higmem/higmem/store"
)

// Records is what an export of a space holds.
type Records struct {
	Turns    []store.Turn
	Anns     []store.Annotation
	Events   []store.Event
	Links    []store.Link
	Profiles []store.ProfileRecord
}

// Read reads the records an export of sp holds from r.
func Read(ctx context.Context, r store.Reader, sp store.Space) (Records, error) {
	var recs Records
	var err error
	if recs.Turns, err = r.ListTurns(ctx, sp, store.TurnQuery{}); err != nil {
		return recs, err
	}
	if recs.Anns, err = r.ListAnnotations(ctx, sp, nil); err != nil {
		return recs, err
	}
	if recs.Events, err = r.ListEvents(ctx, sp); err != nil {
		return recs, err
	}
	if recs.Links, err = r.ListLinks(ctx, sp, nil); err != nil {
		return recs, err
	}
	recs.Profiles, err = r.ListProfileRecords(ctx, sp, "")
	return recs, err
}

// Encode writes recs, an export of sp, as JSON lines: a header line (the
// format's version, the space, the time of the export), then every turn,
// annotation, event, link and profile record.
func Encode(w io.Writer, sp store.Space, version int, now time.Time, recs Records) error {
	lines := []Line{{Kind: "header", Version: version, Space: &sp, ExportedAt: &now}}
	for i := range recs.Turns {
		lines = append(lines, Line{Kind: "turn", Turn: &recs.Turns[i]})
	}
	for i := range recs.Anns {
		lines = append(lines, Line{Kind: "annotation", Annotation: &recs.Anns[i]})
	}
	for i := range recs.Events {
		lines = append(lines, Line{Kind: "event", Event: &recs.Events[i]})
	}
	for i := range recs.Links {
		lines = append(lines, Line{Kind: "link", Link: &recs.Links[i]})
	}
	for i := range recs.Profiles {
		lines = append(lines, Line{Kind: "profile", Profile: &recs.Profiles[i]})
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return bw.Flush()
}

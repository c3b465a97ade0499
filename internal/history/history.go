// Package history writes the entries of a space's history: each change of
// a derived record (turn deleted, annotation, event or profile record made,
// updated, imported or deleted) with what it was before and after. It
// writes through a store transaction and never sees the engine.
package history

import (
	"context"
	"encoding/json"
	"time"

	"github.com/higmem/higmem/store"
)

// Append records in tx a change of a derived record of sp: its kind and
// id, the action and who did it, the record before and after (nil: none).
func Append(ctx context.Context, tx store.Tx, sp store.Space, kind, id, action, actor string, before, after any, at time.Time) error {
	c := store.Change{Kind: kind, ID: id, Action: action, Actor: actor, At: at}
	if before != nil {
		b, err := json.Marshal(before)
		if err != nil {
			return err
		}
		c.Before = b
	}
	if after != nil {
		b, err := json.Marshal(after)
		if err != nil {
			return err
		}
		c.After = b
	}
	return tx.AppendHistory(ctx, sp, c)
}

package sqlite

import (
	"context"
	"fmt"

	"github.com/higmem/higmem/store"
)

const qEmbedders = `SELECT DISTINCT embedder FROM vectors WHERE space_id = ` + spaceSub + ` AND kind = ? ORDER BY embedder`

// Embedders lists the embedders that made vectors of kind in sp, sorted;
// with ListVectors it enumerates every stored vector (higmem migrate uses
// it).
func (s *Store) Embedders(ctx context.Context, sp store.Space, kind store.VectorKind) ([]string, error) {
	return read(s, &sp, func(r reader) ([]string, error) { return r.Embedders(ctx, sp, kind) })
}

// Embedders is Store.Embedders inside the transaction.
func (t *tx) Embedders(ctx context.Context, sp store.Space, kind store.VectorKind) ([]string, error) {
	if err := t.check(sp); err != nil {
		return nil, err
	}
	return t.reader.Embedders(ctx, sp, kind)
}

func (r reader) Embedders(ctx context.Context, sp store.Space, kind store.VectorKind) ([]string, error) {
	rows, err := r.query(ctx, qEmbedders, sp.UserID, sp.AgentID, string(kind))
	es, err := collect(rows, err, func(sc scanner) (string, error) {
		var e string
		return e, sc.Scan(&e)
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: embedders: %w", err)
	}
	return es, nil
}

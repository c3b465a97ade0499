package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/higmem/higmem/store"
)

var _ store.Watcher = (*Store)(nil)

// notifyChannel is the LISTEN/NOTIFY channel of a schema's writes.
func notifyChannel(schema string) string { return "higmem_writes:" + schema }

// notifyPayload names a space in a notification: its user and agent ids
// separated by a unit separator (ids hold no control characters).
func notifyPayload(sp store.Space) string { return clean(sp.UserID) + "\x1f" + clean(sp.AgentID) }

// Watch implements store.Watcher with LISTEN on a connection of its own
// (not taken from the pool). Every Update that writes a space sends a
// NOTIFY on the schema's channel, delivered when it commits.
func (s *Store) Watch(ctx context.Context, changed func(store.Space)) error {
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return fmt.Errorf("postgres: watch: %w", store.ErrClosed)
	}
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("postgres: watch: connecting: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{notifyChannel(s.schema)}.Sanitize()); err != nil {
		return fmt.Errorf("postgres: watch: %w", err)
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("postgres: watch: %w", err)
		}
		user, agent, ok := strings.Cut(n.Payload, "\x1f")
		if !ok {
			continue
		}
		changed(store.Space{UserID: user, AgentID: agent})
	}
}

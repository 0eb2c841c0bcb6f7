package postgres

import "context"

// Exec runs a statement on the store's database (tests only).
func (s *Store) Exec(ctx context.Context, sql string, args ...any) error {
	_, err := s.pool.Exec(ctx, sql, args...)
	return err
}

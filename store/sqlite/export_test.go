package sqlite

// VersionCacheHits returns how many SpaceVersion calls s answered from its
// version cache (for tests).
func VersionCacheHits(s *Store) int64 {
	if s.vc == nil {
		return 0
	}
	return s.vc.hits.Load()
}

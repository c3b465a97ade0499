//go:build !unix

package sqlite

import "os"

// current reports whether the file at c's path is still the WAL index
// file c reads.
func (c *versionCache) current() bool {
	info, err := os.Stat(c.path)
	return err == nil && os.SameFile(info, c.info)
}

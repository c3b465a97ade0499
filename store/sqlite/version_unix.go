//go:build unix

package sqlite

import "syscall"

// current reports whether the WAL index file c reads is still linked in
// the file system: a file deleted, or replaced by a rename, has no link
// left.
func (c *versionCache) current() bool {
	var st syscall.Stat_t
	return syscall.Fstat(int(c.fd), &st) == nil && st.Nlink > 0
}

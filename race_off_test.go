//go:build !race

package higmem_test

// raceOn says the tests run under the race detector (everything is slower).
const raceOn = false

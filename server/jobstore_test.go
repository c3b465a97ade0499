package server_test

import (
	"testing"

	"github.com/higmem/higmem/server"
	"github.com/higmem/higmem/server/jobstest"
)

func TestMemoryJobStore(t *testing.T) {
	jobstest.Run(t, func(*testing.T) server.JobStore { return server.NewMemoryJobStore(0) })
}

// Command clientbench times calls of the Go client (package api) against a
// running higmem server, for python/tools/bench.py, which times the Python
// client on the same server and alternates the two.
//
//	clientbench -url http://127.0.0.1:PORT -key KEY -user alice -op stats -n 2000
//
// It prints the mean wall time per call in microseconds.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/higmem/higmem/api"
)

func main() {
	url := flag.String("url", "", "server base URL")
	key := flag.String("key", "", "API key")
	user := flag.String("user", "alice", "user id")
	op := flag.String("op", "stats", "stats or search")
	n := flag.Int("n", 1000, "calls")
	flag.Parse()
	ctx := context.Background()
	c := api.NewClient(*url, *key, &http.Client{})
	sc := api.Scope{UserID: *user}
	call := func() error {
		switch *op {
		case "stats":
			_, err := c.Stats(ctx, sc)
			return err
		case "search":
			_, err := c.Search(ctx, api.SearchRequest{UserID: *user, Question: "Where do I walk the dog?"})
			return err
		}
		return fmt.Errorf("unknown op %q", *op)
	}
	for range 20 { // warm the connection and the server
		if err := call(); err != nil {
			log.Fatal(err)
		}
	}
	start := time.Now()
	for range *n {
		if err := call(); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("%.1f\n", float64(time.Since(start).Microseconds())/float64(*n))
}

// go-semaphore: a target of the tuning set (tests/targets/: chokepoint's rules were tuned on these).
//
// Every request takes one of 12 slots of a channel semaphore and, holding it, makes a blocking
// HTTP GET to a downstream URL, then answers 200. The hidden limit is the semaphore: 12 calls in
// flight at once, whatever the number of clients (kind blocking-pool).
//
// Usage: go run . -port 0 -downstream http://127.0.0.1:9999/ [-pprof]
// With -pprof it also serves net/http/pprof under /debug/pprof/ on the same port.
// The first stdout line is "listening on 127.0.0.1:PORT".
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"
)

const slots = 12

func main() {
	port := flag.Int("port", 0, "TCP port to listen on (0: any free port)")
	downstream := flag.String("downstream", "", "URL the handler calls while holding a slot (required)")
	withPprof := flag.Bool("pprof", false, "also serve net/http/pprof under /debug/pprof/")
	flag.Parse()
	if *downstream == "" {
		fmt.Fprintln(os.Stderr, "go-semaphore: -downstream URL is required (e.g. a chokepoint mock)")
		os.Exit(2)
	}

	// The downstream client itself must not be a second, smaller limit: keep enough idle
	// connections for every slot (the default keeps 2 per host).
	client := &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns:        4 * slots,
			MaxIdleConnsPerHost: 4 * slots,
			IdleConnTimeout:     90 * time.Second,
		},
	}
	semaphore := make(chan struct{}, slots)

	mux := http.NewServeMux()
	if *withPprof {
		// pprof.Index serves every named profile, goroutine?debug=2 among them.
		mux.HandleFunc("/debug/pprof/", pprof.Index)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		semaphore <- struct{}{}
		defer func() { <-semaphore }()

		resp, err := client.Get(*downstream)
		if err != nil {
			http.Error(w, "downstream: "+err.Error(), http.StatusBadGateway)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintln(w, "ok")
	})

	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-semaphore: cannot listen on port %d: %v\n", *port, err)
		os.Exit(2)
	}
	fmt.Printf("listening on %s\n", listener.Addr().String())
	log.Fatal(http.Serve(listener, mux))
}

// go-limit-listener: a target built after the rule that reads the listen queue (issue 22), not
// tuned on.
//
// A plain net/http service behind golang.org/x/net/netutil.LimitListener, the x/net package's
// cap on the connections a listener accepts at once ("accepts at most n simultaneous
// connections from the provided Listener"): past N, Accept waits for a connection to close,
// and new connections wait in the kernel's listen queue (Go asks for net.core.somaxconn, 4096
// here). Clients keep their connections alive, so the first N clients are served again and
// again and the others are never answered. Each request calls a downstream URL and answers 200.
// The hidden limit is the cap: N connections served at once (kind connection-limit).
//
// Usage: go-limit-listener -port 0 -downstream http://127.0.0.1:9999/ [-limit 16] [-pprof]
// With -pprof it also serves net/http/pprof on a second port of its own (a cap on the service's
// listener would hold the profiler's requests too), as services usually do.
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

	"golang.org/x/net/netutil"
)

func main() {
	port := flag.Int("port", 0, "TCP port to listen on (0: any free port)")
	downstream := flag.String("downstream", "", "URL each request calls (required)")
	limit := flag.Int("limit", 16, "connections accepted at once (netutil.LimitListener)")
	withPprof := flag.Bool("pprof", false, "also serve net/http/pprof under /debug/pprof/ on a port of its own")
	flag.Parse()
	if *downstream == "" || *limit < 1 {
		fmt.Fprintln(os.Stderr, "go-limit-listener: -downstream URL is required and -limit must be at least 1")
		os.Exit(2)
	}

	// The downstream client must not be a second, smaller limit: an idle connection kept for
	// every connection the listener lets in (the default keeps 2 per host).
	client := &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns:        4 * *limit,
			MaxIdleConnsPerHost: 4 * *limit,
			IdleConnTimeout:     90 * time.Second,
		},
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		fmt.Fprintf(os.Stderr, "go-limit-listener: cannot listen on port %d: %v\n", *port, err)
		os.Exit(2)
	}
	fmt.Printf("listening on %s\n", listener.Addr().String())
	if *withPprof {
		profiler, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintf(os.Stderr, "go-limit-listener: cannot listen for pprof: %v\n", err)
			os.Exit(2)
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		go func() { log.Fatal(http.Serve(profiler, mux)) }()
	}
	log.Fatal(http.Serve(netutil.LimitListener(listener, *limit), handler))
}

// go-transport: a target of the tuning set (tests/targets/), built after the catalogue's entry
// for Go's net/http Transport (catalogue/pools.toml: frames `net/http.(*Transport).getConn`,
// `queueForDial`). Standard library only.
//
// Every request makes one `GET -downstream` through an http.Client whose Transport the service
// capped with `MaxConnsPerHost: N` (its default, 0, is no cap), then answers 200. The Transport
// dials no more than N connections to the host; a call that finds them all busy waits inside
// `(*Transport).getConn` for one to come back (transport.go: "MaxConnsPerHost optionally limits
// the total number of connections per host ... On limit violation, dials will block."). With
// N = 10 and a 100 ms downstream the truth by hand is 10 calls in flight, 100 req/s, kind
// blocking-pool 10.
//
// Usage: go-transport -port 0 -downstream URL [-max-conns-per-host 10] [-pprof]
//
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
)

func main() {
	port := flag.Int("port", 0, "TCP port to listen on (0: any free port)")
	downstream := flag.String("downstream", "", "URL every request calls (required)")
	perHost := flag.Int("max-conns-per-host", 10, "http.Transport's MaxConnsPerHost (0: no cap)")
	withPprof := flag.Bool("pprof", false, "also serve net/http/pprof under /debug/pprof/")
	flag.Parse()
	if *downstream == "" {
		fmt.Fprintln(os.Stderr, "go-transport: -downstream URL is required")
		os.Exit(2)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxConnsPerHost = *perHost
	transport.MaxIdleConnsPerHost = *perHost // keep them alive: the cap, not redials, is the limit
	client := &http.Client{Transport: transport}

	mux := http.NewServeMux()
	if *withPprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		request, err := http.NewRequestWithContext(r.Context(), http.MethodGet, *downstream, nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		answer, err := client.Do(request)
		if err != nil {
			http.Error(w, "downstream: "+err.Error(), http.StatusBadGateway)
			return
		}
		io.Copy(io.Discard, answer.Body)
		answer.Body.Close()
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "downstream said %d\n", answer.StatusCode)
	})

	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-transport: cannot listen on port %d: %v\n", *port, err)
		os.Exit(2)
	}
	fmt.Printf("listening on %s\n", listener.Addr().String())
	log.Fatal(http.Serve(listener, mux))
}

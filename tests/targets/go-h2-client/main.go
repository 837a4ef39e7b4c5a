// go-h2-client: a target built after the stream-cap rule (crates/diagnose/src/stream_cap.rs).
//
// A net/http server (a goroutine per connection) whose every request makes one GET to
// -downstream over cleartext HTTP/2 (prior knowledge) through ONE http.Transport, from Go's
// standard library alone. What that transport does when the server's
// SETTINGS_MAX_CONCURRENT_STREAMS is reached on its connection is a setting
// (net/http.HTTP2Config.StrictMaxConcurrentRequests; golang.org/x/net/http2's
// Transport.StrictMaxConcurrentStreams):
//   - false, the default: it opens another connection to the same host, so the cap limits
//     nothing (`go doc net/http.HTTP2Config`: "an additional connection will be opened if all
//     existing connections are at their limit");
//   - true (-strict): "new requests ... will block until an existing request completes", on the
//     one connection. Measured here (go1.26.8), it deadlocks instead once more requests than the
//     cap arrive at once: 16 clients against a cap of 8 got 40 answers, then none, against the
//     mock and against a Go h2c server alike, and golang.org/x/net/http2 v0.60.0's
//     StrictMaxConcurrentStreams did the same. Each request reserves a slot before it waits for
//     a stream, and the reservations count against the cap (golang/go#70809, open).
//
// Against `chokepoint mock --max-concurrent-streams 8` with a delay d, the truth by hand is no
// limit from the cap at the defaults; with -strict the service stops answering past the cap.
//
// Usage: go-h2-client -port 0 -downstream 127.0.0.1:9999 [-strict]
// The first stdout line is "listening on 127.0.0.1:PORT", printed after one warm-up call has
// opened the transport's first connection.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"
)

func main() {
	port := flag.Int("port", 0, "port to listen on (0: any free port)")
	downstream := flag.String("downstream", "", "HOST:PORT of the HTTP/2 server (cleartext)")
	strict := flag.Bool("strict", false, "wait for a stream at the server's cap instead of opening another connection")
	flag.Parse()
	protocols := new(http.Protocols)
	protocols.SetUnencryptedHTTP2(true) // h2c with prior knowledge, and no HTTP/1.1
	transport := &http.Transport{
		Protocols: protocols,
		HTTP2:     &http.HTTP2Config{StrictMaxConcurrentRequests: *strict},
	}
	client := &http.Client{Transport: transport, Timeout: 60 * time.Second}
	url := "http://" + *downstream + "/"
	call := func() error {
		response, err := client.Get(url)
		if err != nil {
			return err
		}
		defer response.Body.Close()
		if _, err := io.Copy(io.Discard, response.Body); err != nil {
			return err
		}
		if response.ProtoMajor != 2 {
			return fmt.Errorf("%s answered over %s, not HTTP/2", url, response.Proto)
		}
		return nil
	}
	if err := call(); err != nil { // opens the first connection
		log.Fatalf("warm-up call to %s: %v", url, err)
	}
	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", listener.Addr())
	handler := func(w http.ResponseWriter, r *http.Request) {
		if err := call(); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		io.WriteString(w, "ok\n")
	}
	log.Fatal(http.Serve(listener, http.HandlerFunc(handler)))
}

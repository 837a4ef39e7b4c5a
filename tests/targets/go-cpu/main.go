// go-cpu: a target of the tuning set (tests/targets/: chokepoint's rules were tuned on these).
//
// Every request hashes a 4 KiB buffer with SHA-256 in a loop, about 5 ms of CPU (the number of
// rounds is calibrated at start), then answers 200. No downstream, no lock, no pool: net/http
// serves each connection on its own goroutine and GOMAXPROCS is left at its default (every
// core), so the hidden limit is the CPU the process can get — the machine's cores, less what
// the load generator takes from them (kind cpu-bound).
//
// With -pprof it serves net/http/pprof's goroutine dumps too (bench/pprof-overhead.sh: what
// reading them costs a CPU-bound service).
//
// With -permits N (session 29) each request first takes one of N permits and holds it for
// -sleep, as a call to a downstream would, then does its work: a pool of N, N / (sleep + work)
// requests a second, which needs the CPU only for the work (20 permits, 50 ms, 2 ms: about 385
// req/s on 0.77 of a core). Built after the rule it tests (crates/diagnose busy.rs: a fall past
// the peak while other processes take the machine).
//
// Usage: go build -o /tmp/go-cpu . && /tmp/go-cpu -port 0 [-work 5ms] [-permits N -sleep 50ms] [-pprof]
// The first stdout line is "listening on 127.0.0.1:PORT".
package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"
)

const bufferSize = 4096

// hashRounds hashes the buffer `rounds` times, each round over the previous digest's effect.
func hashRounds(buffer []byte, rounds int) [sha256.Size]byte {
	var digest [sha256.Size]byte
	for i := 0; i < rounds; i++ {
		copy(buffer, digest[:])
		digest = sha256.Sum256(buffer)
	}
	return digest
}

// calibrate returns the rounds that cost `work` of CPU on one core. The fastest of several
// trials is kept: a busy machine can only slow a trial down.
func calibrate(work time.Duration) int {
	const trialRounds = 200
	buffer := make([]byte, bufferSize)
	best := time.Duration(1<<63 - 1)
	for i := 0; i < 9; i++ {
		started := time.Now()
		hashRounds(buffer, trialRounds)
		if elapsed := time.Since(started); elapsed < best {
			best = elapsed
		}
	}
	if best <= 0 {
		best = time.Nanosecond
	}
	rounds := int(float64(trialRounds) * float64(work) / float64(best))
	if rounds < 1 {
		rounds = 1
	}
	return rounds
}

func main() {
	port := flag.Int("port", 0, "TCP port to listen on (0: any free port)")
	work := flag.Duration("work", 5*time.Millisecond, "CPU time each request burns (> 0)")
	withPprof := flag.Bool("pprof", false, "serve net/http/pprof under /debug/pprof/")
	permits := flag.Int("permits", 0, "requests served at once, each holding a permit (0: no limit)")
	sleep := flag.Duration("sleep", 0, "time each request holds its permit before its work, as a downstream call would")
	flag.Parse()
	if *work <= 0 {
		fmt.Fprintf(os.Stderr, "go-cpu: -work must be a positive duration such as 5ms, not %v\n", *work)
		os.Exit(2)
	}
	if *permits < 0 || *sleep < 0 {
		fmt.Fprintf(os.Stderr, "go-cpu: -permits and -sleep cannot be negative (got %d and %v); 0 turns them off\n", *permits, *sleep)
		os.Exit(2)
	}
	rounds := calibrate(*work)
	var slots chan struct{}
	if *permits > 0 {
		slots = make(chan struct{}, *permits)
	}

	mux := http.NewServeMux()
	if *withPprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if slots != nil {
			slots <- struct{}{}
			defer func() { <-slots }()
		}
		time.Sleep(*sleep)
		buffer := make([]byte, bufferSize)
		digest := hashRounds(buffer, rounds)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "ok %x\n", digest[:4])
	})

	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-cpu: cannot listen on port %d: %v\n", *port, err)
		os.Exit(2)
	}
	fmt.Printf("listening on %s\n", listener.Addr().String())
	fmt.Fprintf(os.Stderr, "go-cpu: %d SHA-256 rounds of %d bytes per request (~%v of CPU)\n", rounds, bufferSize, *work)
	log.Fatal(http.Serve(listener, mux))
}

// go-spin-permits: built after the contention rules (crates/diagnose/src/thrash.rs and the
// collapse rule), to test them on a runtime they were not tuned on (Go, standard library only).
//
// net/http's server (a goroutine per connection, not the limit). Every request takes one of
// -permits permits from a hand-written semaphore: a compare-and-swap on a counter retried in a
// loop that calls runtime.Gosched() between tries, never parking (the spin-wait people write
// to "avoid the mutex"). Holding it, the request sleeps -hold (a call elsewhere) and does
// about -work of CPU, then answers 200. Up to -permits clients it is a pool of that size; past
// it every waiter stays runnable and burns a P, the holders woken from their sleep queue behind
// the spinners for a P, the CPU per request grows with the waiters and throughput falls
// (the USL's coherency cost). Truth: contention, a pool of -permits up to its peak.
//
// Usage: go build -o /tmp/gsp . && /tmp/gsp -port 0 [-permits 16] [-hold 20ms] [-work 300us]
// The first stdout line is "listening on 127.0.0.1:PORT".
package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync/atomic"
	"time"
)

type spinPermits struct {
	free int64
}

func (p *spinPermits) acquire() {
	for {
		n := atomic.LoadInt64(&p.free)
		if n > 0 && atomic.CompareAndSwapInt64(&p.free, n, n-1) {
			return
		}
		runtime.Gosched()
	}
}

func (p *spinPermits) release() { atomic.AddInt64(&p.free, 1) }

// burn does about `d` of CPU: SHA-256 rounds calibrated at start, the fastest of several
// trials (a busy machine only slows a trial down).
func calibrate() float64 {
	best := time.Duration(1 << 62)
	var sum [32]byte
	for trial := 0; trial < 7; trial++ {
		start := time.Now()
		for i := 0; i < 2000; i++ {
			sum = sha256.Sum256(sum[:])
		}
		if took := time.Since(start); took < best {
			best = took
		}
	}
	return 2000 / float64(best.Microseconds()+1)
}

func main() {
	port := flag.Int("port", 0, "port on 127.0.0.1 (0: any free port)")
	permits := flag.Int64("permits", 16, "permits of the spinning semaphore")
	hold := flag.Duration("hold", 20*time.Millisecond, "sleep while holding a permit")
	work := flag.Duration("work", 300*time.Microsecond, "CPU work while holding a permit")
	flag.Parse()
	if *permits < 1 {
		fmt.Fprintln(os.Stderr, "go-spin-permits: -permits must be at least 1")
		os.Exit(2)
	}
	rounds := int(calibrate() * float64(work.Microseconds()))
	sem := &spinPermits{free: *permits}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sem.acquire()
		time.Sleep(*hold)
		var sum [32]byte
		for i := 0; i < rounds; i++ {
			sum = sha256.Sum256(sum[:])
		}
		sem.release()
		fmt.Fprintf(w, "ok %x\n", sum[:2])
	})
	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-spin-permits: %v\n", err)
		os.Exit(2)
	}
	fmt.Printf("listening on %s\n", listener.Addr())
	if err := http.Serve(listener, handler); err != nil {
		fmt.Fprintf(os.Stderr, "go-spin-permits: %v\n", err)
		os.Exit(1)
	}
}

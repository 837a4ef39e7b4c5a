// go-pgxpool: a target of the tuning set (tests/targets/: chokepoint's rules were tuned on these),
// built after the catalogue's size_rule for pgxpool.
//
// Every request runs `SELECT pg_sleep(SLEEP)` through a pgx v5 pgxpool at its default size, then
// answers 200. The hidden limit is the pool: pgxpool.ParseConfig sets MaxConns to
// max(4, runtime.NumCPU()) when the connection string has no pool_max_conns, so on a 2-core
// machine 4 queries run at once and the other handlers wait in the pool's Acquire (kind
// blocking-pool, 4 connections × 100 ms = 40 req/s).
//
// Usage: go-pgxpool -port 0 -dsn postgres://postgres@127.0.0.1:5432/postgres [-sleep 0.1] [-pprof]
// With -pprof it also serves net/http/pprof under /debug/pprof/ on the same port.
// The first stdout line is "listening on 127.0.0.1:PORT"; the second says the pool's MaxConns.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"

	"github.com/jackc/pgx/v5/pgxpool"
)

func main() {
	port := flag.Int("port", 0, "TCP port to listen on (0: any free port)")
	dsn := flag.String("dsn", "", "PostgreSQL connection string, without pool_max_conns (required)")
	sleep := flag.Float64("sleep", 0.1, "seconds each request's query sleeps (pg_sleep)")
	withPprof := flag.Bool("pprof", false, "also serve net/http/pprof under /debug/pprof/")
	flag.Parse()
	if *dsn == "" {
		fmt.Fprintln(os.Stderr, "go-pgxpool: -dsn is required (e.g. postgres://postgres@127.0.0.1:5432/postgres)")
		os.Exit(2)
	}

	pool, err := pgxpool.New(context.Background(), *dsn)
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-pgxpool: cannot make the pool: %v\n", err)
		os.Exit(2)
	}
	defer pool.Close()

	mux := http.NewServeMux()
	if *withPprof {
		// pprof.Index serves every named profile, goroutine?debug=2 among them.
		mux.HandleFunc("/debug/pprof/", pprof.Index)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if _, err := pool.Exec(r.Context(), "SELECT pg_sleep($1)", *sleep); err != nil {
			http.Error(w, "database: "+err.Error(), http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintln(w, "ok")
	})

	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-pgxpool: cannot listen on port %d: %v\n", *port, err)
		os.Exit(2)
	}
	fmt.Printf("listening on %s\n", listener.Addr().String())
	fmt.Printf("pgxpool MaxConns %d (runtime.NumCPU() %d)\n", pool.Config().MaxConns, runtime.NumCPU())
	log.Fatal(http.Serve(listener, mux))
}

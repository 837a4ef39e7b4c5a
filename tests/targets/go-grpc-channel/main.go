// go-grpc-channel: a target built after the stream-cap rule (crates/diagnose/src/stream_cap.rs).
//
// A net/http server (a goroutine per connection) whose every request makes one unary gRPC call
// through ONE grpc-go ClientConn to -downstream, with no generated code: a codec that passes
// raw protobuf bytes. A ClientConn to one address keeps one HTTP/2 connection; grpc-go honours
// the server's SETTINGS_MAX_CONCURRENT_STREAMS and parks the calls past it until a stream
// closes (they queue inside the client, where the handlers' goroutines all wait alike).
// Against `chokepoint mock --max-concurrent-streams 8` with a delay d, the truth by hand is 8
// calls in flight, 8 / d req/s.
//
// Usage: go-grpc-channel -port 0 -downstream 127.0.0.1:9999 [-method /demo.Greeter/SayHello]
// The first stdout line is "listening on 127.0.0.1:PORT", printed after one warm-up call has
// opened the ClientConn's connection.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// rawCodec sends and receives protobuf messages as the bytes they already are.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "raw" }

func main() {
	port := flag.Int("port", 0, "port to listen on (0: any free port)")
	downstream := flag.String("downstream", "", "HOST:PORT of the gRPC server")
	method := flag.String("method", "/demo.Greeter/SayHello", "the unary method called")
	flag.Parse()
	conn, err := grpc.NewClient("passthrough:///"+*downstream,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	if err != nil {
		log.Fatalf("-downstream %s: %v", *downstream, err)
	}
	request := []byte("\x0a\x03bob")
	call := func(ctx context.Context) ([]byte, error) {
		ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		var reply []byte
		err := conn.Invoke(ctx, *method, &request, &reply)
		return reply, err
	}
	if _, err := call(context.Background()); err != nil { // opens the one connection
		log.Fatalf("warm-up call to %s%s: %v", *downstream, *method, err)
	}
	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", listener.Addr())
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reply, err := call(r.Context())
		if err != nil {
			http.Error(w, "downstream: "+err.Error(), http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(reply)
	})
	log.Fatal(http.Serve(listener, handler))
}

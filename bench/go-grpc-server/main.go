// go-grpc-server: a grpc-go server for bench/grpc-ratio.sh (SERVER=go), so that chokepoint and
// ghz are measured against a real gRPC server, not only the mock. It answers
// chokepoint.pool.v1.Pool/Work (tests/targets/py-grpc-pool/pool.proto) at once with a fixed
// WorkReply, without generated code: a codec that passes raw protobuf bytes and a hand-made
// ServiceDesc. grpc-go's defaults otherwise (its server's MaxConcurrentStreams is unlimited
// unless set, a goroutine per stream).
//
// Usage: go-grpc-server -port 0; the first stdout line is "listening on 127.0.0.1:PORT".
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"

	"google.golang.org/grpc"
)

// rawCodec receives and sends protobuf messages as the bytes they already are.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// workReply is WorkReply{message: "hi"}: field 1, length 2.
var workReply = []byte("\x0a\x02hi")

func work(_ any, ctx context.Context, decode func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	var request []byte
	if err := decode(&request); err != nil {
		return nil, err
	}
	reply := workReply
	return &reply, nil
}

func main() {
	port := flag.Int("port", 0, "port to listen on (0: any free port)")
	flag.Parse()
	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		log.Fatalf("-port %d: %v", *port, err)
	}
	server := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}))
	server.RegisterService(&grpc.ServiceDesc{
		ServiceName: "chokepoint.pool.v1.Pool",
		HandlerType: (*any)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "Work", Handler: work}},
		Metadata:    "pool.proto",
	}, struct{}{})
	fmt.Printf("listening on %s\n", listener.Addr())
	if err := server.Serve(listener); err != nil {
		log.Fatal(err)
	}
}
